/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* cet_funcs.h: functions with CET prologues (cet_funcs.c). */
#ifndef HMR_TESTS_MONITOR_CET_FUNCS_H
#define HMR_TESTS_MONITOR_CET_FUNCS_H

long cet_mix(long a, long b);   /* endbr64; lea; add; ret */
long cet_const(long a, long b); /* endbr64; mov $11, %eax; ret */
long cet_frame(long a, long b); /* endbr64; push %rbp; mov; ... */

extern long (*volatile cet_hook_next)(long, long);
extern volatile long cet_hook_calls;
long cet_hook(long a, long b); /* counts, then calls cet_hook_next */

#endif /* HMR_TESTS_MONITOR_CET_FUNCS_H */
