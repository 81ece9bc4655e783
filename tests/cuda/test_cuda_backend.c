/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_cuda_backend.c: the CUDA backend through the simulated libcuda. */
#include <dirent.h>
#include <string.h>
#include <unistd.h>

#include "cuda_util.h"

#define MIB (1 << 20)

HMR_TEST(cuda_backend_present_with_simulator)
{
	char why[192];

	ASSERT_OK(hmr_hmem_status(FI_HMEM_CUDA, why, sizeof(why)));
}

/* fi_mr: F86 */
HMR_TEST(cuda_query_device_memory_reports_device_only)
{
	struct sim s = sim_open();
	unsigned long long p = sim_alloc_on(&s, 1, MIB);
	struct hmr_hmem_info info;

	ASSERT_OK(hmr_hmem_query((void *)(uintptr_t)(p + 100), 64, &info));
	ASSERT_EQ(info.iface, FI_HMEM_CUDA);
	ASSERT_EQ(info.device, 1);
	ASSERT_U64_EQ(info.base, p);
	ASSERT_U64_EQ(info.size, MIB);
	ASSERT_NE(info.buffer_id, 0);
	ASSERT_EQ(info.flags, HMR_HMEM_DEVICE_ONLY);
	s.free(p);
}

HMR_TEST(cuda_query_alloc_host_reports_host_alloc)
{
	struct sim s = sim_open();
	struct hmr_hmem_info info;
	void *h;

	ASSERT_EQ(s.alloc_host(&h, MIB), 0);
	ASSERT_OK(hmr_hmem_query(h, 64, &info));
	ASSERT_EQ(info.iface, FI_HMEM_CUDA);
	ASSERT_EQ(info.flags, HMR_HMEM_HOST_ALLOC);
	s.free_host(h);
}

/* fi_mr: F86 */
HMR_TEST(cuda_query_managed_reports_managed)
{
	struct sim s = sim_open();
	struct hmr_hmem_info info;
	unsigned long long p;

	ASSERT_EQ(s.alloc_managed(&p, MIB, 1 /* GLOBAL */), 0);
	ASSERT_OK(hmr_hmem_query((void *)(uintptr_t)p, 64, &info));
	ASSERT_EQ(info.iface, FI_HMEM_CUDA);
	ASSERT_EQ(info.flags, HMR_HMEM_MANAGED);
	s.free(p);
}

