/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_mr_access.c: hmr_mr_access addressing, ranges, rights, auth keys. */
#define _GNU_SOURCE 1
#include <stdint.h>
#include <sys/uio.h>

#include "core_util.h"

static char buf[4096];
static char other[4096];

static int access_at(struct fid_domain *domain, uint64_t key, uint64_t addr,
                     size_t len, uint64_t access, void **ptr)
{
	*ptr = NULL;
	return hmr_mr_access(domain, key, addr, len, access, ptr);
}

/* fi_mr: F35 */
HMR_TEST(mr_access_virt_addr_names_virtual_address)
{
	struct fid_domain *domain = open_domain(FI_MR_VIRT_ADDR, 0);
	struct fid_mr *mr = reg_ok(domain, buf + 64, 256, REMOTE_RW, 1, 0);
	uint64_t va = (uintptr_t)(buf + 64);
	void *ptr;

	ASSERT_OK(access_at(domain, 1, va, 256, FI_REMOTE_READ, &ptr));
	ASSERT_PTR_EQ(ptr, buf + 64);
	ASSERT_OK(access_at(domain, 1, va + 100, 20, FI_REMOTE_WRITE, &ptr));
	ASSERT_PTR_EQ(ptr, buf + 164);
	ASSERT_OK(access_at(domain, 1, va + 255, 1, FI_REMOTE_READ, &ptr));
	ASSERT_PTR_EQ(ptr, buf + 319);
	/* An offset is not a virtual address inside the region. */
	ASSERT_EQ(access_at(domain, 1, 100, 20, FI_REMOTE_READ, &ptr),
	          -FI_EFAULT);
	ASSERT_EQ(access_at(domain, 1, va - 1, 2, FI_REMOTE_READ, &ptr),
	          -FI_EFAULT);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F7 */
HMR_TEST(mr_access_zero_based_names_offset)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct fid_mr *mr = reg_ok(domain, buf + 64, 256, REMOTE_RW, 1, 0);
	void *ptr;

	ASSERT_OK(access_at(domain, 1, 0, 256, FI_REMOTE_READ, &ptr));
	ASSERT_PTR_EQ(ptr, buf + 64);
	ASSERT_OK(access_at(domain, 1, 100, 20, FI_REMOTE_WRITE, &ptr));
	ASSERT_PTR_EQ(ptr, buf + 164);
	/* The virtual address is far past the region's end. */
	ASSERT_EQ(access_at(domain, 1, (uintptr_t)(buf + 64), 8, FI_REMOTE_READ,
	                    &ptr),
	          -FI_EFAULT);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F53 */
HMR_TEST(mr_access_basic_mode_names_virtual_address)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	struct fid_domain *domain = NULL;
	struct fid_mr *mr;
	void *ptr;

	attr.mr_mode = FI_MR_BASIC;
	ASSERT_OK(hmr_domain_open(&attr, &domain));
	mr = reg_ok(domain, buf, 128, REMOTE_RW, 0, 0);
	ASSERT_OK(access_at(domain, fi_mr_key(mr), (uintptr_t)buf + 8, 8,
	                    FI_REMOTE_WRITE, &ptr));
	ASSERT_PTR_EQ(ptr, buf + 8);
	ASSERT_EQ(access_at(domain, fi_mr_key(mr), 8, 8, FI_REMOTE_WRITE, &ptr),
	          -FI_EFAULT);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F7 F20 */
HMR_TEST(mr_access_regv_offsets_concatenate_iovs)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct iovec iov[3] = {
	        {buf, 100}, {other + 1000, 50}, {buf + 2000, 10}};
	struct fid_mr *mr = NULL;
	void *ptr;

	ASSERT_OK(fi_mr_regv(domain, iov, 3, REMOTE_RW, 0, 2, 0, &mr, NULL));
	ASSERT_OK(access_at(domain, 2, 0, 100, FI_REMOTE_READ, &ptr));
	ASSERT_PTR_EQ(ptr, buf);
	ASSERT_OK(access_at(domain, 2, 99, 1, FI_REMOTE_READ, &ptr));
	ASSERT_PTR_EQ(ptr, buf + 99);
	ASSERT_OK(access_at(domain, 2, 100, 50, FI_REMOTE_WRITE, &ptr));
	ASSERT_PTR_EQ(ptr, other + 1000);
	ASSERT_OK(access_at(domain, 2, 120, 10, FI_REMOTE_WRITE, &ptr));
	ASSERT_PTR_EQ(ptr, other + 1020);
	ASSERT_OK(access_at(domain, 2, 150, 10, FI_REMOTE_READ, &ptr));
	ASSERT_PTR_EQ(ptr, buf + 2000);
	ASSERT_OK(access_at(domain, 2, 159, 1, FI_REMOTE_READ, &ptr));
	ASSERT_PTR_EQ(ptr, buf + 2009);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_access_regv_range_spanning_iovs_is_efault)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct iovec iov[2] = {{buf, 100}, {other, 50}};
	struct fid_mr *mr = NULL;
	void *ptr;

	ASSERT_OK(fi_mr_regv(domain, iov, 2, REMOTE_RW, 0, 2, 0, &mr, NULL));
	ASSERT_EQ(access_at(domain, 2, 95, 10, FI_REMOTE_READ, &ptr),
	          -FI_EFAULT);
	ASSERT_EQ(access_at(domain, 2, 0, 150, FI_REMOTE_READ, &ptr),
	          -FI_EFAULT);
	ASSERT_EQ(access_at(domain, 2, 149, 2, FI_REMOTE_READ, &ptr),
	          -FI_EFAULT);
	ASSERT_EQ(access_at(domain, 2, 150, 1, FI_REMOTE_READ, &ptr),
	          -FI_EFAULT);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F35 */
