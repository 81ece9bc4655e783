/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* x86.c: instruction lengths, foreign jumps and padding at a function entry. */
#include <string.h>

#include "monitor/x86.h"

/*
 * Reads of libc's text bypass the sanitizers: they keep no shadow for
 * code, and their memcmp interceptor would look there.  Bytes are read
 * one at a time through the pointer, never through a library call.
 */
#define NO_SAN __attribute__((no_sanitize("address", "thread")))

enum { MAX_INSN = 15 };

NO_SAN bool hmr__x86_is_endbr64(const uint8_t *c)
{
	return c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa;
}

NO_SAN size_t hmr__x86_push_len(const uint8_t *c)
{
	if (c[0] >= 0x50 && c[0] <= 0x57)
		return 1;
	if (c[0] == 0x41 && c[1] >= 0x50 && c[1] <= 0x57)
		return 2;
	return 0;
}

/* The ModRM byte at m, with its SIB and displacement: their length, or
 * 0 for a RIP-relative operand (its meaning depends on the address). */
NO_SAN static size_t modrm_len(const uint8_t *m)
{
	unsigned mod = m[0] >> 6, rm = m[0] & 7;
	size_t n = 1;

	if (mod == 3)
		return 1;
	if (rm == 4) {
		n++; /* SIB; base 101 with mod 00: a 32-bit displacement. */
		if (mod == 0 && (m[1] & 7) == 5)
			return n + 4;
	} else if (mod == 0 && rm == 5) {
		return 0;
	}
	return n + (mod == 1 ? 1 : mod == 2 ? 4 : 0);
}

/* What follows the opcode of a one-byte instruction with a ModRM byte:
 * the immediate's length, or -1 when the instruction is not one we move
 * (group opcodes whose reg field picks a branch or a call). */
static int imm_after_modrm(uint8_t op, uint8_t modrm, size_t immz)
{
	unsigned reg = (modrm >> 3) & 7;

	if (op < 0x40 && (op & 7) <= 3)
		return 0; /* add, or, adc, sbb, and, sub, xor, cmp */
	switch (op) {
	case 0x63: /* movsxd */
	case 0x84: /* test */
	case 0x85:
	case 0x86: /* xchg */
	case 0x87:
	case 0x88: /* mov */
	case 0x89:
	case 0x8a:
	case 0x8b:
	case 0x8d: /* lea */
	case 0xd1: /* shifts by 1 or cl */
	case 0xd3:
		return 0;
	case 0x69: /* imul imm32 */
		return (int)immz;
	case 0x6b: /* imul imm8 */
	case 0x80:
	case 0x83:
	case 0xc0:
	case 0xc1:
		return 1;
	case 0x81:
		return (int)immz;
	case 0xc6: /* mov imm */
		return reg == 0 ? 1 : -1;
	case 0xc7:
		return reg == 0 ? (int)immz : -1;
	case 0xf6: /* test imm; not, neg, mul, div */
		return reg <= 1 ? 1 : 0;
	case 0xf7:
		return reg <= 1 ? (int)immz : 0;
	case 0xff: /* inc, dec, push; not call or jmp */
		return reg <= 1 || reg == 6 ? 0 : -1;
	}
	return -1;
}

/* 0f-prefixed instructions: -1 unless known; 1 when a ModRM follows, 0
 * when the instruction ends after its second byte. */
static int two_byte(uint8_t op2)
{
	if (op2 == 0x05) /* syscall: it returns to the next instruction */
		return 0;
	if (op2 == 0x1f || op2 == 0xaf || (op2 >= 0x40 && op2 <= 0x4f) ||
	    op2 == 0xb6 || op2 == 0xb7 || op2 == 0xbe || op2 == 0xbf)
		return 1; /* nop, imul, cmov, movzx, movsx */
	return -1;
}

