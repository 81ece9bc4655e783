/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* patch.c: x86-64 entry patching: reading a prologue, the island, the CAS. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <hmr/hmr.h>

#include "monitor/patch.h"

/*
 * Map of this file: insn_len and foreign_target read the first bytes of
 * a function; find_padding finds never-executed bytes before it; plan
 * decides where our jump goes; island_near places the page of stubs and
 * trampolines within a 32-bit jump of libc; hmr__patch_apply writes.
 */

#if defined(__x86_64__)

enum {
	JMP32 = 5,   /* e9 rel32 */
	JMP8 = 2,    /* eb rel8 */
	ABSJMP = 14, /* ff 25 00000000 <64-bit address> */
	SLOT = 64,   /* Island bytes per function: stub at 0, trampoline. */
	TRAMP = 16,
};

struct plan {
	uint8_t *at;          /* Where our jump goes. */
	size_t copy;          /* Original bytes the trampoline runs, or 0. */
	void (*target)(void); /* Chaining: the foreign jump's destination. */
	uint8_t *pad;         /* Where the 5-byte jump goes if not at `at`. */
	uint64_t *word, old;  /* The aligned word that changes, as it was. */
};

typedef void (*fn)(void);

/* Reads and writes of libc's text bypass the sanitizers: they have no
 * shadow for code (TSan faults writing it), and their interceptors of
 * memcmp and memcpy would look there.  Byte loops through volatile
 * pointers, so the compiler does not turn them back into calls. */
#define NO_SAN __attribute__((no_sanitize("address", "thread")))

NO_SAN static bool same(const uint8_t *a, const uint8_t *b, size_t n)
{
	const volatile uint8_t *x = a;

	while (n--)
		if (*x++ != *b++)
			return false;
	return true;
}

NO_SAN static void copy(uint8_t *dst, const uint8_t *src, size_t n)
{
	volatile uint8_t *d = dst;
	const volatile uint8_t *s = src;

	while (n--)
		*d++ = *s++;
}

NO_SAN static uint64_t load64(const uint64_t *p)
{
	return *(const volatile uint64_t *)p;
}

/* One locked compare-and-swap of an aligned word: other CPUs fetch the
 * old or the new 8 bytes, never a mix. */
NO_SAN static bool cas64(uint64_t *p, uint64_t old, uint64_t val)
{
	uint64_t prev;

	__asm__ volatile("lock cmpxchgq %2, %1"
	                 : "=a"(prev), "+m"(*p)
	                 : "r"(val), "0"(old)
	                 : "memory");
	return prev == old;
}

static fn to_fn(uintptr_t a)
{
	return (fn)a;
}

/* The length of one instruction at c when it is one of the few
 * position-independent kinds that open libc's system call wrappers
 * (register moves, immediates, push, arithmetic on registers); 0 for
 * anything else, which we then refuse to move into a trampoline. */
NO_SAN static size_t insn_len(const uint8_t *c)
{
	size_t rex = (c[0] & 0xf0) == 0x40;
	const uint8_t *o = c + rex;
	bool reg = (o[1] >> 6) == 3;

	if (o[0] >= 0x50 && o[0] <= 0x57)
		return rex + 1;
	if (o[0] >= 0xb8 && o[0] <= 0xbf)
		return rex && (c[0] & 8) ? 10 : rex + 5;
	switch (o[0]) {
	case 0x01:
	case 0x29:
	case 0x31:
	case 0x33:
	case 0x39:
	case 0x3b:
	case 0x85:
	case 0x89:
	case 0x8b:
		return reg ? rex + 2 : 0;
	case 0x83:
		return reg ? rex + 3 : 0;
	case 0x81:
		return reg ? rex + 6 : 0;
	case 0xf7: /* test r, imm32 only */
		return reg && !((o[1] >> 3) & 7) ? rex + 6 : 0;
	}
	return 0;
}

/* Another library's patch: a jump written at the entry.  Its target is
 * that library's hook, with the function's own signature. */
NO_SAN static fn foreign_target(const uint8_t *c)
{
	static const uint8_t rip0[] = {0xff, 0x25, 0, 0, 0, 0};
	int32_t rel;
	uint64_t abs;

	if (c[0] == 0xe9) {
		copy((uint8_t *)&rel, c + 1, 4);
		return to_fn((uintptr_t)c + JMP32 + (intptr_t)rel);
	}
	if (same(c, rip0, sizeof(rip0))) {
		copy((uint8_t *)&abs, c + 6, 8);
		return to_fn(abs);
	}
	/* movabs $x, %rax; jmp *%rax  and  movabs $x, %r11; jmp *%r11 */
	if ((c[0] == 0x48 && c[1] == 0xb8 && c[10] == 0xff && c[11] == 0xe0) ||
	    (c[0] == 0x49 && c[1] == 0xbb && c[10] == 0x41 && c[11] == 0xff &&
	     c[12] == 0xe3)) {
		copy((uint8_t *)&abs, c + 2, 8);
		return to_fn(abs);
	}
	return NULL;
}

