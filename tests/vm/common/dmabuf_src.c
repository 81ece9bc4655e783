/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* dmabuf_src.c: real dma-bufs in the test VM, from udmabuf and from vgem. */
#include "dmabuf_src.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "udmabuf.h"

/* The few DRM UAPI definitions needed (libdrm-dev is not required). */
struct vm_drm_version {
	int major, minor, patchlevel;
	size_t name_len;
	char *name;
	size_t date_len;
	char *date;
	size_t desc_len;
	char *desc;
};
struct vm_drm_create_dumb {
	uint32_t height, width, bpp, flags, handle, pitch;
	uint64_t size;
};
struct vm_drm_prime_handle {
	uint32_t handle, flags;
	int32_t fd;
};
#define VM_DRM_IOCTL_VERSION _IOWR('d', 0x00, struct vm_drm_version)
#define VM_DRM_IOCTL_PRIME_HANDLE_TO_FD                                        \
	_IOWR('d', 0x2d, struct vm_drm_prime_handle)
#define VM_DRM_IOCTL_MODE_CREATE_DUMB                                          \
	_IOWR('d', 0xB2, struct vm_drm_create_dumb)

int vm_sealed_memfd(const char *name, size_t len)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0)
		return -1;
	if (ftruncate(fd, (off_t)len) != 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) != 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int vm_udmabuf(int memfd, off_t off, size_t len)
{
	return udmabuf_fd(memfd, off, len, NULL);
}

/* The dumb buffer's dma-buf on card, or -1. */
static int vgem_export(int card, size_t len)
{
	struct vm_drm_create_dumb d = {
	        .width = 1024, /* 4 KiB rows of 32-bit pixels */
	        .height = (uint32_t)((len + 4095) / 4096),
	        .bpp = 32,
	};
	struct vm_drm_prime_handle p = {.flags = O_CLOEXEC | O_RDWR, .fd = -1};

	if (ioctl(card, VM_DRM_IOCTL_MODE_CREATE_DUMB, &d) != 0)
		return -1;
	p.handle = d.handle;
	if (ioctl(card, VM_DRM_IOCTL_PRIME_HANDLE_TO_FD, &p) != 0)
		return -1;
	return p.fd; /* holds its own reference: the card may close */
}

int vm_vgem_dmabuf(size_t len)
{
	for (int i = 0; i < 16; i++) {
		char path[32], name[32] = "";
		struct vm_drm_version v = {.name_len = sizeof(name) - 1,
		                           .name = name};
		int card, fd, e;

		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		card = open(path, O_RDWR | O_CLOEXEC);
		if (card < 0)
			continue;
		if (ioctl(card, VM_DRM_IOCTL_VERSION, &v) != 0 ||
		    strcmp(name, "vgem") != 0) {
			close(card);
			continue;
		}
		fd = vgem_export(card, len);
		e = errno;
		close(card);
		errno = e;
		return fd;
	}
	errno = ENODEV;
	return -1;
}