NO_SAN size_t hmr__x86_movable_len(const uint8_t *c)
{
	const uint8_t *o = c;
	bool rexw = false;
	size_t immz = 4, m, n;
	int imm, k;
	uint8_t op;

	if (hmr__x86_is_endbr64(c))
		return 4;
	/* Operand size and the fs/gs segments (TLS: absolute, not RIP). */
	for (k = 0; k < 4 && (*o == 0x66 || *o == 0x64 || *o == 0x65); k++)
		if (*o++ == 0x66)
			immz = 2;
	if ((*o & 0xf0) == 0x40)
		rexw = *o++ & 8;
	op = *o++;
	n = (size_t)(o - c);
	if ((op >= 0x50 && op <= 0x5f) || op == 0x90)
		return n; /* push, pop, nop */
	if (op >= 0xb8 && op <= 0xbf)
		return n + (rexw ? 8 : immz);
	if (op >= 0xb0 && op <= 0xb7)
		return n + 1;
	if (op < 0x40 && (op & 7) == 4)
		return n + 1; /* op al, imm8 */
	if (op < 0x40 && (op & 7) == 5)
		return n + immz; /* op eax, imm32 */
	if (op == 0x0f) {
		imm = two_byte(*o++);
		n++;
		if (imm <= 0)
			return imm < 0 ? 0 : n;
		imm = 0;
	} else {
		imm = imm_after_modrm(op, *o, immz);
		if (imm < 0)
			return 0;
	}
	m = modrm_len(o);
	if (!m || n + m + (size_t)imm > MAX_INSN)
		return 0;
	return n + m + (size_t)imm;
}

NO_SAN static uintptr_t load_rel32(const uint8_t *p)
{
	uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 |
	             (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;

	return (uintptr_t)(intptr_t)(int32_t)u;
}

NO_SAN static uintptr_t load_abs(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return (uintptr_t)v;
}

NO_SAN uintptr_t hmr__x86_jump_target(const uint8_t *c)
{
	uintptr_t t;

	if (c[0] == 0xe9)
		return (uintptr_t)c + 5 + load_rel32(c + 1);
	if (c[0] == 0xeb) {
		t = (uintptr_t)c + 2 + (uintptr_t)(intptr_t)(int8_t)c[1];
		if (*(const uint8_t *)t == 0xe9)
			return t + 5 + load_rel32((const uint8_t *)t + 1);
		return t;
	}
	/* jmp *0(%rip), the address right after it */
	if (c[0] == 0xff && c[1] == 0x25 && !c[2] && !c[3] && !c[4] && !c[5])
		return load_abs(c + 6);
	/* movabs $x, %rax; jmp *%rax  and  movabs $x, %r11; jmp *%r11 */
	if ((c[0] == 0x48 && c[1] == 0xb8 && c[10] == 0xff && c[11] == 0xe0) ||
	    (c[0] == 0x49 && c[1] == 0xbb && c[10] == 0x41 && c[11] == 0xff &&
	     c[12] == 0xe3))
		return load_abs(c + 2);
	return 0;
}

/* The length of one no-op at p (the assembler's padding forms: 90,
 * 0f 1f with any ModRM, each with 66 and 2e prefixes, and int3), or 0. */
NO_SAN static size_t nop_len(const uint8_t *p)
{
	size_t n = 0, m;

	if (p[0] == 0xcc)
		return 1;
	while (n < 8 && (p[n] == 0x66 || p[n] == 0x2e))
		n++;
	if (p[n] == 0x90)
		return n + 1;
	if (p[n] == 0x0f && p[n + 1] == 0x1f) {
		m = modrm_len(p + n + 2);
		return m ? n + 2 + m : 0;
	}
	return 0;
}

/* The instruction that ends at p does not fall through to p. */
NO_SAN static bool ends_flow(const uint8_t *p)
{
	return p[-1] == 0xc3 ||                           /* ret */
	       p[-2] == 0xeb ||                           /* jmp rel8 */
	       p[-5] == 0xe9 ||                           /* jmp rel32 */
	       p[-5] == 0xe8 ||                           /* call, noreturn */
	       (p[-2] == 0x0f && p[-1] == 0x0b) ||        /* ud2 */
	       (p[-2] == 0xff && (p[-1] & 0xf8) == 0xe0); /* jmp *%reg */
}

NO_SAN size_t hmr__x86_padding_before(const uint8_t *entry, size_t need)
{
	const uint8_t *p;
	size_t k, len;

	/* Longest first: 32 bytes covers alignment to 32. */
	for (k = 32; k >= need && k > 0; k--) {
		for (p = entry - k; p < entry; p += len) {
			len = nop_len(p);
			if (!len)
				break;
		}
		if (p == entry && ends_flow(entry - k))
			return k;
	}
	return 0;
}