/* Five or more bytes right before `entry` that no thread executes: the
 * assembler's alignment no-ops (or int3s) after an instruction that does
 * not fall through (ret, jmp, or a call to a noreturn function such as
 * __stack_chk_fail).  NULL when there are none. */
NO_SAN static uint8_t *find_padding(uint8_t *entry)
{
	static const uint8_t nops[][10] = {
	        {0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0},
	        {0x66, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0},
	        {0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0},
	        {0x0f, 0x1f, 0x80, 0, 0, 0, 0},
	        {0x66, 0x0f, 0x1f, 0x44, 0, 0},
	        {0x0f, 0x1f, 0x44, 0, 0},
	        {0xcc, 0xcc, 0xcc, 0xcc, 0xcc},
	};
	static const size_t lens[] = {10, 9, 8, 7, 6, 5, 5};
	uint8_t *pad;
	size_t i;

	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		pad = entry - lens[i];
		if (!same(pad, nops[i], lens[i]))
			continue;
		if (pad[-1] == 0xc3 || pad[-5] == 0xe8 || pad[-5] == 0xe9 ||
		    pad[-2] == 0xeb)
			return pad;
	}
	return NULL;
}

/* Where the jump goes and what the hook will call.  0, or -FI_ENOSYS
 * with why when the entry holds instructions we do not move. */
NO_SAN static int plan(struct hmr__patch *p, struct plan *pl, char *why,
                       size_t why_len)
{
	static const uint8_t endbr64[] = {0xf3, 0x0f, 0x1e, 0xfa};
	uint8_t *c = p->entry;
	size_t len, jlen;

	memset(pl, 0, sizeof(*pl));
	pl->at = c + (same(c, endbr64, 4) ? 4 : 0);
	pl->target = foreign_target(pl->at);
	len = pl->target ? JMP32 : insn_len(pl->at);
	if (!pl->target && len && len < JMP32 && len >= JMP8) {
		pl->pad = find_padding(c);
		if (!pl->pad)
			len = 0;
	}
	if (!len) {
		snprintf(why, why_len,
		         "memhooks: %s at %p starts with instructions this "
		         "build cannot move (%02x %02x %02x %02x)",
		         p->name, p->entry, pl->at[0], pl->at[1], pl->at[2],
		         pl->at[3]);
		return -FI_ENOSYS;
	}
	pl->copy = pl->target ? 0 : len;
	jlen = pl->pad ? JMP8 : JMP32;
	pl->word = (uint64_t *)((uintptr_t)pl->at & ~(uintptr_t)7);
	if ((uintptr_t)pl->at - (uintptr_t)pl->word + jlen > 8) {
		snprintf(why, why_len,
		         "memhooks: %s at %p: its first instruction crosses "
		         "an 8-byte boundary, so it cannot be replaced with "
		         "one atomic write",
		         p->name, p->entry);
		return -FI_ENOSYS;
	}
	pl->old = load64(pl->word);
	return 0;
}

static bool rel32(const uint8_t *from_end, const uint8_t *to, int32_t *out)
{
	intptr_t d = (intptr_t)to - (intptr_t)from_end;

	if (d < INT32_MIN || d > INT32_MAX)
		return false;
	*out = (int32_t)d;
	return true;
}

static void put_absjmp(uint8_t *at, uintptr_t to)
{
	static const uint8_t rip0[] = {0xff, 0x25, 0, 0, 0, 0};

	memcpy(at, rip0, sizeof(rip0));
	memcpy(at + sizeof(rip0), &to, 8);
}

/* A page within a 32-bit jump of `near` (libc's text), found by asking
 * for free addresses below then above it. */
static uint8_t *island_near(const uint8_t *near, size_t len)
{
	const uintptr_t step = 1 << 20;
	uintptr_t base = (uintptr_t)near & ~(step - 1), hint;
	void *m;
	int k, dir;

	for (k = 1; k < 1024; k++) {
		for (dir = -1; dir <= 1; dir += 2) {
			if (dir < 0 && base < (uintptr_t)k * step)
				continue;
			hint = dir < 0 ? base - k * step : base + k * step;
			m = mmap((void *)hint, len, PROT_READ | PROT_WRITE,
			         MAP_PRIVATE | MAP_ANONYMOUS |
			                 MAP_FIXED_NOREPLACE,
			         -1, 0);
			if (m == MAP_FAILED)
				continue;
			if ((uintptr_t)m == hint)
				return m;
			munmap(m, len); /* Old kernel: a hint only. */
		}
	}
	return NULL;
}

