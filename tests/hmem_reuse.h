/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* hmem_reuse.h: issue 11's sequence, for any backend's test: a freed
 * device address handed out again is classified as the device's. */
#ifndef HMR_TESTS_HMEM_REUSE_H
#define HMR_TESTS_HMEM_REUSE_H

#include <hmr/hmr.h>

#include "harness.h"

/* The application's allocator for one backend, through its runtime. */
struct reuse_ops {
	void *(*alloc)(void *ctx);
	void (*free)(void *ctx, void *p);
	void *ctx;
};

/*
 * Allocate, classify (iface), free, classify twice (host: the second
 * would come from the memtype cache), allocate again (the simulator
 * hands the same address back, checked), classify (iface, at its base).
 */
static inline void expect_reuse_is_device(const struct reuse_ops *o,
                                          enum fi_hmem_iface iface)
{
	struct hmr_hmem_info info;
	void *p = o->alloc(o->ctx), *q;
	int i;

	ASSERT_OK(hmr_hmem_query(p, 4096, &info));
	ASSERT_EQ(info.iface, iface);
	o->free(o->ctx, p);
	for (i = 0; i < 2; i++) {
		ASSERT_OK(hmr_hmem_query(p, 4096, &info));
		ASSERT_EQ(info.iface, FI_HMEM_SYSTEM);
	}
	q = o->alloc(o->ctx);
	ASSERT_PTR_EQ(q, p);
	ASSERT_OK(hmr_hmem_query(p, 4096, &info));
	ASSERT_EQ(info.iface, iface);
	ASSERT_U64_EQ(info.base, (uintptr_t)q);
	o->free(o->ctx, q);
}

#endif /* HMR_TESTS_HMEM_REUSE_H */
