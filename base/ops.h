/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* ops.h: ops tables whose NULL slots are filled from a stub table. */
#ifndef HMR_BASE_OPS_H
#define HMR_BASE_OPS_H

#include <stddef.h>

/*
 * hmem/'s backend tables and core/'s registrar tables share one shape:
 * data members first, then only function pointers, listed in order by an
 * X-macro SLOTS(X).  A table is used through a merged copy whose NULL
 * slots point at a stub table (written positionally, so a slot the stubs
 * lack fails to compile), and callers never test a slot for NULL.
 */

#define HMR_OPS_COUNT_(slot) +1

/* Fails the build when SLOTS and the struct disagree on the number of
 * function slots after `first`. */
#define HMR_OPS_CHECK(type, first, SLOTS)                                      \
	_Static_assert(sizeof(type) == offsetof(type, first) +                 \
	                                       (0 SLOTS(HMR_OPS_COUNT_)) *     \
	                                               sizeof(int (*)(void)),  \
	               #SLOTS " must list every slot of " #type)

/* *merged = *table, with each NULL slot taken from *stubs.  The three
 * arguments are evaluated once per slot: pass plain pointers. */
#define HMR_OPS_FILL_(slot)                                                    \
	hmr_ops_m_->slot =                                                     \
	        hmr_ops_t_->slot ? hmr_ops_t_->slot : hmr_ops_s_->slot;
#define HMR_OPS_MERGE(SLOTS, merged, table, stubs)                             \
	do {                                                                   \
		__typeof__(merged) hmr_ops_m_ = (merged);                      \
		__typeof__(table) hmr_ops_t_ = (table);                        \
		__typeof__(stubs) hmr_ops_s_ = (stubs);                        \
		*hmr_ops_m_ = *hmr_ops_t_;                                     \
		SLOTS(HMR_OPS_FILL_)                                           \
	} while (0)

#endif /* HMR_BASE_OPS_H */