HMR_TEST(mr_access_virt_addr_regv_first_iov)
{
	struct fid_domain *domain = open_domain(FI_MR_VIRT_ADDR, 0);
	struct iovec iov[2] = {{buf + 8, 100}, {other, 50}};
	struct fid_mr *mr = NULL;
	void *ptr;

	ASSERT_OK(fi_mr_regv(domain, iov, 2, REMOTE_RW, 0, 2, 0, &mr, NULL));
	ASSERT_OK(access_at(domain, 2, (uintptr_t)(buf + 10), 4, FI_REMOTE_READ,
	                    &ptr));
	ASSERT_PTR_EQ(ptr, buf + 10);
	ASSERT_EQ(access_at(domain, 2, 10, 4, FI_REMOTE_READ, &ptr),
	          -FI_EFAULT);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_access_range_past_end_is_efault)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct fid_mr *mr = reg_ok(domain, buf, 128, REMOTE_RW, 1, 0);
	void *ptr;

	ASSERT_EQ(access_at(domain, 1, 0, 129, FI_REMOTE_READ, &ptr),
	          -FI_EFAULT);
	ASSERT_EQ(access_at(domain, 1, 120, 9, FI_REMOTE_WRITE, &ptr),
	          -FI_EFAULT);
	ASSERT_EQ(access_at(domain, 1, 128, 1, FI_REMOTE_WRITE, &ptr),
	          -FI_EFAULT);
	ASSERT_EQ(access_at(domain, 1, UINT64_MAX, 2, FI_REMOTE_READ, &ptr),
	          -FI_EFAULT);
	ASSERT_EQ(access_at(domain, 1, 1, SIZE_MAX, FI_REMOTE_READ, &ptr),
	          -FI_EFAULT);
	ASSERT_OK(access_at(domain, 1, 120, 8, FI_REMOTE_WRITE, &ptr));
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

HMR_TEST(mr_access_bad_arguments_are_einval)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct fid_mr *mr = reg_ok(domain, buf, 128, REMOTE_RW, 1, 0);
	void *ptr;

	ASSERT_EQ(access_at(domain, 1, 0, 0, FI_REMOTE_READ, &ptr), -FI_EINVAL);
	ASSERT_EQ(access_at(domain, 1, 0, 8, REMOTE_RW, &ptr), -FI_EINVAL);
	ASSERT_EQ(access_at(domain, 1, 0, 8, 0, &ptr), -FI_EINVAL);
	ASSERT_EQ(access_at(domain, 1, 0, 8, FI_READ, &ptr), -FI_EINVAL);
	ASSERT_EQ(access_at(domain, 1, 0, 8, FI_WRITE, &ptr), -FI_EINVAL);
	ASSERT_EQ(access_at(domain, 1, 0, 8, FI_REMOTE_READ | FI_SEND, &ptr),
	          -FI_EINVAL);
	ASSERT_EQ(hmr_mr_access(domain, 1, 0, 8, FI_REMOTE_READ, NULL),
	          -FI_EINVAL);
	ASSERT_EQ(hmr_mr_access(NULL, 1, 0, 8, FI_REMOTE_READ, &ptr),
	          -FI_EINVAL);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F2 */