/* fi_mr: F85 */
HMR_TEST(cuda_query_host_malloc_is_system)
{
	struct hmr_hmem_info info;
	char *buf = malloc(4096);

	sim_open();
	ASSERT_OK(hmr_hmem_query(buf, 4096, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
	free(buf);
}

HMR_TEST(cuda_host_pointer_known_is_classified_without_the_driver)
{
	struct sim s;
	struct hmr_hmem_info info;
	char *buf = malloc(65536);
	unsigned long before;
	int i;

	/* Host answers are remembered only while a monitor reports unmaps
	 * (the default memhooks; import until memhooks land). */
	case_env("FI_MR_CACHE_MONITOR", "import");
	s = sim_open();
	ASSERT_OK(hmr_hmem_query(buf, 65536, &info)); /* Learns it. */
	before = s.calls("cuPointerGetAttributes");
	for (i = 0; i < 1000; i++) {
		ASSERT_OK(hmr_hmem_query(buf + i, 1024, &info));
		ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
	}
	ASSERT_EQ(s.calls("cuPointerGetAttributes"), before);
	free(buf);
}

HMR_TEST(cuda_buffer_id_changes_when_address_is_reused)
{
	struct sim s = sim_open();
	struct hmr_hmem_info a, b;
	unsigned long long p, q;

	p = sim_alloc_on(&s, 0, MIB);
	ASSERT_OK(hmr_hmem_query((void *)(uintptr_t)p, 64, &a));
	ASSERT_EQ(s.free(p), 0);
	q = sim_alloc_on(&s, 0, MIB);
	ASSERT_U64_EQ(q, p); /* The simulator reuses the address. */
	ASSERT_OK(hmr_hmem_query((void *)(uintptr_t)q, 64, &b));
	ASSERT_NE(a.buffer_id, b.buffer_id);
	s.free(q);
}

/* fi_mr: F47 F86 */
HMR_TEST(cuda_regattr_with_hint_registers_device_memory)
{
	struct sim s = sim_open();
	unsigned long long p = sim_alloc_on(&s, 1, MIB);
	struct fid_domain *d = hmem_domain();
	struct fid_mr *mr;

	ASSERT_OK(reg_iface(d, (void *)(uintptr_t)p, MIB, FI_HMEM_CUDA, 1,
	                    FI_HMEM_DEVICE_ONLY, &mr));
	ASSERT_OK(fi_close(&mr->fid));
	ASSERT_OK(fi_close(&d->fid));
	s.free(p);
}

/* fi_mr: F48 */
HMR_TEST(cuda_fi_mr_reg_detects_device_memory_without_hint)
{
	struct sim s = sim_open();
	unsigned long long p = sim_alloc_on(&s, 0, MIB);
	struct fid_domain *d = hmem_domain();
	struct fid_mr *mr;

	/* FI_HMEM_DEVICE_ONLY holds only if detection found device memory. */
	ASSERT_OK(fi_mr_reg(d, (void *)(uintptr_t)p, MIB, FI_REMOTE_WRITE, 0, 7,
	                    FI_HMEM_DEVICE_ONLY, &mr, NULL));
	ASSERT_OK(fi_close(&mr->fid));
	ASSERT_OK(fi_close(&d->fid));
	s.free(p);
}

/* A domain without FI_HMEM would register device memory as host memory
 * (and a peer's access through it would dereference device memory):
 * where hmr already knows the range is device memory, it refuses.  Host
 * and page-locked host memory still register; device memory hmr never
 * classified is not looked up (doc/software-domain.md). */
HMR_TEST(cuda_device_memory_in_domain_without_fi_hmem_is_refused)
{
	struct sim s = sim_open();
	unsigned long long p = sim_alloc_on(&s, 0, MIB);
	struct hmr_hmem_info info;
	struct fid_domain *d;
	struct fid_mr *mr = NULL;
	char *buf = malloc(4096);
	void *h;

	ASSERT_OK(hmr_domain_open(NULL, &d)); /* No FI_HMEM. */
	ASSERT_OK(hmr_hmem_query((void *)(uintptr_t)p, MIB, &info));
	ASSERT_EQ(fi_mr_reg(d, (void *)(uintptr_t)(p + 4096), 4096,
	                    FI_REMOTE_WRITE, 0, 7, 0, &mr, NULL),
	          -FI_EINVAL);
	ASSERT_TRUE(mr == NULL);
	ASSERT_OK(fi_mr_reg(d, buf, 4096, FI_REMOTE_WRITE, 0, 8, 0, &mr, NULL));
	ASSERT_OK(fi_close(&mr->fid));
	ASSERT_EQ(s.alloc_host(&h, MIB), 0);
	ASSERT_OK(hmr_hmem_query(h, MIB, &info));
	ASSERT_OK(fi_mr_reg(d, h, 4096, FI_REMOTE_WRITE, 0, 9, 0, &mr, NULL));
	ASSERT_OK(fi_close(&mr->fid));
	ASSERT_OK(fi_close(&d->fid));
	s.free_host(h);
	s.free(p);
	free(buf);
}

HMR_TEST(cuda_hint_on_host_memory_is_einval)
{
	struct fid_domain *d;
	struct fid_mr *mr;
	char *buf = malloc(4096);

	sim_open();
	d = hmem_domain();
	ASSERT_EQ(reg_iface(d, buf, 4096, FI_HMEM_CUDA, 0, 0, &mr), -FI_EINVAL);
	ASSERT_OK(fi_close(&d->fid));
	free(buf);
}

/* fi_mr: F91 */
HMR_TEST(cuda_wrong_device_hint_is_einval)
{
	struct sim s = sim_open();
	unsigned long long p = sim_alloc_on(&s, 0, MIB);
	struct fid_domain *d = hmem_domain();
	struct fid_mr *mr;

	ASSERT_EQ(reg_iface(d, (void *)(uintptr_t)p, MIB, FI_HMEM_CUDA, 1, 0,
	                    &mr),
	          -FI_EINVAL);
	ASSERT_OK(fi_close(&d->fid));
	s.free(p);
}

/* fi_mr: F108 */
HMR_TEST(cuda_device_only_on_host_alloc_is_einval)
{
	struct sim s = sim_open();
	struct fid_domain *d = hmem_domain();
	struct fid_mr *mr;
	void *h;

	ASSERT_EQ(s.alloc_host(&h, MIB), 0);
	ASSERT_EQ(
	        reg_iface(d, h, MIB, FI_HMEM_CUDA, 0, FI_HMEM_DEVICE_ONLY, &mr),
	        -FI_EINVAL);
	/* The right flag for it works. */
	ASSERT_OK(
	        reg_iface(d, h, MIB, FI_HMEM_CUDA, 0, FI_HMEM_HOST_ALLOC, &mr));
	ASSERT_OK(fi_close(&mr->fid));
	ASSERT_OK(fi_close(&d->fid));
	s.free_host(h);
}

/* fi_mr: F109 */
HMR_TEST(cuda_host_alloc_flag_on_device_memory_is_einval)
{
	struct sim s = sim_open();
	unsigned long long p = sim_alloc_on(&s, 0, MIB);
	struct fid_domain *d = hmem_domain();
	struct fid_mr *mr;

	ASSERT_EQ(reg_iface(d, (void *)(uintptr_t)p, MIB, FI_HMEM_CUDA, 0,
	                    FI_HMEM_HOST_ALLOC, &mr),
	          -FI_EINVAL);
	ASSERT_OK(fi_close(&d->fid));
	s.free(p);
}

HMR_TEST(cuda_copy_to_and_from_device_roundtrip)
{
	struct sim s = sim_open();
	unsigned long long p = sim_alloc_on(&s, 1, MIB);
	char out[300], in[300];

	memset(out, 0x3c, sizeof(out));
	ASSERT_OK(
	        hmr_hmem_copy_to((void *)(uintptr_t)(p + 5), out, sizeof(out)));
	ASSERT_OK(
	        hmr_hmem_copy_from(in, (void *)(uintptr_t)(p + 5), sizeof(in)));
	ASSERT_EQ(memcmp(in, out, sizeof(in)), 0);
	s.free(p);
}

/* The fd covers the pages asked for: an interior pointer's offset is
 * within its page (test_cuda_vmm.c tries every page boundary). */
HMR_TEST(cuda_dmabuf_interior_pointer_gets_its_offset)
{
	struct sim s = sim_open();
	unsigned long long p = sim_alloc_on(&s, 0, 4 * MIB), at;
	uint64_t offset;
	size_t size;
	int fd;

	ASSERT_OK(hmr_hmem_dmabuf_get((void *)(uintptr_t)(p + 12345), 64, 0,
	                              &fd, &offset));
	ASSERT_U64_EQ(offset, 12345 - 3 * 4096);
	s.last_export(&at, &size);
	ASSERT_U64_EQ(at, p + 3 * 4096);
	ASSERT_EQ(size, 4096);
	ASSERT_OK(hmr_hmem_dmabuf_put((void *)(uintptr_t)p, fd));
	s.free(p);
}

HMR_TEST(cuda_dmabuf_10000_export_release_cycles_leak_no_fd)
{
	struct sim s = sim_open();
	unsigned long long p = sim_alloc_on(&s, 0, MIB);
	void *ptr = (void *)(uintptr_t)(p + 4096);
	uint64_t offset;
	int fd, i, before;

	before = hmr_test_open_fds();
	for (i = 0; i < 10000; i++) {
		ASSERT_OK(hmr_hmem_dmabuf_get(ptr, 4096, 0, &fd, &offset));
		ASSERT_OK(hmr_hmem_dmabuf_put(ptr, fd));
	}
	ASSERT_EQ(hmr_test_open_fds(), before);
	s.free(p);
}

HMR_TEST(cuda_dmabuf_refused_on_device_without_support)
{
	struct sim s = sim_open(); /* HMR_SIM_CUDA_DMABUF=1,0 */
	unsigned long long p0 = sim_alloc_on(&s, 0, MIB);
	unsigned long long p1 = sim_alloc_on(&s, 1, MIB);
	uint64_t offset;
	int fd;

	ASSERT_EQ(hmr_hmem_dmabuf_get((void *)(uintptr_t)p1, 4096, 0, &fd,
	                              &offset),
	          -FI_EOPNOTSUPP);
	/* Support is per device: device 0 still exports. */
	ASSERT_OK(hmr_hmem_dmabuf_get((void *)(uintptr_t)p0, 4096, 0, &fd,
	                              &offset));
	ASSERT_OK(hmr_hmem_dmabuf_put((void *)(uintptr_t)p0, fd));
	s.free(p0);
	s.free(p1);
}

HMR_TEST(cuda_dmabuf_pcie_refused_falls_back_to_default)
{
	struct sim s = sim_open(); /* PCIe mapping not offered. */
	unsigned long long p = sim_alloc_on(&s, 0, MIB);
	uint64_t offset;
	int fd;

	ASSERT_OK(hmr_hmem_dmabuf_get((void *)(uintptr_t)p, 4096,
	                              HMR_DMABUF_PCIE, &fd, &offset));
	ASSERT_OK(hmr_hmem_dmabuf_put((void *)(uintptr_t)p, fd));
	s.free(p);
}

/* Each failure of the export comes back as the -FI_E* code its status
 * means (the error wrapper's mapping), with nothing exported. */
HMR_TEST(cuda_dmabuf_export_failure_is_reported)
{
	struct sim s;
	unsigned long long p;
	uint64_t offset;
	int fd;

	/* 2 is CUDA_ERROR_OUT_OF_MEMORY, 999 CUDA_ERROR_UNKNOWN, 801
	 * CUDA_ERROR_NOT_SUPPORTED: the 1st, 2nd and 3rd exports fail. */
	case_env("HMR_SIM_CUDA_FAIL", "cuMemGetHandleForAddressRange=2:1,"
	                              "cuMemGetHandleForAddressRange=999:1,"
	                              "cuMemGetHandleForAddressRange=801:1");
	s = sim_open();
	p = sim_alloc_on(&s, 0, MIB);
	ASSERT_EQ(hmr_hmem_dmabuf_get((void *)(uintptr_t)p, 4096, 0, &fd,
	                              &offset),
	          -FI_ENOMEM);
	ASSERT_EQ(hmr_hmem_dmabuf_get((void *)(uintptr_t)p, 4096, 0, &fd,
	                              &offset),
	          -FI_EIO);
	ASSERT_EQ(hmr_hmem_dmabuf_get((void *)(uintptr_t)p, 4096, 0, &fd,
	                              &offset),
	          -FI_EOPNOTSUPP);
	ASSERT_OK(hmr_hmem_dmabuf_get((void *)(uintptr_t)p, 4096, 0, &fd,
	                              &offset));
	ASSERT_OK(hmr_hmem_dmabuf_put((void *)(uintptr_t)p, fd));
	s.free(p);
}

/* Host memory has no dma-buf: the call exists and the argument is wrong
 * (-FI_EINVAL), not "Function not implemented" (the system backend's
 * empty slot); putting one back is as wrong. */
HMR_TEST(cuda_dmabuf_of_host_memory_is_einval)
{
	char *buf = malloc(8192);
	uint64_t offset;
	int fd = -1;

	sim_open();
	ASSERT_EQ(hmr_hmem_dmabuf_get(buf, 4096, 0, &fd, &offset), -FI_EINVAL);
	ASSERT_EQ(fd, -1);
	ASSERT_EQ(hmr_hmem_dmabuf_put(buf, 1000), -FI_EINVAL);
	free(buf);
}

/* A caller that sets only device.cuda in a struct it did not zero: the
 * other bytes of the 64-bit union are not read. */
/* fi_mr: F91 */
HMR_TEST(cuda_device_hint_is_read_from_the_cuda_member_only)
{
	struct sim s = sim_open();
	unsigned long long p = sim_alloc_on(&s, 1, MIB);
	struct fid_domain *d = hmem_domain();
	struct iovec iov = {(void *)(uintptr_t)p, 4096};
	struct fi_mr_attr attr;
	struct fid_mr *mr;

	memset(&attr, 0xff, sizeof(attr));
	attr.mr_iov = &iov;
	attr.iov_count = 1;
	attr.access = FI_REMOTE_READ;
	attr.offset = 0;
	attr.requested_key = 1;
	attr.context = NULL;
	attr.auth_key_size = 0;
	attr.auth_key = NULL;
	attr.iface = FI_HMEM_CUDA;
	attr.device.cuda = 1;
	attr.hmem_data = NULL;
	attr.page_size = 0;
	attr.base_mr = NULL;
	attr.sub_mr_cnt = 0;
	ASSERT_OK(fi_mr_regattr(d, &attr, 0, &mr));
	ASSERT_OK(fi_close(&mr->fid));
	attr.device.cuda = 0; /* The wrong device is still refused. */
	ASSERT_EQ(fi_mr_regattr(d, &attr, 0, &mr), -FI_EINVAL);
	ASSERT_OK(fi_close(&d->fid));
	s.free(p);
}

HMR_TEST(cuda_device_only_on_managed_memory_is_einval)
{
	struct sim s = sim_open();
	struct fid_domain *d = hmem_domain();
	struct hmr_hmem_info info;
	unsigned long long p;
	struct fid_mr *mr;
	void *ptr;

	ASSERT_EQ(s.alloc_managed(&p, MIB, 1 /* GLOBAL */), 0);
	ptr = (void *)(uintptr_t)p;
	ASSERT_OK(hmr_hmem_query(ptr, 64, &info));
	/* Detected, and with the iface hint: managed is not device-only. */
	ASSERT_EQ(fi_mr_reg(d, ptr, MIB, FI_REMOTE_WRITE, 0, 7,
	                    FI_HMEM_DEVICE_ONLY, &mr, NULL),
	          -FI_EINVAL);
	ASSERT_EQ(reg_iface(d, ptr, MIB, FI_HMEM_CUDA, (int)info.device,
	                    FI_HMEM_DEVICE_ONLY, &mr),
	          -FI_EINVAL);
	/* Without the flag it registers. */
	ASSERT_OK(
	        reg_iface(d, ptr, MIB, FI_HMEM_CUDA, (int)info.device, 0, &mr));
	ASSERT_OK(fi_close(&mr->fid));
	ASSERT_OK(fi_close(&d->fid));
	s.free(p);
}

static int regv2(struct fid_domain *d, void *a, void *b, struct fid_mr **mr)
{
	struct iovec iov[2] = {{a, 4096}, {b, 4096}};

	return fi_mr_regv(d, iov, 2, FI_REMOTE_WRITE, 0, 9, 0, mr, NULL);
}

HMR_TEST(cuda_regv_host_and_device_iovs_is_einval)
{
	struct sim s = sim_open();
	void *dev = (void *)(uintptr_t)sim_alloc_on(&s, 0, MIB);
	struct fid_domain *d = hmem_domain();
	char *host = aligned_alloc(4096, 2 * 4096);
	struct fid_mr *mr;

	ASSERT_EQ(regv2(d, host, dev, &mr), -FI_EINVAL);
	ASSERT_EQ(regv2(d, dev, host, &mr), -FI_EINVAL);
	/* Two iovs of the same kind register. */
	ASSERT_OK(regv2(d, host, host + 4096, &mr));
	ASSERT_OK(fi_close(&mr->fid));
	ASSERT_OK(fi_close(&d->fid));
	free(host);
	s.free((uintptr_t)dev);
}

HMR_TEST(cuda_regv_iovs_on_two_devices_is_einval)
{
	struct sim s = sim_open();
	char *d0 = (void *)(uintptr_t)sim_alloc_on(&s, 0, MIB);
	char *d1 = (void *)(uintptr_t)sim_alloc_on(&s, 1, MIB);
	struct fid_domain *d = hmem_domain();
	struct fid_mr *mr;

	ASSERT_EQ(regv2(d, d0, d1, &mr), -FI_EINVAL);
	ASSERT_EQ(regv2(d, d1, d0, &mr), -FI_EINVAL);
	/* Two iovs on one device register. */
	ASSERT_OK(regv2(d, d1, d1 + 8192, &mr));
	ASSERT_OK(fi_close(&mr->fid));
	ASSERT_OK(fi_close(&d->fid));
	s.free((uintptr_t)d0);
	s.free((uintptr_t)d1);
}

/* A host range the memtype cache knows, then page-locked in part: the
 * part is CUDA's now, not the cached host answer; the rest stays host. */
HMR_TEST(cuda_host_register_inside_known_host_range_is_reclassified)
{
	char *buf = aligned_alloc(4096, 1 << 16);
	struct hmr_hmem_info info;

	sim_open();
	ASSERT_OK(hmr_hmem_query(buf, 1 << 16, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
	ASSERT_OK(hmr_hmem_host_register(FI_HMEM_CUDA, buf + 16384, 8192));
	ASSERT_OK(hmr_hmem_query(buf + 16384 + 100, 64, &info));
	ASSERT_EQ(info.iface, FI_HMEM_CUDA);
	ASSERT_EQ(info.flags, HMR_HMEM_HOST_ALLOC);
	ASSERT_OK(hmr_hmem_query(buf + 16384, 8192, &info));
	ASSERT_EQ(info.iface, FI_HMEM_CUDA);
	ASSERT_OK(hmr_hmem_query(buf, 4096, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
	ASSERT_OK(hmr_hmem_query(buf + 32768, 4096, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
	ASSERT_OK(hmr_hmem_host_unregister(FI_HMEM_CUDA, buf + 16384, 8192));
	free(buf);
}

/* After host_unregister the cache forgets the range: the next query asks
 * the driver once (no stale CUDA entry asked first), the one after none. */
HMR_TEST(cuda_query_after_host_unregister_calls_driver_once)
{
	struct sim s;
	char *buf = aligned_alloc(4096, 1 << 16);
	struct hmr_hmem_info info;
	unsigned long before;

	/* Host answers are remembered only while a monitor reports unmaps
	 * (the default memhooks; import until memhooks land). */
	case_env("FI_MR_CACHE_MONITOR", "import");
	s = sim_open();
	ASSERT_OK(hmr_hmem_host_register(FI_HMEM_CUDA, buf, 1 << 16));
	ASSERT_OK(hmr_hmem_query(buf, 4096, &info));
	ASSERT_EQ(info.iface, FI_HMEM_CUDA);
	ASSERT_OK(hmr_hmem_host_unregister(FI_HMEM_CUDA, buf, 1 << 16));
	before = s.calls("cuPointerGetAttributes");
	ASSERT_OK(hmr_hmem_query(buf, 4096, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
	ASSERT_EQ(s.calls("cuPointerGetAttributes") - before, 1);
	ASSERT_OK(hmr_hmem_query(buf, 4096, &info));
	ASSERT_EQ(s.calls("cuPointerGetAttributes") - before, 1);
	free(buf);
}

/* Freeing at the ends of the address space is the driver's error, and
 * forgets no remembered answer (the end of a one-byte range at the last
 * byte is computed, never wrapped to 0). */
HMR_TEST(cuda_free_at_address_space_ends_forgets_nothing)
{
	char *buf = aligned_alloc(4096, 1 << 16);
	struct hmr_hmem_info info;
	unsigned long before;
	struct sim s;

	/* Host answers are remembered under a monitor that reports unmaps. */
	case_env("FI_MR_CACHE_MONITOR", "import");
	s = sim_open();
	ASSERT_OK(hmr_hmem_query(buf, 4096, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
	before = s.calls("cuPointerGetAttributes");
	ASSERT_OK(hmr_hmem_query(buf, 4096, &info));
	ASSERT_EQ(s.calls("cuPointerGetAttributes") - before, 0);
	ASSERT_NE(hmr_hmem_free(FI_HMEM_CUDA, (void *)UINTPTR_MAX), 0);
	ASSERT_NE(hmr_hmem_free(FI_HMEM_CUDA, (void *)(UINTPTR_MAX - 4095)), 0);
	ASSERT_NE(hmr_hmem_free(FI_HMEM_CUDA, NULL), 0);
	ASSERT_OK(hmr_hmem_query(buf, 4096, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
	ASSERT_EQ(s.calls("cuPointerGetAttributes") - before, 0);
	free(buf);
}

/* A driver failure while classifying is the caller's error, not "host";
 * nothing is cached, so the next query asks again. */
HMR_TEST(cuda_query_driver_failure_is_reported)
{
	char *buf = malloc(4096);
	struct hmr_hmem_info info;

	/* 999 is CUDA_ERROR_UNKNOWN: the first pointer query fails. */
	case_env("HMR_SIM_CUDA_FAIL", "cuPointerGetAttributes=999:1");
	sim_open();
	ASSERT_EQ(hmr_hmem_query(buf, 64, &info), -FI_EIO);
	ASSERT_OK(hmr_hmem_query(buf, 64, &info));
	ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
	free(buf);
}

/* Host memory of the runtime is every device's: a device hint for it is
 * ignored (fi_mr(3): with FI_HMEM_HOST_ALLOC "the field device is
 * ignored"; hmr ignores it without the flag too). */
HMR_TEST(cuda_host_alloc_memory_ignores_device_hint)
{
	struct sim s = sim_open();
	struct fid_domain *d = hmem_domain();
	struct hmr_hmem_info info;
	struct fid_mr *mr;
	int other;
	void *h;

	ASSERT_EQ(s.alloc_host(&h, MIB), 0);
	ASSERT_OK(hmr_hmem_query(h, 64, &info));
	ASSERT_EQ(info.flags, HMR_HMEM_HOST_ALLOC);
	other = (int)info.device + 1;
	ASSERT_OK(reg_iface(d, h, MIB, FI_HMEM_CUDA, other, 0, &mr));
	ASSERT_OK(fi_close(&mr->fid));
	ASSERT_OK(reg_iface(d, h, MIB, FI_HMEM_CUDA, other, FI_HMEM_HOST_ALLOC,
	                    &mr));
	ASSERT_OK(fi_close(&mr->fid));
	ASSERT_OK(fi_close(&d->fid));
	s.free_host(h);
}

HMR_TEST_MAIN()
