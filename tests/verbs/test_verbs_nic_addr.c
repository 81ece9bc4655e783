/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_verbs_nic_addr.c: the NIC address of a verbs region, without a NIC. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <hmr/hmr.h>

#include "harness.h"
#include "verbs/verbs.h"

/*
 * hmr__verbs_nic_addr picks the hca_va (or dma-buf iova) of a region, and
 * hmr_verbs_sge_addr turns a buffer inside it into the address its lkey
 * takes.  The VM suite (vm_verbs_mr) moves bytes through both on rxe;
 * these check the arithmetic at 0, at the top of the address space and
 * at each off-by-one of a page, where the NIC cannot be asked.
 */
#define TOP   UINT64_MAX
#define LOCAL IBV_ACCESS_LOCAL_WRITE
#define PEER  (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ)
#define UNSET 0x5a5a5a5a5a5a5a5aULL /* iova is left untouched on error */

static uint64_t pg(void)
{
	return (uint64_t)sysconf(_SC_PAGESIZE);
}

/* The NIC address, or UNSET; *ret the return code. */
static uint64_t nic(bool virt, int access, uint64_t va, uint64_t pos,
                    uint64_t len, int *ret)
{
	uint64_t iova = UNSET;

	*ret = hmr__verbs_nic_addr(virt, access, va, pos, len, &iova);
	return iova;
}

/* Runs nic() with stderr in a file; true when the log holds `want`. */
static bool logs(const char *want, bool virt, int access, uint64_t va,
                 uint64_t len, int *ret)
{
	char text[1024] = "";
	FILE *f = tmpfile();
	int saved = dup(2);
	size_t n;

	if (!f || saved < 0)
		return false;
	fflush(stderr);
	dup2(fileno(f), 2);
	nic(virt, access, va, va, len, ret);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	return strstr(text, want) != NULL;
}

HMR_TEST(verbs_nic_addr_virt_addr_is_the_virtual_address)
{
	int ret;

	ASSERT_U64_EQ(nic(true, PEER, 0, 0, 1, &ret), 0);
	ASSERT_OK(ret);
	ASSERT_U64_EQ(nic(true, PEER, pg() + 7, pg() + 7, 8, &ret), pg() + 7);
	ASSERT_OK(ret);
	ASSERT_U64_EQ(nic(true, LOCAL, pg() + 7, pg() + 7, 8, &ret), pg() + 7);
	ASSERT_OK(ret);
	/* The last byte of the address space: its end is 2^64, refused. */
	ASSERT_U64_EQ(nic(true, LOCAL, TOP - pg() + 1, 0, pg() - 1, &ret),
	              TOP - pg() + 1);
	ASSERT_OK(ret);
	ASSERT_U64_EQ(nic(true, LOCAL, TOP - pg() + 1, 0, pg(), &ret), UNSET);
	ASSERT_EQ(ret, -FI_EINVAL);
}

HMR_TEST(verbs_nic_addr_peer_region_on_a_page_is_0)
{
	int ret;

	ASSERT_U64_EQ(nic(false, PEER, 0, 0, 1, &ret), 0);
	ASSERT_OK(ret);
	ASSERT_U64_EQ(nic(false, PEER, pg(), pg(), pg(), &ret), 0);
	ASSERT_OK(ret);
	/* The top page: the NIC range is [0, len), whatever the address. */
	ASSERT_U64_EQ(
	        nic(false, PEER, TOP - pg() + 1, TOP - pg() + 1, pg(), &ret),
	        0);
	ASSERT_OK(ret);
}

HMR_TEST(verbs_nic_addr_peer_region_mid_page_is_einval)
{
	static const int rights[] = {
	        IBV_ACCESS_REMOTE_READ,   IBV_ACCESS_REMOTE_WRITE,
	        IBV_ACCESS_REMOTE_ATOMIC, IBV_ACCESS_MW_BIND,
	        IBV_ACCESS_FLUSH_GLOBAL,  IBV_ACCESS_FLUSH_PERSISTENT,
	};
	uint64_t at[] = {1, 7, pg() - 1, pg() + 1, TOP};
	size_t i, j;
	int ret;

	for (i = 0; i < sizeof(rights) / sizeof(rights[0]); i++) {
		for (j = 0; j < sizeof(at) / sizeof(at[0]); j++) {
			ASSERT_U64_EQ(nic(false, LOCAL | rights[i], at[j],
			                  at[j], 1, &ret),
			              UNSET);
			ASSERT_EQ(ret, -FI_EINVAL);
		}
	}
	ASSERT_TRUE(
	        logs("starts 0x7 into a page", false, PEER, pg() + 7, 8, &ret));
	ASSERT_EQ(ret, -FI_EINVAL);
}