HMR_TEST(mr_access_unknown_key_is_enokey)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct fid_mr *mr = reg_ok(domain, buf, 128, REMOTE_RW, 1, 0);
	void *ptr;

	ASSERT_EQ(access_at(domain, 2, 0, 8, FI_REMOTE_READ, &ptr), -FI_ENOKEY);
	ASSERT_EQ(
	        access_at(domain, FI_KEY_NOTAVAIL, 0, 8, FI_REMOTE_READ, &ptr),
	        -FI_ENOKEY);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F16 */
HMR_TEST(mr_access_key_of_other_domain_is_enokey)
{
	struct fid_domain *a = open_domain(0, 0);
	struct fid_domain *b = open_domain(0, 0);
	struct fid_mr *mr = reg_ok(a, buf, 128, REMOTE_RW, 1, 0);
	void *ptr;

	ASSERT_EQ(access_at(b, 1, 0, 8, FI_REMOTE_READ, &ptr), -FI_ENOKEY);
	close_ok(&mr->fid);
	close_ok(&b->fid);
	close_ok(&a->fid);
}

/* fi_mr: F76 F77 F79 */
HMR_TEST(mr_access_checks_remote_rights)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct fid_mr *ro = reg_ok(domain, buf, 64, FI_REMOTE_READ, 1, 0);
	struct fid_mr *wo = reg_ok(domain, buf, 64, FI_REMOTE_WRITE, 2, 0);
	struct fid_mr *local = reg_ok(
	        domain, buf, 64, FI_READ | FI_WRITE | FI_SEND | FI_RECV, 3, 0);
	void *ptr;

	ASSERT_OK(access_at(domain, 1, 0, 8, FI_REMOTE_READ, &ptr));
	ASSERT_EQ(access_at(domain, 1, 0, 8, FI_REMOTE_WRITE, &ptr),
	          -FI_EACCES);
	ASSERT_OK(access_at(domain, 2, 0, 8, FI_REMOTE_WRITE, &ptr));
	ASSERT_EQ(access_at(domain, 2, 0, 8, FI_REMOTE_READ, &ptr), -FI_EACCES);
	ASSERT_EQ(access_at(domain, 3, 0, 8, FI_REMOTE_READ, &ptr), -FI_EACCES);
	ASSERT_EQ(access_at(domain, 3, 0, 8, FI_REMOTE_WRITE, &ptr),
	          -FI_EACCES);
	close_ok(&local->fid);
	close_ok(&wo->fid);
	close_ok(&ro->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F77 */
HMR_TEST(mr_access_write_lands_in_buffer)
{
	struct fid_domain *domain = open_domain(FI_MR_VIRT_ADDR, 0);
	char *mem = calloc(1, 256);
	struct fid_mr *mr;
	void *ptr = NULL;

	ASSERT_TRUE(mem != NULL);
	mr = reg_ok(domain, mem, 256, REMOTE_RW, 5, 0);
	ASSERT_OK(hmr_mr_access(domain, 5, (uintptr_t)mem + 40, 6,
	                        FI_REMOTE_WRITE, &ptr));
	memcpy(ptr, "hello", 6);
	ASSERT_EQ(strcmp(mem + 40, "hello"), 0);

	strcpy(mem + 100, "peer reads this");
	ASSERT_OK(hmr_mr_access(domain, 5, (uintptr_t)mem + 100, 16,
	                        FI_REMOTE_READ, &ptr));
	ASSERT_EQ(memcmp(ptr, "peer reads this", 16), 0);
	close_ok(&mr->fid);
	free(mem);
	close_ok(&domain->fid);
}

/* fi_mr: F20 */
HMR_TEST(mr_access_write_lands_in_second_iov)
{
	struct fid_domain *domain = open_domain(0, 0);
	char *a = calloc(1, 64), *b = calloc(1, 64);
	struct iovec iov[2] = {{a, 64}, {b, 64}};
	struct fid_mr *mr = NULL;
	void *ptr = NULL;

	ASSERT_TRUE(a != NULL && b != NULL);
	ASSERT_OK(fi_mr_regv(domain, iov, 2, REMOTE_RW, 0, 9, 0, &mr, NULL));
	ASSERT_OK(hmr_mr_access(domain, 9, 64 + 10, 4, FI_REMOTE_WRITE, &ptr));
	memcpy(ptr, "abc", 4);
	ASSERT_EQ(strcmp(b + 10, "abc"), 0);
	ASSERT_EQ(a[10], 0);
	close_ok(&mr->fid);
	free(b);
	free(a);
	close_ok(&domain->fid);
}

static struct fid_domain *open_auth_domain(const char *key)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	struct fid_domain *domain = NULL;

	attr.mr_mode = 0;
	attr.auth_key = key;
	attr.auth_key_size = strlen(key);
	ASSERT_OK(hmr_domain_open(&attr, &domain));
	return domain;
}

