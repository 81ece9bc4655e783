/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_oserr.c: every errno leaves hmr as a -FI_E* code. */
#include <errno.h>

#include <hmr/hmr.h>

#include "harness.h"
#include "base/oserr.h"

HMR_TEST(os_error_named_errnos_pass_as_fi_codes)
{
	ASSERT_EQ(hmr__os_error(ENOMEM), -FI_ENOMEM);
	ASSERT_EQ(hmr__os_error(-EBUSY), -FI_EBUSY);
	ASSERT_EQ(hmr__os_error(EKEYREJECTED), -FI_EKEYREJECTED);
	ASSERT_EQ(hmr__os_error(EPERM), -FI_EPERM);
}

/* ENOTSUPP (524) is the kernel's own, with no name in user space. */
HMR_TEST(os_error_enotsupp_524_is_eopnotsupp)
{
	ASSERT_EQ(hmr__os_error(524), -FI_EOPNOTSUPP);
	ASSERT_EQ(hmr__os_error(ENOTSUP), -FI_EOPNOTSUPP);
}

HMR_TEST(os_error_unnamed_is_eother_never_itself)
{
	ASSERT_EQ(hmr__os_error(EXDEV), -FI_EOTHER);
	ASSERT_EQ(hmr__os_error(0), -FI_EOTHER);
	ASSERT_EQ(hmr__os_error(4095), -FI_EOTHER);
	ASSERT_EQ(hmr__os_error(FI_EOTHER), -FI_EOTHER);
}

HMR_TEST_MAIN()
