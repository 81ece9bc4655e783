/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* cet_funcs.c: functions built with -fcf-protection=full, for the patcher. */
#include "cet_funcs.h"

/*
 * Each opens with endbr64, as every function of a CET C library does.
 * They use no global and call nothing, so their bytes run anywhere:
 * test_monitor_patch.c copies them to every entry alignment.  cet_frame
 * is in cet_frame.c, built with frame pointers kept.
 */
long cet_mix(long a, long b)
{
	return a * 3 + b;
}

long cet_const(long a, long b)
{
	(void)a;
	(void)b;
	return 11;
}

/* A hook with endbr64, for the cases with indirect-branch tracking. */
long (*volatile cet_hook_next)(long, long);
volatile long cet_hook_calls;

long cet_hook(long a, long b)
{
	cet_hook_calls++;
	return cet_hook_next(a, b);
}
