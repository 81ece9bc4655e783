/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* patch.c: x86-64 entry patching: reading a prologue, the island, the CAS. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <hmr/hmr.h>

#include "monitor/patch.h"
#include "monitor/x86.h"

/*
 * Map of this file: plan decides where our jump goes (reading the entry
 * with x86.c); island_near places the page of stubs and trampolines
 * within a 32-bit jump of libc; install writes the padding then the entry
 * word; hmr__patch_apply does it for a set of functions, all or none.
 */

#if defined(__x86_64__)

enum {
	JMP32 = 5,   /* e9 rel32 */
	JMP8 = 2,    /* eb rel8 */
	ABSJMP = 14, /* ff 25 00000000 <64-bit address> */
	SLOT = 128,  /* Island bytes per function: stub at 0, trampoline. */
	TRAMP = 32,
};

struct plan {
	uint8_t *at;           /* Where our jump goes. */
	size_t jlen;           /* Its length: JMP32, or JMP8 to the pad. */
	uint8_t *from;         /* What the trampoline runs: pushes passed */
	size_t copy;           /* over and the replaced instruction; 0 */
	size_t pushes;         /* when chaining.  Pushes the stub pops. */
	void (*target)(void);  /* Chaining: the foreign jump's destination. */
	uint8_t *pad;          /* Where the 5-byte jump goes if not at `at`. */
	uint64_t *word, old;   /* The aligned word that changes, as it was. */
	bool drops_endbr;      /* The jump replaces endbr64 itself. */
	uint8_t *const *taken; /* Pads earlier plans of the batch chose. */
	size_t ntaken;
};

typedef void (*fn)(void);

/* Reads and writes of libc's text bypass the sanitizers: they have no
 * shadow for code (TSan faults writing it), and their interceptors of
 * memcmp and memcpy would look there.  Byte loops through volatile
 * pointers, so the compiler does not turn them back into calls. */
#define NO_SAN __attribute__((no_sanitize("address", "thread")))

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

static bool ibt_forced_set;
static int ibt_forced;

void hmr__patch_test_ibt(int force)
{
	ibt_forced = force;
	ibt_forced_set = force >= 0;
}

/* Read once: the kernel's answer does not change in a process's life. */
static bool ibt_from_kernel(void)
{
	char line[256];
	bool on = false;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "x86_Thread_features:", 20))
			on = strstr(line + 20, " ibt") != NULL;
	fclose(f);
	return on;
}

bool hmr__patch_ibt(void)
{
	static _Atomic int kernel = -1;
	int k;

	if (ibt_forced_set)
		return ibt_forced;
	k = atomic_load(&kernel);
	if (k < 0) {
		k = ibt_from_kernel();
		atomic_store(&kernel, k);
	}
	return k;
}

/* The jump's bytes [at, at + len) lie in one aligned 8-byte word. */
static bool fits(const uint8_t *at, size_t len)
{
	return ((uintptr_t)at & 7) + len <= 8;
}

/* Where a 5-byte jump can go in never-executed bytes, within a 2-byte
 * jump of `at`: our own from an earlier patch of this function (a
 * repair), else the last 5 bytes of the alignment padding before the
 * entry, else of the padding before another 16-byte boundary in reach
 * (the end of a short function such as brk, whose entry follows a
 * 1-byte nop).  Never one an earlier plan of this batch took.  NULL when
 * there is none. */
NO_SAN static uint8_t *pad_for(const struct hmr__patch *p, const uint8_t *at,
                               uint8_t *const *taken, size_t ntaken)
{
	uintptr_t end = (uintptr_t)at + JMP8, a, lo, hi;
	uint8_t *c = p->entry, *pad;
	size_t i;
	int pass;

	if (p->pad && p->pad[0] == 0xe9)
		return p->pad;
	lo = (end - 128 + JMP32 + 15) & ~(uintptr_t)15;
	hi = end + 127;
	for (pass = 0; pass < 2; pass++) {
		for (a = pass ? lo : (uintptr_t)c;
		     a <= (pass ? hi : (uintptr_t)c); a += 16) {
			pad = (uint8_t *)a - JMP32;
			if (pad < (uint8_t *)end - 128 || pad > (uint8_t *)hi ||
			    (pad < at + JMP8 && pad + JMP32 > c))
				continue;
			for (i = 0; i < ntaken && taken[i] != pad; i++)
				;
			if (i == ntaken &&
			    hmr__x86_padding_before((uint8_t *)a, JMP32))
				return pad;
		}
	}
	return NULL;
}

