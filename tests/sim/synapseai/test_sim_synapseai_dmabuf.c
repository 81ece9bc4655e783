/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_sim_synapseai_dmabuf.c: both dma-buf routes of the simulated stack. */
#include "test_sim_synapseai.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

/*
 * Route 1, fabtests: hlthunk_device_mapped_memory_export_dmabuf_fd(
 * info.fd, globalHbmBaseAddress, page-rounded len, buf - HBM base,
 * O_RDWR | O_CLOEXEC); the caller closes the fd.
 * Route 2, libfabric: hcclLookupDMABuff(buf, len, &fd); HCL keeps the fd.
 */

#define EXPORT_FLAGS (O_RDWR | O_CLOEXEC)

/* A device buffer of len bytes holding fill(seed), through a stream. */
static uint64_t filled_buffer(size_t len, unsigned seed, unsigned char **data)
{
	synStreamHandle s;
	unsigned char *pinned;
	uint64_t p;

	SYN_OK(api.synStreamCreateGeneric(&s, 0, 0));
	SYN_OK(api.synHostMalloc(0, len, 0, (void **)&pinned));
	fill(pinned, len, seed);
	SYN_OK(api.synDeviceMalloc(0, len, 0, 0, &p));
	h2d(s, p, pinned, len);
	SYN_OK(api.synStreamDestroy(s));
	*data = pinned;
	return p;
}

/* The bytes at fd offset off, compared with want. */
static void expect_bytes(int fd, uint64_t off, const unsigned char *want,
                         size_t len)
{
	uint64_t start = off / page() * page();
	size_t span = (size_t)(off - start) + len;
	unsigned char *map;

	map = mmap(NULL, span, PROT_READ, MAP_SHARED, fd, (off_t)start);
	ASSERT_TRUE(map != MAP_FAILED);
	ASSERT_EQ(memcmp(map + (off - start), want, len), 0);
	munmap(map, span);
}

static const unsigned char zeros[4096];

HMR_TEST(sim_synapseai_hlthunk_export_maps_buffer_bytes)
{
	size_t pg = page(), len = 3 * pg + 100, span = 4 * pg;
	synDeviceInfoV2 info;
	unsigned char *data;
	uint64_t p, base;
	int fd;

	setup(-1, &info);
	base = info.globalHbmBaseAddress;
	p = filled_buffer(len, 3, &data);
	/* The fabtests route: offset = p - base. */
	fd = api.hlthunk_device_mapped_memory_export_dmabuf_fd(
	        (int)info.fd, base, span, p - base, EXPORT_FLAGS);
	ASSERT_GE(fd, 0);
	ASSERT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	/*
	 * Hardware: byte 0 of the dma-buf is p.  Simulator: byte 0 is the
	 * HBM base, so p's bytes sit at fd offset p - base.
	 */
	expect_bytes(fd, p - base, data, len);
	expect_bytes(fd, 0, zeros, sizeof(zeros)); /* the runtime's own */
	ASSERT_EQ(lseek(fd, 0, SEEK_END), (off_t)info.dramSize);
	ASSERT_EQ(close(fd), 0);

	/* An interior, page-aligned pointer. */
	fd = api.hlthunk_device_mapped_memory_export_dmabuf_fd(
	        (int)info.fd, base, pg, p + pg - base, EXPORT_FLAGS);
	ASSERT_GE(fd, 0);
	expect_bytes(fd, p + pg - base, data + pg, pg);
	ASSERT_EQ(close(fd), 0);

	/* Offset 0 and a size reaching the end: same offsets everywhere. */
	fd = api.hlthunk_device_mapped_memory_export_dmabuf_fd(
	        (int)info.fd, base, p + span - base, 0, EXPORT_FLAGS);
	ASSERT_GE(fd, 0);
	expect_bytes(fd, p - base, data, len);
	ASSERT_EQ(close(fd), 0);

	/* The Gaudi1 call: offset 0, flags ignored. */
	fd = api.hlthunk_device_memory_export_dmabuf_fd((int)info.fd, base,
	                                                span, 0);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(api.hlthunk_close(fd), 0);
	SYN_OK(api.synDestroy());
}

