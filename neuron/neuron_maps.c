/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* neuron_maps.c: which /dev/neuron mapping holds an address, as the kernel
 * says. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <hmr/fi_mr.h>

#include "base/config.h"
#include "base/hash.h"
#include "base/log.h"
#include "neuron/neuron_api.h"

/*
 * The Neuron driver maps device memory into a process only through mmap
 * of its character device /dev/neuron<N> (aws-neuron-driver
 * neuron_mmap.c; neuron_cdev.c names the node), so the kernel's list of
 * the process's mappings is the truth hmr classifies by.  It is asked
 * afresh on every question: nothing here is cached, so a tensor freed and
 * another mapped at its address is seen at once, with a new id.
 *
 * Two ways to ask:
 * - PROCMAP_QUERY (Linux 6.11): one ioctl on /proc/self/maps returns the
 *   mapping covering an address, its file offset, device, inode and
 *   name.  Cost: about a microsecond whatever the number of mappings.
 * - Older kernels: read /proc/self/maps up to the line holding the
 *   address.  Cost: proportional to the mappings below it.
 * HMR_NEURON_MAPS=read forces the second (tests of it; a kernel whose
 * ioctl misbehaves).
 *
 * The id of a mapping is a hash of (start, end, file offset, device,
 * inode): the driver's file offset is the memory's physical address, so a
 * new allocation at the same address gets a new id, and an unchanged id
 * means the same pages.
 */

/* include/uapi/linux/fs.h (Linux 6.11), declared here because Debian 12's
 * headers predate it; the ioctl number encodes this size (104). */
struct hmr_procmap_query {
	uint64_t size;
	uint64_t query_flags;
	uint64_t query_addr;
	uint64_t vma_start;
	uint64_t vma_end;
	uint64_t vma_flags;
	uint64_t vma_page_size;
	uint64_t vma_offset;
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint32_t vma_name_size;
	uint32_t build_id_size;
	uint64_t vma_name_addr;
	uint64_t build_id_addr;
};
_Static_assert(sizeof(struct hmr_procmap_query) == 104, "procmap_query");
#define HMR_PROCMAP_QUERY        _IOWR('f', 17, struct hmr_procmap_query)
#define HMR_PROCMAP_VMA_READABLE 0x01
#define HMR_PROCMAP_VMA_WRITABLE 0x02
#define HMR_PROCMAP_FILE_BACKED  0x20 /* only file mappings are found */
#define HMR_NEURON_MAP_NAME_MAX  64

static bool fast; /* Set once by hmr__neuron_maps_init, read-only after. */
/* Protects maps_fd and maps_pid.  The fd names the mm of the process that
 * opened it, so a fork child opens its own; the ioctls on it are
 * serialised, as the kernel's per-open state is not documented as safe to
 * share. */
static pthread_mutex_t maps_lock = PTHREAD_MUTEX_INITIALIZER;
static int maps_fd = -1;
static pid_t maps_pid;

long hmr__neuron_device_of_name(const char *name)
{
	const char *p = name;
	long n = 0;
	int digits = 0;

	if (strncmp(p, "/memfd:", 7) == 0)
		p += 7;
	if (strncmp(p, "/dev/neuron", 11) != 0)
		return -1;
	for (p += 11; isdigit((unsigned char)*p) && digits < 6; p++, digits++)
		n = n * 10 + (*p - '0');
	if (!digits || (*p && strcmp(p, " (deleted)") != 0))
		return -1;
	return n;
}

static uint64_t identity(uint64_t start, uint64_t end, uint64_t offset,
                         uint64_t dev, uint64_t inode)
{
	uint64_t h = hmr__hash64(start);

	h = hmr__hash64(h ^ end);
	h = hmr__hash64(h ^ offset);
	h = hmr__hash64(h ^ dev);
	h = hmr__hash64(h ^ inode);
	return h ? h : 1; /* 0 means "no id". */
}

/* maps_lock held: this process's fd, opened again after a fork. */
static int current_fd(void)
{
	pid_t pid = getpid();

	if (maps_fd >= 0 && maps_pid == pid)
		return maps_fd;
	if (maps_fd >= 0 && maps_pid != pid)
		close(maps_fd); /* The parent's copy, inherited. */
	maps_fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	maps_pid = pid;
	return maps_fd;
}

/* 1 found, 0 not a file mapping or not Neuron's, -FI_EAGAIN: ask by
 * reading instead. */
