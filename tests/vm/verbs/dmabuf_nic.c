/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* dmabuf_nic.c: ibv_reg_dmabuf_mr of a NIC that imports dma-bufs, on rxe. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "dmabuf_nic.h"

/* What dmabuf_nic.h says; the mappings of the MRs it made, to undo. */
const char *vm_nic_takes;
int vm_nic_on = 1;
unsigned vm_nic_imports;
uint64_t vm_nic_offset;
static struct {
	struct ibv_mr *mr;
	void *map;
	size_t span;
} shim_mrs[8];

/* fd is one of the simulator's, by its /proc/self/fd link. */
static int taken_fd(int fd)
{
	char path[64], target[128];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return 0;
	target[n] = '\0';
	return vm_nic_takes && strstr(target, vm_nic_takes) != NULL;
}

/* Exported (the build hides symbols by default) so that libhmr binds here. */
#define SHIM_EXPORT __attribute__((visibility("default")))

SHIM_EXPORT struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
                                             size_t length, uint64_t iova,
                                             int fd, int access)
{
	struct ibv_mr *(*real)(struct ibv_pd *, uint64_t, size_t, uint64_t, int,
	                       int);
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE),
	         start = offset & ~(pg - 1);
	size_t span = (size_t)(offset - start) + length;
	struct ibv_mr *mr;
	unsigned i;
	void *map;

	if (!vm_nic_on || !taken_fd(fd)) {
		*(void **)&real = dlsym(RTLD_NEXT, "ibv_reg_dmabuf_mr");
		return real(pd, offset, length, iova, fd, access);
	}
	for (i = 0; i < 8 && shim_mrs[i].mr; i++)
		;
	map = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
	           (off_t)start);
	if (i == 8 || map == MAP_FAILED)
		return NULL;
	mr = ibv_reg_mr_iova(pd, (char *)map + (offset - start), length, iova,
	                     access);
	if (!mr) {
		munmap(map, span);
		return NULL;
	}
	shim_mrs[i].mr = mr;
	shim_mrs[i].map = map;
	shim_mrs[i].span = span;
	vm_nic_imports++;
	vm_nic_offset = offset;
	return mr;
}

SHIM_EXPORT int ibv_dereg_mr(struct ibv_mr *mr)
{
	int (*real)(struct ibv_mr *);
	void *map = NULL;
	size_t span = 0;
	unsigned i;
	int ret;

	*(void **)&real = dlsym(RTLD_NEXT, "ibv_dereg_mr");
	for (i = 0; i < 8; i++) {
		if (mr && shim_mrs[i].mr == mr) {
			map = shim_mrs[i].map;
			span = shim_mrs[i].span;
			shim_mrs[i].mr = NULL;
		}
	}
	ret = real(mr);
	if (map)
		munmap(map, span);
	return ret;
}
