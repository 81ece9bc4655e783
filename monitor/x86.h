/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* x86.h: reading x86-64 machine code at a function's entry, for patch.c. */
#ifndef HMR_MONITOR_X86_H
#define HMR_MONITOR_X86_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Why a decoder of our own: the patcher (patch.c) moves the first
 * instruction of munmap and its kin into a trampoline, so it must know
 * where that instruction ends, and that it means the same at another
 * address.  The C libraries we know open these functions with a handful
 * of instruction kinds (Debian 12, Debian trixie, Ubuntu 24.04: their
 * bytes are in tests/monitor/test_monitor_patch.c): endbr64, push, mov
 * of an immediate, register moves, sub of rsp, test of a register, a
 * store to the stack.  Anything this does not know, or that depends on
 * where it runs (a RIP-relative operand, a branch, a call), has length 0
 * and is never moved.
 */

/* The length of the instruction at c when it can run at any address
 * (1 to 15), else 0. */
size_t hmr__x86_movable_len(const uint8_t *c);

/* c is endbr64 (f3 0f 1e fa): the landing mark indirect branches need
 * under indirect-branch tracking (CET IBT). */
bool hmr__x86_is_endbr64(const uint8_t *c);

/* c is push of a general register (50+r, or 41 50+r): 1 or 2, else 0. */
size_t hmr__x86_push_len(const uint8_t *c);

/* Another library's patch at c: a jump written at a function's entry
 * (e9 rel32; eb rel8 to an e9 rel32, as hmr itself writes; ff 25 with
 * an absolute address; movabs to rax or r11 then an indirect jump).
 * Returns where it finally leads, or 0 when c holds no such jump. */
uintptr_t hmr__x86_jump_target(const uint8_t *c);

/* Bytes right before `entry` that no thread executes: the assembler's
 * alignment no-ops (any mix of the nop forms and int3) after an
 * instruction that does not fall through (ret, jmp, ud2, or a call to a
 * function that does not return, such as __stack_chk_fail, which is why
 * it is followed by padding).  Returns how many bytes (the padding is
 * [entry - n, entry)), 0 when fewer than `need`. */
size_t hmr__x86_padding_before(const uint8_t *entry, size_t need);

#endif /* HMR_MONITOR_X86_H */