/* fi_mr: F81 */
HMR_TEST(mr_access_auth_default_is_domain_key)
{
	struct fid_domain *domain = open_auth_domain("abcd");
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 1, 0);
	void *ptr = NULL;

	ASSERT_OK(hmr_mr_access(domain, 1, 0, 8, FI_REMOTE_READ, &ptr));
	ASSERT_OK(hmr_mr_access_auth(domain, "abcd", 4, 1, 0, 8, FI_REMOTE_READ,
	                             &ptr));
	ASSERT_EQ(hmr_mr_access_auth(domain, "abce", 4, 1, 0, 8, FI_REMOTE_READ,
	                             &ptr),
	          -FI_EACCES);
	ASSERT_EQ(hmr_mr_access_auth(domain, "abc", 3, 1, 0, 8, FI_REMOTE_READ,
	                             &ptr),
	          -FI_EACCES);
	ASSERT_EQ(hmr_mr_access_auth(domain, "abcde", 5, 1, 0, 8,
	                             FI_REMOTE_READ, &ptr),
	          -FI_EACCES);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F82 */
HMR_TEST(mr_access_auth_own_key_overrides_domain_key)
{
	struct fid_domain *domain = open_auth_domain("abcd");
	uint8_t own[3] = {'x', 'y', 'z'};
	struct fi_mr_attr attr;
	struct iovec iov;
	struct fid_mr *mr;
	void *ptr = NULL;

	attr_init(&attr, &iov, buf, 64, REMOTE_RW, 1);
	attr.auth_key = own;
	attr.auth_key_size = sizeof(own);
	mr = regattr_ok(domain, &attr, 0);
	/* The key was copied: changing the caller's array changes nothing. */
	own[0] = 'q';
	ASSERT_OK(hmr_mr_access_auth(domain, "xyz", 3, 1, 0, 8, FI_REMOTE_WRITE,
	                             &ptr));
	ASSERT_EQ(hmr_mr_access_auth(domain, "abcd", 4, 1, 0, 8,
	                             FI_REMOTE_WRITE, &ptr),
	          -FI_EACCES);
	/* hmr_mr_access assumes the domain's key. */
	ASSERT_EQ(hmr_mr_access(domain, 1, 0, 8, FI_REMOTE_WRITE, &ptr),
	          -FI_EACCES);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F82 */
HMR_TEST(mr_access_auth_without_any_key)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct fid_mr *mr = reg_ok(domain, buf, 64, REMOTE_RW, 1, 0);
	void *ptr = NULL;

	ASSERT_OK(hmr_mr_access_auth(domain, NULL, 0, 1, 0, 8, FI_REMOTE_READ,
	                             &ptr));
	ASSERT_EQ(hmr_mr_access_auth(domain, "k", 1, 1, 0, 8, FI_REMOTE_READ,
	                             &ptr),
	          -FI_EACCES);
	close_ok(&mr->fid);
	close_ok(&domain->fid);
}

/* fi_mr: F79 */
HMR_TEST(mr_access_overlapping_mrs_have_own_rights)
{
	struct fid_domain *domain = open_domain(0, 0);
	struct fid_mr *a = reg_ok(domain, buf, 256, FI_REMOTE_READ, 1, 0);
	struct fid_mr *b =
	        reg_ok(domain, buf + 128, 256, FI_REMOTE_WRITE, 2, 0);
	void *ptr;

	ASSERT_OK(access_at(domain, 2, 0, 8, FI_REMOTE_WRITE, &ptr));
	ASSERT_PTR_EQ(ptr, buf + 128);
	ASSERT_EQ(access_at(domain, 1, 128, 8, FI_REMOTE_WRITE, &ptr),
	          -FI_EACCES);
	close_ok(&b->fid);
	ASSERT_OK(access_at(domain, 1, 128, 8, FI_REMOTE_READ, &ptr));
	ASSERT_PTR_EQ(ptr, buf + 128);
	close_ok(&a->fid);
	close_ok(&domain->fid);
}

HMR_TEST_MAIN()
