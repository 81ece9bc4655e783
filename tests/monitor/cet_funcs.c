/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* cet_funcs.c: functions built with -fcf-protection=full, for the patcher. */
#include "cet_funcs.h"

/*
 * Each opens with endbr64, as every function of a CET C library does.
 * They use no global and call nothing, so their bytes run anywhere:
 * test_monitor_patch.c copies them to every entry alignment.  The frame
 * pointer is kept (CMakeLists.txt), so cet_frame opens with a push.
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

/* The stack array makes even gcc keep the frame: push %rbp first. */
long cet_frame(long a, long b)
{
	volatile long x[2] = {a, b};

	return x[0] - x[1];
}

/* A hook with endbr64, for the cases with indirect-branch tracking. */
long (*volatile cet_hook_next)(long, long);
volatile long cet_hook_calls;

long cet_hook(long a, long b)
{
	cet_hook_calls++;
	return cet_hook_next(a, b);
}