/* Write bytes of libc's text: the pages are made writable (and stay
 * executable: other threads run them) for the moment of the write. */
NO_SAN static int text_write(uint8_t *at, size_t len, uint64_t *word,
                             uint64_t old, uint64_t val)
{
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)(at ? at : (uint8_t *)word) & ~(pg - 1);
	uintptr_t hi = ((uintptr_t)word + 8 + pg - 1) & ~(pg - 1);
	bool ok = true;

	if (mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE | PROT_EXEC))
		return -FI_EACCES;
	if (at)
		copy(at, (const uint8_t *)&val, len);
	else
		ok = cas64(word, old, val);
	mprotect((void *)lo, hi - lo, PROT_READ | PROT_EXEC);
	return ok ? 0 : -FI_EBUSY;
}

static int install(struct hmr__patch *p, struct plan *pl, uint8_t *slot)
{
	uint8_t *stub = slot, *dst = pl->pad ? pl->pad : pl->at;
	uint64_t val = pl->old, jmp = 0xe9;
	size_t off = (size_t)(pl->at - (uint8_t *)pl->word);
	int32_t r;
	int8_t r8;
	int rc;

	if (!rel32(dst + JMP32, stub, &r))
		return -FI_ENOSYS;
	memcpy((uint8_t *)&jmp + 1, &r, 4);
	atomic_store(&p->next,
	             pl->copy ? to_fn((uintptr_t)slot + TRAMP) : pl->target);
	if (pl->pad) {
		/* Nobody runs the padding: a plain write, before the entry
		 * jump that leads there exists. */
		rc = text_write(pl->pad, JMP32, pl->word, 0, jmp);
		if (rc)
			return rc;
		r8 = (int8_t)(pl->pad - (pl->at + JMP8));
		memcpy((uint8_t *)&val + off, "\xeb", 1);
		memcpy((uint8_t *)&val + off + 1, &r8, 1);
	} else {
		memcpy((uint8_t *)&val + off, &jmp, JMP32);
	}
	rc = text_write(NULL, 0, pl->word, pl->old, val);
	if (rc)
		return rc;
	p->word = pl->word;
	p->mine = val;
	return 0;
}

int hmr__patch_apply(struct hmr__patch *p, size_t n, char *why, size_t why_len)
{
	struct plan pl[16];
	uint8_t *island, *slot;
	size_t i, len = (n * SLOT + 4095) & ~(size_t)4095;
	int rc;

	if (n > sizeof(pl) / sizeof(pl[0]))
		return -FI_EINVAL;
	for (i = 0; i < n; i++) {
		rc = plan(&p[i], &pl[i], why, why_len);
		if (rc)
			return rc;
		if (pl[i].pad && pl[i].pad < pl[i].at + JMP8 - 128)
			return -FI_ENOSYS;
	}
	island = island_near(p[0].entry, len);
	if (!island) {
		snprintf(why, why_len,
		         "memhooks: no free page within 2 GiB of libc");
		return -FI_ENOMEM;
	}
	for (i = 0; i < n; i++) {
		slot = island + i * SLOT;
		put_absjmp(slot, (uintptr_t)p[i].hook);
		if (pl[i].copy) {
			copy(slot + TRAMP, pl[i].at, pl[i].copy);
			put_absjmp(slot + TRAMP + pl[i].copy,
			           (uintptr_t)pl[i].at + pl[i].copy);
		}
	}
	/* The island is never unmapped: a thread may be inside it. */
	if (mprotect(island, len, PROT_READ | PROT_EXEC))
		return -FI_EACCES;
	for (i = 0; i < n; i++) {
		rc = install(&p[i], &pl[i], island + i * SLOT);
		if (rc) {
			snprintf(why, why_len,
			         "memhooks: %s: %s while patching", p[i].name,
			         rc == -FI_EBUSY ? "its bytes changed"
			                         : "cannot write libc's text");
			return rc;
		}
	}
	return 0;
}

bool hmr__patch_intact(const struct hmr__patch *p)
{
	return p->word && load64(p->word) == p->mine;
}

#else /* !__x86_64__ */

int hmr__patch_apply(struct hmr__patch *p, size_t n, char *why, size_t why_len)
{
	(void)p;
	(void)n;
	snprintf(why, why_len,
	         "memhooks: code patching is implemented for x86-64 only");
	return -FI_ENOSYS;
}

bool hmr__patch_intact(const struct hmr__patch *p)
{
	(void)p;
	return false;
}

#endif
