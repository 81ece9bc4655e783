/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* cet_frame.c: a CET function that opens with push %rbp, for the patcher. */
#include "cet_funcs.h"

/* Built with frame pointers kept (CMakeLists.txt); the stack array makes
 * even gcc keep the frame of a leaf: endbr64; push %rbp; mov %rsp, %rbp. */
long cet_frame(long a, long b)
{
	volatile long x[2] = {a, b};

	return x[0] - x[1];
}