HMR_TEST(sim_synapseai_hlthunk_export_checks)
{
	uint64_t pg = page(), p, base, size;
	int dev = -1, pfd[2], fd, before;
	synDeviceInfoV2 info;
	unsigned char *data;

	setup(-1, &info);
	base = info.globalHbmBaseAddress;
	size = info.dramSize;
	dev = (int)info.fd;
	p = filled_buffer(pg, 1, &data);
	before = hmr_test_open_fds();
#define EXPORT(fd_, addr_, size_, off_, flags_)                                \
	api.hlthunk_device_mapped_memory_export_dmabuf_fd(fd_, addr_, size_,   \
	                                                  off_, flags_)
	ASSERT_EQ(EXPORT(dev, base, pg, p - base, O_RDWR), -EINVAL);
	ASSERT_EQ(EXPORT(dev, p, pg, 0, EXPORT_FLAGS), -EINVAL); /* not base */
	ASSERT_EQ(EXPORT(dev, base + pg, pg, 0, EXPORT_FLAGS), -EINVAL);
	ASSERT_EQ(EXPORT(dev, base, pg, p - base + 1, EXPORT_FLAGS), -EINVAL);
	ASSERT_EQ(EXPORT(dev, base, 0, p - base, EXPORT_FLAGS), -EINVAL);
	ASSERT_EQ(EXPORT(dev, base, pg + 1, p - base, EXPORT_FLAGS), -EINVAL);
	ASSERT_EQ(EXPORT(dev, base, size + pg, 0, EXPORT_FLAGS), -EINVAL);
	ASSERT_EQ(EXPORT(dev, base, pg, size, EXPORT_FLAGS), -EINVAL);
	ASSERT_EQ(EXPORT(dev, base, 2 * pg, UINT64_MAX - pg + 1, EXPORT_FLAGS),
	          -EINVAL); /* offset + size wraps */
	/* All of HBM, and its last page: the limits themselves are fine. */
	fd = EXPORT(dev, base, size, 0, EXPORT_FLAGS);
	ASSERT_GE(fd, 0);
	close(fd);
	fd = EXPORT(dev, base, pg, size - pg, EXPORT_FLAGS);
	ASSERT_GE(fd, 0);
	close(fd);
	ASSERT_EQ(pipe(pfd), 0);
	ASSERT_EQ(EXPORT(pfd[0], base, pg, 0, EXPORT_FLAGS), -ENOTTY);
	close(pfd[0]);
	close(pfd[1]);
	ASSERT_EQ(EXPORT(pfd[0], base, pg, 0, EXPORT_FLAGS), -EBADF);
	ASSERT_EQ(EXPORT(-1, base, pg, 0, EXPORT_FLAGS), -EBADF);
	ASSERT_EQ(hmr_test_open_fds(),
	          before); /* failures leave no fd behind */

	/* A device node opened directly: nothing mapped to export yet. */
	fd = api.hlthunk_open_by_module_id(1);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(api.hlthunk_device_memory_export_dmabuf_fd(fd, base, pg, 0),
	          -EINVAL);
	ASSERT_EQ(api.hlthunk_close(fd), 0);
#undef EXPORT
	SYN_OK(api.synDestroy());
}