/* Our jump at `at`: 5 bytes where they fit the word and cover `len`
 * bytes of whole instructions, else 2 bytes to the padding. */
NO_SAN static bool choose_jump(const struct hmr__patch *p, struct plan *pl,
                               uint8_t *at, size_t len)
{
	pl->at = at;
	pl->pad = NULL;
	if (len >= JMP32 && fits(at, JMP32)) {
		pl->jlen = JMP32;
		return true;
	}
	if (len < JMP8 || !fits(at, JMP8))
		return false;
	pl->pad = pad_for(p, at, pl->taken, pl->ntaken);
	pl->jlen = JMP8;
	return pl->pad != NULL;
}

/* Chaining: a jump found at c (the entry, or after endbr64). */
NO_SAN static int plan_chain(struct hmr__patch *p, struct plan *pl, uint8_t *c,
                             uintptr_t t, char *why, size_t why_len)
{
	pl->target = to_fn(t);
	/* Over the foreign jump's first bytes: it is at least 2 long. */
	if (!choose_jump(p, pl, c, JMP32)) {
		snprintf(why, why_len,
		         "memhooks: %s at %p: another library's jump is there "
		         "and there is no room for ours in one aligned word",
		         p->name, p->entry);
		return -FI_ENOSYS;
	}
	if (!hmr__x86_is_endbr64((const uint8_t *)t) && hmr__patch_ibt()) {
		snprintf(why, why_len,
		         "memhooks: %s: indirect-branch tracking is enforced "
		         "and the hook another library put there (%p) has no "
		         "endbr64, so hmr's hook could not call it",
		         p->name, (void *)t);
		return -FI_ENOSYS;
	}
	snprintf(p->how, sizeof(p->how),
	         "%zu-byte jump at entry+%zu, chained to another library's "
	         "hook",
	         pl->jlen, (size_t)(c - (uint8_t *)p->entry));
	return 0;
}

/* Where the jump goes and what the hook will call.  0, or -FI_ENOSYS
 * with why when nothing at the entry can be replaced safely. */