static int find_by_ioctl(uintptr_t addr, struct hmr_neuron_map *m)
{
	char name[HMR_NEURON_MAP_NAME_MAX];
	struct hmr_procmap_query q;
	long dev;
	int fd, r, err;

	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.query_flags = HMR_PROCMAP_FILE_BACKED;
	q.query_addr = addr;
	q.vma_name_addr = (uintptr_t)name;
	q.vma_name_size = sizeof(name);
	pthread_mutex_lock(&maps_lock);
	fd = current_fd();
	r = fd < 0 ? -1 : ioctl(fd, HMR_PROCMAP_QUERY, &q);
	err = errno;
	pthread_mutex_unlock(&maps_lock);
	if (r != 0) {
		/* No file mapping there; or a name longer than any of ours. */
		if (fd >= 0 && (err == ENOENT || err == ENAMETOOLONG))
			return 0;
		hmr_info("PROCMAP_QUERY %#lx: %s; reading /proc/self/maps",
		         (unsigned long)addr, strerror(err));
		return -FI_EAGAIN;
	}
	name[sizeof(name) - 1] = '\0';
	dev = q.vma_name_size ? hmr__neuron_device_of_name(name) : -1;
	if (dev < 0)
		return 0;
	m->start = (uintptr_t)q.vma_start;
	m->end = (uintptr_t)q.vma_end;
	m->device = (uint32_t)dev;
	m->readable = q.vma_flags & HMR_PROCMAP_VMA_READABLE;
	m->writable = q.vma_flags & HMR_PROCMAP_VMA_WRITABLE;
	m->id = identity(q.vma_start, q.vma_end, q.vma_offset,
	                 (uint64_t)q.dev_major << 32 | q.dev_minor, q.inode);
	return 1;
}

/* One line of /proc/self/maps: -1 below addr, 0 holds it, 1 above. */
static int parse_line(char *line, uintptr_t addr, struct hmr_neuron_map *m,
                      long *dev)
{
	unsigned long start, end, offset, inode;
	unsigned major, minor;
	char perms[5], *path;
	int n = 0;

	if (sscanf(line, "%lx-%lx %4s %lx %x:%x %lu %n", &start, &end, perms,
	           &offset, &major, &minor, &inode, &n) < 7 ||
	    !n)
		return -1; /* Not a mapping line: skip it. */
	if (addr < start)
		return 1;
	if (addr >= end)
		return -1;
	path = line + n;
	path[strcspn(path, "\n")] = '\0';
	*dev = hmr__neuron_device_of_name(path);
	m->start = start;
	m->end = end;
	m->device = *dev < 0 ? 0 : (uint32_t)*dev;
	m->readable = perms[0] == 'r';
	m->writable = perms[1] == 'w';
	m->id = identity(start, end, offset, (uint64_t)major << 32 | minor,
	                 inode);
	return 0;
}

/* Lines come sorted by address: stop at the first one past addr. */
static int find_by_reading(uintptr_t addr, struct hmr_neuron_map *m)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char *line = NULL;
	size_t cap = 0;
	long dev = -1;
	int where = 1;

	if (!f) {
		hmr_warn("/proc/self/maps: %s", strerror(errno));
		return -FI_EIO;
	}
	while (getline(&line, &cap, f) > 0) {
		where = parse_line(line, addr, m, &dev);
		if (where >= 0)
			break;
	}
	free(line);
	fclose(f);
	return where == 0 && dev >= 0;
}

int hmr__neuron_map_find(uintptr_t addr, struct hmr_neuron_map *m)
{
	int ret = -FI_EAGAIN;

	if (fast)
		ret = find_by_ioctl(addr, m);
	return ret == -FI_EAGAIN ? find_by_reading(addr, m) : ret;
}

bool hmr__neuron_maps_fast(void)
{
	return fast;
}

HMR_CONFIG_VAR(HMR_NEURON_MAPS, "auto",
               "how Neuron mappings are found: auto (the PROCMAP_QUERY "
               "ioctl where the kernel has it), read (/proc/self/maps)");

/* A question about this very code's mapping tells whether the kernel
 * answers PROCMAP_QUERY at all (ENOTTY before 6.11). */
void hmr__neuron_maps_init(void)
{
	const char *mode = hmr__config_get("HMR_NEURON_MAPS", NULL);
	struct hmr_procmap_query q;
	int fd;

	if (mode && strcmp(mode, "read") == 0) {
		hmr_info("neuron: HMR_NEURON_MAPS=read: reading "
		         "/proc/self/maps");
		return;
	}
	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.query_addr = (uintptr_t)&hmr__neuron_maps_init;
	pthread_mutex_lock(&maps_lock);
	fd = current_fd();
	fast = fd >= 0 && ioctl(fd, HMR_PROCMAP_QUERY, &q) == 0;
	pthread_mutex_unlock(&maps_lock);
	hmr_info("neuron: mappings asked by %s",
	         fast ? "PROCMAP_QUERY" : "reading /proc/self/maps");
}

void hmr__neuron_maps_fini(void)
{
	pthread_mutex_lock(&maps_lock);
	if (maps_fd >= 0 && maps_pid == getpid())
		close(maps_fd);
	maps_fd = -1;
	pthread_mutex_unlock(&maps_lock);
}