HMR_TEST(sim_synapseai_hccl_lookup_ignores_address)
{
	synDeviceInfoV2 info;
	unsigned char *data;
	int fd = -1, fd2 = -1, on_stack = 0;
	uint64_t p, base;
	synDeviceId id;

	load();
	/* Before any device: hcclSuccess and *fd untouched. */
	ASSERT_EQ(api.hcclLookupDMABuff(0x1000, 4096, &fd), hcclSuccess);
	ASSERT_EQ(fd, -1);
	setup(-1, &info);
	base = info.globalHbmBaseAddress;
	ASSERT_EQ(api.hcclLookupDMABuff(base, 4096, NULL), hcclInvalidArgument);
	p = filled_buffer(3 * page(), 9, &data);
	ASSERT_EQ(api.hcclLookupDMABuff(p, 3 * page(), &fd), hcclSuccess);
	ASSERT_GE(fd, 0);
	/* Same fd for an interior pointer, a host pointer, anything. */
	ASSERT_EQ(api.hcclLookupDMABuff(p + page(), page(), &fd2), hcclSuccess);
	ASSERT_EQ(fd2, fd);
	fd2 = -1;
	ASSERT_EQ(api.hcclLookupDMABuff((uintptr_t)&on_stack, 4, &fd2),
	          hcclSuccess);
	ASSERT_EQ(fd2, fd);
	/*
	 * Byte 0 is the pool start, globalHbmBaseAddress, on hardware too: p
	 * is at fd offset p - base, and libfabric's offset 0 would register
	 * the runtime's own bytes instead.
	 */
	expect_bytes(fd, p - base, data, 3 * page());
	expect_bytes(fd, p + page() - base, data + page(), page());
	expect_bytes(fd, 0, zeros, sizeof(zeros));
	ASSERT_EQ(lseek(fd, 0, SEEK_END), (off_t)info.dramSize);

	/* HCL owns it: released with the device. */
	SYN_OK(api.synDeviceRelease(0));
	ASSERT_EQ(fcntl(fd, F_GETFD), -1);
	ASSERT_EQ(errno, EBADF);
	fd2 = -1;
	ASSERT_EQ(api.hcclLookupDMABuff(p, 4096, &fd2), hcclSuccess);
	ASSERT_EQ(fd2, -1);
	SYN_OK(api.synDeviceAcquire(&id, NULL));
	ASSERT_EQ(api.hcclLookupDMABuff(p, 4096, &fd2), hcclSuccess);
	ASSERT_GE(fd2, 0);
	SYN_OK(api.synDestroy());
	ASSERT_EQ(fcntl(fd2, F_GETFD), -1);
}

HMR_TEST(sim_synapseai_dmabuf_switch_per_device)
{
	synDeviceInfoV2 info;
	synDeviceId id;
	int fd = -1;

	setenv("HMR_SIM_SYNAPSEAI_DMABUF", "0,1", 1);
	setup(0, &info);
	ASSERT_EQ(api.hlthunk_device_mapped_memory_export_dmabuf_fd(
	                  (int)info.fd, info.globalHbmBaseAddress, page(), 0,
	                  EXPORT_FLAGS),
	          -EOPNOTSUPP);
	ASSERT_EQ(api.hcclLookupDMABuff(info.globalHbmBaseAddress, page(), &fd),
	          hcclSuccess);
	ASSERT_EQ(fd, -1); /* no gaudi-direct region on this device */
	SYN_OK(api.synDeviceRelease(0));

	SYN_OK(api.synDeviceAcquireByModuleId(&id, 1));
	SYN_OK(api.synDeviceGetInfoV2(id, &info));
	fd = api.hlthunk_device_mapped_memory_export_dmabuf_fd(
	        (int)info.fd, info.globalHbmBaseAddress, page(), 0,
	        EXPORT_FLAGS);
	ASSERT_GE(fd, 0);
	close(fd);
	fd = -1;
	ASSERT_EQ(api.hcclLookupDMABuff(info.globalHbmBaseAddress, page(), &fd),
	          hcclSuccess);
	ASSERT_GE(fd, 0);
	SYN_OK(api.synDestroy());
}

HMR_TEST(sim_synapseai_fd_counts_flat_over_10000_exports)
{
	synDeviceInfoV2 info;
	unsigned char *data;
	int before, ready, fd, first = -1;
	uint64_t p, base;

	load();
	before = hmr_test_open_fds();
	setup(-1, &info);
	base = info.globalHbmBaseAddress;
	p = filled_buffer(1 << 20, 5, &data);
	ready = hmr_test_open_fds();
	ASSERT_EQ(ready, before + 2); /* the device node and the HBM memfd */
	for (int i = 0; i < 10000; i++) {
		fd = api.hlthunk_device_mapped_memory_export_dmabuf_fd(
		        (int)info.fd, base, 1 << 20, p - base, EXPORT_FLAGS);
		ASSERT_GE(fd, 0);
		ASSERT_EQ(close(fd), 0);
	}
	ASSERT_EQ(hmr_test_open_fds(), ready);
	for (int i = 0; i < 10000; i++) {
		fd = -1;
		ASSERT_EQ(api.hcclLookupDMABuff(p, 1 << 20, &fd), hcclSuccess);
		if (first < 0)
			first = fd;
		ASSERT_EQ(fd, first); /* HCL's fd: not the caller's to close */
	}
	ASSERT_EQ(hmr_test_open_fds(), ready + 1);
	SYN_OK(api.synDeviceRelease(0));
	ASSERT_EQ(hmr_test_open_fds(), before);
	SYN_OK(api.synDestroy());
}