HMR_TEST(verbs_nic_addr_local_region_is_its_page_offset)
{
	/* Local rights only, including none at all and what ODP adds. */
	static const int rights[] = {0, LOCAL, IBV_ACCESS_RELAXED_ORDERING,
	                             LOCAL | IBV_ACCESS_ON_DEMAND};
	uint64_t at[] = {0,    1,        7,          pg() - 1,
	                 pg(), pg() + 1, TOP - pg(), TOP - pg() + 1,
	                 TOP};
	uint64_t want[] = {0, 1, 7, pg() - 1, 0, 1, pg() - 1, 0, pg() - 1};
	size_t i, j;
	int ret;

	for (i = 0; i < sizeof(rights) / sizeof(rights[0]); i++) {
		for (j = 0; j < sizeof(at) / sizeof(at[0]); j++) {
			ASSERT_U64_EQ(
			        nic(false, rights[i], at[j], at[j], 1, &ret),
			        want[j]);
			ASSERT_OK(ret);
		}
	}
}

HMR_TEST(verbs_nic_addr_dmabuf_takes_the_offset_page_offset)
{
	int ret;

	/* A caller's dma-buf: pos is the offset into it, not va. */
	ASSERT_U64_EQ(nic(false, LOCAL, 1 << 20, 3 * pg() + 7, 8, &ret), 7);
	ASSERT_OK(ret);
	ASSERT_U64_EQ(nic(false, LOCAL, 0, pg() - 1, 2, &ret), pg() - 1);
	ASSERT_OK(ret);
	ASSERT_U64_EQ(nic(false, PEER, 0, pg() - 1, 2, &ret), UNSET);
	ASSERT_EQ(ret, -FI_EINVAL);
	ASSERT_U64_EQ(nic(false, PEER, 7, 2 * pg(), 2, &ret), 0);
	ASSERT_OK(ret);
}

HMR_TEST(verbs_nic_addr_end_at_2_64_is_einval)
{
	int ret;

	/* [iova, iova + len): the last representable end passes, 2^64 and
	 * beyond do not, and the log says so. */
	ASSERT_U64_EQ(nic(false, LOCAL, 7, 7, TOP - 7, &ret), 7);
	ASSERT_OK(ret);
	ASSERT_U64_EQ(nic(false, LOCAL, 7, 7, TOP - 6, &ret), UNSET);
	ASSERT_EQ(ret, -FI_EINVAL);
	ASSERT_U64_EQ(nic(false, LOCAL, 7, 7, TOP, &ret), UNSET);
	ASSERT_EQ(ret, -FI_EINVAL);
	ASSERT_U64_EQ(nic(false, PEER, 0, 0, TOP, &ret), 0);
	ASSERT_OK(ret);
	ASSERT_TRUE(logs("overflows", false, LOCAL, pg() - 1, TOP, &ret));
	ASSERT_EQ(ret, -FI_EINVAL);
}

/* hmr_verbs_sge_addr with the desc a local region gets: its start and
 * its page offset; a cached registration may start before the buffer. */
HMR_TEST(verbs_sge_addr_of_local_region_counts_from_its_page_offset)
{
	struct hmr_verbs_desc desc = {.start = 7, .iova = 7};
	uint64_t top = TOP - pg() + 1;

	ASSERT_U64_EQ(hmr_verbs_sge_addr(&desc, (void *)7), 7);
	ASSERT_U64_EQ(hmr_verbs_sge_addr(&desc, (void *)(7 + pg() + 5)),
	              7 + pg() + 5);
	desc.start = pg() + 7;
	ASSERT_U64_EQ(hmr_verbs_sge_addr(&desc, (void *)(uintptr_t)(pg() + 7)),
	              7);
	ASSERT_U64_EQ(hmr_verbs_sge_addr(&desc, (void *)(uintptr_t)(pg() + 8)),
	              8);
	desc.start = top;
	desc.iova = 0;
	ASSERT_U64_EQ(hmr_verbs_sge_addr(&desc, (void *)(uintptr_t)TOP),
	              pg() - 1);
	desc.start = TOP;
	desc.iova = pg() - 1;
	ASSERT_U64_EQ(hmr_verbs_sge_addr(&desc, (void *)(uintptr_t)TOP),
	              pg() - 1);
}

HMR_TEST_MAIN()