NO_SAN static int plan(struct hmr__patch *p, struct plan *pl, char *why,
                       size_t why_len)
{
	uint8_t *c = p->entry, *at;
	size_t keep = hmr__x86_is_endbr64(c) ? 4 : 0, len, pushed = 0, pl_len;
	uintptr_t t;

	if ((t = hmr__x86_jump_target(c)))
		return plan_chain(p, pl, c, t, why, why_len);
	if (keep && (t = hmr__x86_jump_target(c + keep)))
		return plan_chain(p, pl, c + keep, t, why, why_len);
	/* After endbr64, passing over up to four pushes. */
	for (at = c + keep; pl->pushes <= 4; at += pl_len, pl->pushes++) {
		len = hmr__x86_movable_len(at);
		if (len && choose_jump(p, pl, at, len))
			goto found;
		pl_len = hmr__x86_push_len(at);
		if (!pl_len)
			break;
		pushed += pl_len;
	}
	pl->pushes = 0;
	pushed = 0;
	/* Last: endbr64 itself, a 4-byte instruction. */
	len = keep;
	at = c;
	if (keep && !hmr__patch_ibt() && choose_jump(p, pl, at, len)) {
		pl->drops_endbr = true;
		goto found;
	}
	snprintf(why, why_len,
	         "memhooks: %s at %p starts with %02x %02x %02x %02x %02x %02x "
	         "%02x %02x: %s",
	         p->name, p->entry, c[0], c[1], c[2], c[3], c[4], c[5], c[6],
	         c[7],
	         keep && hmr__patch_ibt()
	                 ? "no instruction after endbr64 can be replaced "
	                   "in one aligned word, and endbr64 itself must "
	                   "stay (indirect-branch tracking is enforced)"
	                 : "no instruction this build can move lies in one "
	                   "aligned word with padding before the function "
	                   "for a jump");
	return -FI_ENOSYS;
found:
	pl->from = at - pushed;
	pl->copy = pushed + len;
	snprintf(p->how, sizeof(p->how), "%zu-byte jump at entry+%zu%s%s%s",
	         pl->jlen, (size_t)(at - c),
	         pl->pad ? " to a jump in the padding" : "",
	         pl->drops_endbr ? ", over endbr64"
	         : keep          ? ", endbr64 kept"
	                         : "",
	         pl->pushes ? ", past pushes" : "");
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

/* The stub at slot (pops the pushes passed over, then jumps to the
 * hook) and the trampoline after it (endbr64, for the hook's indirect
 * call under IBT; the moved bytes; a direct jump back, which IBT allows
 * to a place with no endbr64). */
static void fill_slot(const struct hmr__patch *p, const struct plan *pl,
                      uint8_t *slot)
{
	static const uint8_t endbr64[] = {0xf3, 0x0f, 0x1e, 0xfa};
	uint8_t *s = slot, *t = slot + TRAMP, *back;
	int32_t r;

	if (pl->pushes) {
		/* lea 8n(%rsp), %rsp: flags stay as the caller left them. */
		static const uint8_t lea[] = {0x48, 0x8d, 0x64, 0x24};

		memcpy(s, lea, sizeof(lea));
		s[sizeof(lea)] = (uint8_t)(8 * pl->pushes);
		s += sizeof(lea) + 1;
	}
	put_absjmp(s, (uintptr_t)p->hook);
	if (!pl->copy)
		return;
	memcpy(t, endbr64, sizeof(endbr64));
	t += sizeof(endbr64);
	copy(t, pl->from, pl->copy);
	t += pl->copy;
	back = pl->from + pl->copy;
	if (rel32(t + JMP32, back, &r)) {
		t[0] = 0xe9;
		memcpy(t + 1, &r, 4);
	} else {
		put_absjmp(t, (uintptr_t)back);
	}
}

static int install(struct hmr__patch *p, struct plan *pl, uint8_t *slot)
{
	uint8_t *dst = pl->pad ? pl->pad : pl->at;
	uint64_t val, jmp = 0xe9;
	size_t off;
	int32_t r;
	int8_t r8;
	int rc;

	if (!rel32(dst + JMP32, slot, &r))
		return -FI_ENOSYS;
	memcpy((uint8_t *)&jmp + 1, &r, 4);
	pl->word = (uint64_t *)((uintptr_t)pl->at & ~(uintptr_t)7);
	off = (size_t)(pl->at - (uint8_t *)pl->word);
	atomic_store(&p->next,
	             pl->copy ? to_fn((uintptr_t)slot + TRAMP) : pl->target);
	if (pl->pad) {
		/* Nobody runs the padding: a plain write, before the entry
		 * jump that leads there exists.  It may share the word the
		 * entry jump changes, so that word is read after it. */
		rc = text_write(pl->pad, JMP32, pl->word, 0, jmp);
		if (rc)
			return rc;
	}
	pl->old = val = load64(pl->word);
	if (pl->pad) {
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
	p->pad = pl->pad;
	return 0;
}

/* Under enforced IBT the stub's indirect jump must land on endbr64.  The
 * kernel is asked only when a hook lacks one (ours are built with it): a
 * query that starts the monitor reads no file for it. */
NO_SAN static int check_hooks(struct hmr__patch *p, size_t n, char *why,
                              size_t why_len)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (hmr__x86_is_endbr64(
		            (const uint8_t *)(uintptr_t)p[i].hook) ||
		    !hmr__patch_ibt())
			continue;
		snprintf(why, why_len,
		         "memhooks: indirect-branch tracking is enforced and "
		         "hmr's hook for %s has no endbr64 (build hmr with "
		         "-fcf-protection)",
		         p[i].name);
		return -FI_ENOSYS;
	}
	return 0;
}

int hmr__patch_apply(struct hmr__patch *p, size_t n, char *why, size_t why_len)
{
	struct plan pl[16];
	uint8_t *island, *taken[16];
	size_t i, len = (n * SLOT + 4095) & ~(size_t)4095;
	int rc;

	if (n > sizeof(pl) / sizeof(pl[0]))
		return -FI_EINVAL;
	rc = check_hooks(p, n, why, why_len);
	if (rc)
		return rc;
	for (i = 0; i < n; i++) {
		memset(&pl[i], 0, sizeof(pl[i]));
		pl[i].taken = taken;
		pl[i].ntaken = i;
		rc = plan(&p[i], &pl[i], why, why_len);
		if (rc)
			return rc;
		taken[i] = pl[i].pad;
	}
	island = island_near(p[0].entry, len);
	if (!island) {
		snprintf(why, why_len,
		         "memhooks: no free page within 2 GiB of libc");
		return -FI_ENOMEM;
	}
	for (i = 0; i < n; i++)
		fill_slot(&p[i], &pl[i], island + i * SLOT);
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

bool hmr__patch_ibt(void)
{
	return false;
}

void hmr__patch_test_ibt(int force)
{
	(void)force;
}

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
