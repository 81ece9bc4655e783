/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* thunk_device.c: device nodes, HBM memfds and dma-buf export (the driver). */
#include "thunk.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * A device node is a memfd named "sim-synapseai:accel<N>" standing for
 * /dev/accel/accel<N>; like the compute node it is exclusive (a second
 * open of the same device fails with -EBUSY).  It is recognised by its
 * number and inode, so a node the program closed with plain close()
 * (and whose number was reused) is torn down at the next open.
 *
 * dma-buf export (hlthunk_device_mapped_memory_export_dmabuf_fd)
 *   The kernel (drivers/accel/habanalabs/common/memory.c,
 *   export_dmabuf_from_addr) wants addr to be the START of a mapped
 *   device-memory area, addr, size and offset page aligned, size > 0 and
 *   offset + size within the area; the dma-buf it makes is size bytes
 *   long and its byte 0 is the device byte at addr + offset.  hl-thunk
 *   refuses any flags but O_RDWR | O_CLOEXEC with -EINVAL.  The simulator
 *   checks the same (the only mapped area is the whole HBM, from
 *   globalHbmBaseAddress, once the runtime acquired the device), but this
 *   kernel cannot make a dma-buf: it returns a dup of the HBM memfd, so
 *   byte 0 of the fd is the byte at addr (the HBM base), not at
 *   addr + offset, and lseek(fd, 0, SEEK_END) gives the HBM size, not
 *   size.  A consumer that maps or imports the fd adds offset; exporting
 *   with offset 0 (and a size reaching the buffer's end) gives the same
 *   bytes at the same fd offsets on the simulator and on hardware.  With
 *   HMR_SIM_DMABUF=udmabuf (the test VM's importing rxe) the fd is a real
 *   dma-buf, a udmabuf of [offset, offset + size) of the HBM memfd: as
 *   on hardware, byte 0 is the byte at addr + offset and it is size
 *   bytes long (sim_dmabuf_fd).
 */

struct sim_dev {
	int fd;       /* open device node, -1 when closed */
	dev_t fd_dev; /* identity of fd */
	ino_t fd_ino;
	int hbm_fd;          /* memfd of the whole HBM */
	unsigned char *view; /* read/write shadow of the HBM */
	uint64_t base;       /* device address of HBM byte 0 */
	int hbm_mapped;      /* the runtime mapped HBM: export allowed */
};

/* Protects sim_dev[] and the window (the whole "driver" state). */
static pthread_mutex_t sim_drv_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sim_dev sim_dev[SIM_MAX_DEVICES];
static uint64_t sim_win_base; /* 0 until the windows are reserved */
static uint64_t sim_win_stride;

#define SIM_WIN_GUARD (1ULL << 30) /* unmapped gap after each HBM */

static void sim_busid(int module, char *buf, size_t len)
{
	snprintf(buf, len, "0000:%02x:00.0",
	         (0x19u + (unsigned)module) & 0xffu);
}

SIM_API int hmr_sim_synapseai__module_of_bus(const char *busid)
{
	const struct sim_config *cfg = sim_config();
	char name[16];

	for (int m = 0; busid && m < cfg->ndev; m++) {
		sim_busid(m, name, sizeof(name));
		if (strcasecmp(name, busid) == 0)
			return m;
	}
	return -1;
}

/* One PROT_NONE MAP_NORESERVE window holds every device's HBM address. */
static int sim_reserve_locked(void)
{
	uint64_t len;
	void *p;

	if (sim_win_base)
		return 0;
	sim_win_stride =
	        sim_round_up(sim_cfg.hbm_size, SIM_WIN_GUARD) + SIM_WIN_GUARD;
	len = (uint64_t)sim_cfg.ndev * sim_win_stride + (2ULL << 20);
	p = mmap(NULL, len, PROT_NONE,
	         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		hmr_sim_synapseai__log("cannot reserve %llu bytes: %s",
		                       (unsigned long long)len,
		                       strerror(errno));
		return -ENOMEM;
	}
	sim_win_base = sim_round_up((uint64_t)(uintptr_t)p, 2ULL << 20);
	for (int m = 0; m < sim_cfg.ndev; m++)
		sim_dev[m].base = sim_win_base + (uint64_t)m * sim_win_stride;
	return 0;
}

static int sim_same_file(int fd, dev_t dev, ino_t ino)
{
	struct stat st;

	return fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

/* Drops the device's memory; closes the node unless it is stale. */
static void sim_dev_teardown_locked(struct sim_dev *d, int close_node)
{
	mmap((void *)(uintptr_t)d->base, sim_cfg.hbm_size, PROT_NONE,
	     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
	munmap(d->view, sim_cfg.hbm_size);
	close(d->hbm_fd);
	if (close_node)
		close(d->fd);
	d->view = NULL;
	d->hbm_fd = -1;
	d->fd = -1;
	d->hbm_mapped = 0;
}

/* The open device whose node is fd, or NULL. */
static struct sim_dev *sim_find_locked(int fd)
{
	struct stat st;

	if (fd < 0 || fstat(fd, &st) != 0)
		return NULL;
	for (int m = 0; m < sim_cfg.ndev; m++) {
		struct sim_dev *d = &sim_dev[m];

		if (d->view && d->fd == fd && d->fd_dev == st.st_dev &&
		    d->fd_ino == st.st_ino)
			return d;
	}
	return NULL;
}

/* Memfd of the HBM, its shadow, and the device-address mapping. */
static int sim_hbm_create(int m, int *hbm_fd, unsigned char **view)
{
	uint64_t size = sim_cfg.hbm_size;
	int prot = sim_cfg.host_accessible ? PROT_READ | PROT_WRITE : PROT_NONE;
	char name[48];
	void *p;
	int rc;

	snprintf(name, sizeof(name), "sim-synapseai:hbm%d", m);
	/* Sealable, so that sim_dmabuf_fd can make udmabufs of it. */
	*hbm_fd = sim_memfd(name, (size_t)size);
	if (*hbm_fd < 0)
		return -errno;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE,
	         *hbm_fd, 0);
	if (p == MAP_FAILED)
		goto err_close;
	*view = p;
	p = mmap((void *)(uintptr_t)sim_dev[m].base, size, prot,
	         MAP_SHARED | MAP_FIXED | MAP_NORESERVE, *hbm_fd, 0);
	if (p == MAP_FAILED)
		goto err_unmap;
	return 0;

err_unmap:
	rc = -errno;
	munmap(*view, size);
	close(*hbm_fd);
	return rc;
err_close:
	rc = -errno;
	close(*hbm_fd);
	return rc;
}

static int sim_dev_open_locked(int m)
{
	struct sim_dev *d = &sim_dev[m];
	unsigned char *view = NULL;
	char name[48];
	struct stat st;
	int fd, hbm_fd, rc;

	if (d->view && !sim_same_file(d->fd, d->fd_dev, d->fd_ino))
		sim_dev_teardown_locked(d, 0);
	if (d->view)
		return -EBUSY;
	rc = sim_reserve_locked();
	if (rc)
		return rc;
	snprintf(name, sizeof(name), "sim-synapseai:accel%d", m);
	fd = memfd_create(name, MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0) {
		rc = -errno;
		goto err_close;
	}
	rc = sim_hbm_create(m, &hbm_fd, &view);
	if (rc)
		goto err_close;
	d->fd = fd;
	d->fd_dev = st.st_dev;
	d->fd_ino = st.st_ino;
	d->hbm_fd = hbm_fd;
	d->view = view;
	d->hbm_mapped = 0;
	return fd;

err_close:
	close(fd);
	return rc;
}

SIM_API int hmr_sim_synapseai__open(int module)
{
	int rc;

	if (module < 0 || module >= sim_config()->ndev)
		return -ENODEV;
	pthread_mutex_lock(&sim_drv_lock);
	rc = sim_dev_open_locked(module);
	pthread_mutex_unlock(&sim_drv_lock);
	return rc;
}

/* 0 if fd was a device node (now closed), -1 otherwise. */
SIM_API int hmr_sim_synapseai__close(int fd)
{
	struct sim_dev *d;

	pthread_mutex_lock(&sim_drv_lock);
	d = sim_find_locked(fd);
	if (d)
		sim_dev_teardown_locked(d, 1);
	pthread_mutex_unlock(&sim_drv_lock);
	return d ? 0 : -1;
}

/* The runtime maps all of HBM at acquire (Synapse's global_hbm pool). */
SIM_API int hmr_sim_synapseai__map_hbm(int fd, struct sim_hl_info *info)
{
	struct sim_dev *d;

	pthread_mutex_lock(&sim_drv_lock);
	d = sim_find_locked(fd);
	if (d) {
		d->hbm_mapped = 1;
		info->module = (int)(d - sim_dev);
		sim_busid(info->module, info->busid, sizeof(info->busid));
		info->hbm_base = d->base;
		info->hbm_size = sim_cfg.hbm_size;
		info->view = d->view;
		info->dmabuf = sim_cfg.dmabuf[info->module];
	}
	pthread_mutex_unlock(&sim_drv_lock);
	return d ? 0 : -ENOTTY;
}

static int sim_export_locked(int fd, uint64_t addr, uint64_t size,
                             uint64_t offset, uint32_t flags)
{
	uint64_t page = sim_cfg.page;
	struct sim_dev *d;
	int nfd;

	if (flags != (O_RDWR | O_CLOEXEC))
		return -EINVAL; /* hl-thunk's own check */
	if (fcntl(fd, F_GETFD) < 0)
		return -EBADF;
	d = sim_find_locked(fd);
	if (!d)
		return -ENOTTY; /* an ioctl on something else */
	if (!sim_cfg.dmabuf[d - sim_dev])
		return -EOPNOTSUPP;
	if (!d->hbm_mapped || addr != d->base)
		return -EINVAL; /* "map address not found" */
	if (addr % page || size == 0 || size % page || offset % page)
		return -EINVAL;
	if (offset > sim_cfg.hbm_size || size > sim_cfg.hbm_size - offset)
		return -EINVAL;
	nfd = sim_dmabuf_fd(d->hbm_fd, (off_t)offset, (size_t)size);
	return nfd < 0 ? -errno : nfd;
}

SIM_API int hmr_sim_synapseai__export(int fd, uint64_t addr, uint64_t size,
                                      uint64_t offset, uint32_t flags)
{
	int rc;

	sim_config();
	pthread_mutex_lock(&sim_drv_lock);
	rc = sim_export_locked(fd, addr, size, offset, flags);
	pthread_mutex_unlock(&sim_drv_lock);
	return rc;
}

/* Opens by bus id, else the first free device of that name. */
SIM_API int hlthunk_open(enum hlthunk_device_name device_name,
                         const char *busid)
{
	const struct sim_config *cfg;
	int rc = -ENODEV;

	SIM_ENTER("hlthunk_open", -ENODEV);
	cfg = sim_config();
	if (busid) {
		int m = hmr_sim_synapseai__module_of_bus(busid);

		return m < 0 ? -ENODEV : hmr_sim_synapseai__open(m);
	}
	if (device_name != HLTHUNK_DEVICE_GAUDI2 &&
	    device_name != HLTHUNK_DEVICE_DONT_CARE)
		return -ENODEV;
	for (int m = 0; m < cfg->ndev; m++) {
		rc = hmr_sim_synapseai__open(m);
		if (rc != -EBUSY)
			return rc;
	}
	return rc;
}

SIM_API int hlthunk_open_by_module_id(uint32_t module_id)
{
	SIM_ENTER("hlthunk_open_by_module_id", -ENODEV);
	if (module_id >= (uint32_t)sim_config()->ndev)
		return -ENODEV;
	return hmr_sim_synapseai__open((int)module_id);
}

/* As hl-thunk: the result of close(), -1 with errno on failure. */
SIM_API int hlthunk_close(int fd)
{
	long st;

	if (hmr_sim_synapseai__fail("hlthunk_close", -1, &st)) {
		errno = EIO;
		return (int)st;
	}
	if (hmr_sim_synapseai__close(fd) == 0)
		return 0;
	return close(fd);
}

/* hl-thunk passes offset 0 and O_RDWR | O_CLOEXEC whatever flags says. */
SIM_API int hlthunk_device_memory_export_dmabuf_fd(int fd, uint64_t addr,
                                                   uint64_t size,
                                                   uint32_t flags)
{
	(void)flags;
	SIM_ENTER("hlthunk_device_memory_export_dmabuf_fd", -EIO);
	return hmr_sim_synapseai__export(fd, addr, size, 0, O_RDWR | O_CLOEXEC);
}

SIM_API int hlthunk_device_mapped_memory_export_dmabuf_fd(int fd, uint64_t addr,
                                                          uint64_t size,
                                                          uint64_t offset,
                                                          uint32_t flags)
{
	SIM_ENTER("hlthunk_device_mapped_memory_export_dmabuf_fd", -EIO);
	return hmr_sim_synapseai__export(fd, addr, size, offset, flags);
}
