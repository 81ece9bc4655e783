/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* vm_case.h: the CASE lines test programs print for the VM payload runner,
 * and the fd count their leak checks compare. */
#ifndef HMR_VM_CASE_H
#define HMR_VM_CASE_H

/*
 * vm_case("name", ok, "reason %d", ...) prints "CASE PASS name" or
 * "CASE FAIL name: reason" (flushed at once: a crash later loses nothing).
 * vm_case_exit() is the program's exit status: 1 if a case failed.
 */

#define VM_PRINTF(f, a) __attribute__((format(printf, f, a)))

/* Print the case's line; return ok. */
int vm_case(const char *name, int ok, const char *fmt, ...) VM_PRINTF(3, 4);
void vm_case_pass(const char *name);
void vm_case_fail(const char *name, const char *fmt, ...) VM_PRINTF(2, 3);
void vm_case_skip(const char *name, const char *fmt, ...) VM_PRINTF(2, 3);
int vm_case_exit(void);
/* The process's open file descriptors (its /proc/self/fd entries, the
 * listing's own included: compare counts); -1 if it cannot be read. */
int vm_open_fds(void);

#endif
