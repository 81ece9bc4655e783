/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* test_monitor_patch.c: the entry patcher on every prologue shape we know. */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cet_funcs.h"
#include "harness.h"
#include "monitor/patch.h"
#include "monitor/x86.h"

/*
 * Two kinds of case.
 *
 * The C libraries: the 32 bytes before and the 96 from the entry of each
 * function memhooks patches, in Debian 12's glibc 2.36, Debian trixie's
 * 2.41 and Ubuntu 24.04's 2.39-0ubuntu8.9 (CET: every entry is endbr64;
 * ../shared/lab/glibc), placed in an executable page at the entry's own
 * alignment modulo 64.  Patched there, the entry must keep endbr64, lead
 * to our hook, change one aligned word (and padding no thread runs), and
 * its trampoline must hold the instruction it replaced.  The munmap and
 * madvise copies run for real: their success paths use no RIP-relative
 * data, so the copy calls the kernel like the original.
 *
 * Our own functions built with -fcf-protection=full, copied to every
 * entry alignment from 0 to 15 after a ret and 16 bytes of padding, are
 * patched while another thread calls them, and must give the same
 * answers before, during and after, the hook seeing the calls after.
 */

#if defined(__x86_64__)

struct shape {
	const char *libc, *fn;
	unsigned align;  /* The entry's address modulo 64. */
	const char *hex; /* 32 bytes before the entry, then 96. */
};

static const struct shape shapes[] = {
#include "libc_prologues.inc"
};

enum { BEFORE = 32, AFTER = 96 };

static int nib(char c)
{
	return c <= '9' ? c - '0' : c - 'a' + 10;
}

static const struct shape *find(const char *libc, const char *fn)
{
	size_t i;

	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		if (!strcmp(shapes[i].libc, libc) && !strcmp(shapes[i].fn, fn))
			return &shapes[i];
	HMR_FAIL("no bytes of %s in %s", fn, libc);
	return NULL;
}

/* An executable page holding `bytes` so that `entry` lands at page
 * offset 512 + align (returned). */
static uint8_t *place(const uint8_t *bytes, size_t before, size_t len,
                      unsigned align)
{
	uint8_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
	                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *entry = page + 512 + align;

	ASSERT_TRUE(page != MAP_FAILED);
	memset(page, 0xcc, 4096);
	memcpy(entry - before, bytes, len);
	ASSERT_EQ(mprotect(page, 4096, PROT_READ | PROT_EXEC), 0);
	return entry;
}

static struct hmr__patch *cur;
static atomic_long hook_calls;

static int hook_munmap(void *a, size_t l)
{
	atomic_fetch_add(&hook_calls, 1);
	return ((int (*)(void *, size_t))atomic_load(&cur->next))(a, l);
}

static int hook_madvise(void *a, size_t l, int how)
{
	atomic_fetch_add(&hook_calls, 1);
	return ((int (*)(void *, size_t, int))atomic_load(&cur->next))(a, l,
	                                                               how);
}

static void hook_other(void)
{
}

/* Where the entry's jumps lead: through eb, e9 and ff 25. */
static uintptr_t follow(const uint8_t *c)
{
	int i;

	for (i = 0; i < 4; i++) {
		uintptr_t t = hmr__x86_jump_target(c);

		if (!t)
			break;
		c = (const uint8_t *)t;
		/* The stub may pop pushes first: lea n(%rsp), %rsp */
		if (c[0] == 0x48 && c[1] == 0x8d && c[2] == 0x64)
			c += 5;
	}
	return (uintptr_t)c;
}

/* Which bytes of [entry - BEFORE, entry + AFTER) the patch changed: one
 * aligned word at or after the entry, and at most 5 bytes of padding. */
static void check_changes(const uint8_t *orig, const uint8_t *entry,
                          const struct hmr__patch *p)
{
	const uint8_t *base = entry - BEFORE;
	uintptr_t word = (uintptr_t)p->word;
	size_t i, in_pad = 0;

	for (i = 0; i < BEFORE + AFTER; i++) {
		uintptr_t a = (uintptr_t)(base + i);

		if (base[i] == orig[i])
			continue;
		if (a >= word && a < word + 8)
			continue;
		ASSERT_TRUE(p->pad && a >= (uintptr_t)p->pad &&
		            a < (uintptr_t)p->pad + 5);
		in_pad++;
	}
	ASSERT_TRUE(in_pad <= 5);
	ASSERT_TRUE(word + 8 > (uintptr_t)entry);
}

static void check_shape(const char *libc, const char *fn)
{
	const struct shape *s = find(libc, fn);
	uint8_t orig[BEFORE + AFTER], *entry, *t, *at;
	static struct hmr__patch p;
	char why[256] = "";
	bool cet;
	size_t i, moved;

	for (i = 0; i < sizeof(orig); i++)
		orig[i] = (uint8_t)(nib(s->hex[2 * i]) << 4 |
		                    nib(s->hex[2 * i + 1]));
	entry = place(orig, BEFORE, sizeof(orig), s->align);
	cet = hmr__x86_is_endbr64(entry);
	memset(&p, 0, sizeof(p));
	p.name = fn;
	p.entry = entry;
	p.hook = !strcmp(fn, "munmap")    ? (void (*)(void))hook_munmap
	         : !strcmp(fn, "madvise") ? (void (*)(void))hook_madvise
	                                  : hook_other;
	cur = &p;
	if (hmr__patch_apply(&p, 1, why, sizeof(why)))
		HMR_FAIL("%s's %s: %s", libc, fn, why);
	printf("%s %s (entry %% 64 = %u): %s\n", libc, fn, s->align, p.how);
	ASSERT_TRUE(hmr__patch_intact(&p));
	check_changes(orig, entry, &p);
	/* A CET entry keeps its endbr64: indirect calls land there. */
	if (cet)
		ASSERT_TRUE(hmr__x86_is_endbr64(entry));
	/* The jump: at the first byte that changed. */
	for (at = entry; at < entry + 16 && *at == orig[BEFORE + (at - entry)];
	     at++)
		;
	ASSERT_TRUE(at < entry + 16);
	ASSERT_EQ(follow(at), (uintptr_t)p.hook);
	/* The trampoline: endbr64, the bytes from after endbr64 to the end
	 * of the instruction the jump replaced, a jump back after them. */
	t = (uint8_t *)(uintptr_t)atomic_load(&p.next);
	ASSERT_TRUE(hmr__x86_is_endbr64(t));
	moved = hmr__x86_movable_len(orig + BEFORE + (at - entry));
	ASSERT_TRUE(moved >= 2);
	moved += (size_t)(at - entry) - (cet ? 4 : 0);
	ASSERT_EQ(memcmp(t + 4, orig + BEFORE + (cet ? 4 : 0), moved), 0);
	ASSERT_EQ(hmr__x86_jump_target(t + 4 + moved),
	          (uintptr_t)entry + (cet ? 4 : 0) + moved);
}

/* The copy of munmap or madvise, called through its patched entry. */
static void run_copy(const char *libc, const char *fn)
{
	long pg = sysconf(_SC_PAGESIZE);
	void *m = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long before = atomic_load(&hook_calls);

	check_shape(libc, fn);
	ASSERT_TRUE(m != MAP_FAILED);
	if (!strcmp(fn, "munmap")) {
		ASSERT_EQ(((int (*)(void *, size_t))cur->entry)(m, (size_t)pg),
		          0);
		/* Gone: msync of an unmapped page fails. */
		ASSERT_EQ(msync(m, (size_t)pg, MS_ASYNC), -1);
	} else {
		ASSERT_EQ(((int (*)(void *, size_t, int))cur->entry)(
		                  m, (size_t)pg, MADV_DONTNEED),
		          0);
		munmap(m, (size_t)pg);
	}
	ASSERT_EQ(atomic_load(&hook_calls), before + 1);
}

HMR_TEST(patch_debian12_munmap_runs)
{
	run_copy("debian12", "munmap");
}
HMR_TEST(patch_debian12_madvise_runs)
{
	run_copy("debian12", "madvise");
}
HMR_TEST(patch_debian12_mmap)
{
	check_shape("debian12", "mmap");
}
HMR_TEST(patch_debian12_mremap)
{
	check_shape("debian12", "mremap");
}
HMR_TEST(patch_debian12_brk)
{
	check_shape("debian12", "brk");
}
HMR_TEST(patch_debian12_shmdt)
{
	check_shape("debian12", "shmdt");
}
HMR_TEST(patch_trixie_munmap_runs)
{
	run_copy("trixie", "munmap");
}
HMR_TEST(patch_trixie_madvise_runs)
{
	run_copy("trixie", "madvise");
}
HMR_TEST(patch_trixie_mmap)
{
	check_shape("trixie", "mmap");
}
HMR_TEST(patch_trixie_mremap)
{
	check_shape("trixie", "mremap");
}
HMR_TEST(patch_trixie_brk)
{
	check_shape("trixie", "brk");
}
HMR_TEST(patch_trixie_shmdt)
{
	check_shape("trixie", "shmdt");
}
HMR_TEST(patch_cet_ubuntu2404_munmap_runs)
{
	run_copy("ubuntu2404", "munmap");
}
HMR_TEST(patch_cet_ubuntu2404_madvise_runs)
{
	run_copy("ubuntu2404", "madvise");
}
HMR_TEST(patch_cet_ubuntu2404_mmap)
{
	check_shape("ubuntu2404", "mmap");
}
HMR_TEST(patch_cet_ubuntu2404_mremap_past_push)
{
	check_shape("ubuntu2404", "mremap");
}
HMR_TEST(patch_cet_ubuntu2404_brk_padding_after_function)
{
	check_shape("ubuntu2404", "brk");
}
HMR_TEST(patch_cet_ubuntu2404_shmdt)
{
	check_shape("ubuntu2404", "shmdt");
}

/* ---- our own CET functions at every alignment ---- */

typedef long (*fn2)(long, long);

static struct {
	fn2 f;
	long want;
	atomic_bool stop;
	atomic_long calls, wrong;
} caller;

static void *call_loop(void *arg)
{
	(void)arg;
	while (!atomic_load(&caller.stop)) {
		if (caller.f(7, 5) != caller.want)
			atomic_fetch_add(&caller.wrong, 1);
		atomic_fetch_add(&caller.calls, 1);
	}
	return NULL;
}

static const uint8_t padding16[] = {0x66, 0x2e, 0x0f, 0x1f, 0x84, 0,    0, 0,
                                    0,    0,    0x66, 0x0f, 0x1f, 0x44, 0, 0};

static long tramp_next(long a, long b);
static struct hmr__patch own;

static long own_hook(long a, long b)
{
	atomic_fetch_add(&hook_calls, 1);
	return ((fn2)(uintptr_t)atomic_load(&own.next))(a, b);
}

static long tramp_next(long a, long b)
{
	return ((fn2)(uintptr_t)atomic_load(&own.next))(a, b);
}

/* Copy f to entry alignment `align` (after a ret and, when `pad`, 16
 * bytes of no-ops), patch it while a thread calls it.  0 when patched
 * (and checked), else the refusal's code with why. */
static int patch_copy(fn2 f, unsigned align, bool pad, void (*hook)(void),
                      char *why, size_t why_len)
{
	uint8_t bytes[1 + sizeof(padding16) + 48];
	size_t before = pad ? 1 + sizeof(padding16) : 1;
	uint8_t *entry, saved[64];
	pthread_t t;
	long n;
	int rc;

	bytes[0] = 0xc3;
	if (pad)
		memcpy(bytes + 1, padding16, sizeof(padding16));
	memcpy(bytes + before, (const void *)(uintptr_t)f, 48);
	entry = place(bytes, before, before + 48, align);
	memcpy(saved, entry - 16, sizeof(saved));
	caller.f = (fn2)(uintptr_t)entry;
	caller.want = f(7, 5);
	atomic_store(&caller.stop, false);
	atomic_store(&caller.calls, 0);
	atomic_store(&caller.wrong, 0);
	ASSERT_EQ(pthread_create(&t, NULL, call_loop, NULL), 0);
	while (atomic_load(&caller.calls) < 1000)
		;
	memset(&own, 0, sizeof(own));
	own.name = "copy";
	own.entry = entry;
	own.hook = hook;
	why[0] = '\0';
	rc = hmr__patch_apply(&own, 1, why, why_len);
	n = atomic_load(&caller.calls);
	while (atomic_load(&caller.calls) < n + 1000)
		;
	atomic_store(&caller.stop, true);
	pthread_join(t, NULL);
	ASSERT_EQ(atomic_load(&caller.wrong), 0);
	if (rc) {
		/* Refused: nothing changed, and it says why. */
		ASSERT_EQ(memcmp(saved, entry - 16, sizeof(saved)), 0);
		ASSERT_TRUE(why[0] != '\0');
		return rc;
	}
	ASSERT_TRUE(hmr__x86_is_endbr64(entry) ||
	            strstr(own.how, "over endbr64"));
	n = atomic_load(&hook_calls) + cet_hook_calls;
	ASSERT_EQ(((fn2)(uintptr_t)entry)(7, 5), caller.want);
	ASSERT_EQ(atomic_load(&hook_calls) + cet_hook_calls, n + 1);
	return 0;
}

static void every_alignment(fn2 f)
{
	char why[256];
	unsigned a;

	ASSERT_TRUE(hmr__x86_is_endbr64((const uint8_t *)(uintptr_t)f));
	for (a = 0; a < 16; a++) {
		if (patch_copy(f, a, true, (void (*)(void))own_hook, why,
		               sizeof(why)))
			HMR_FAIL("entry %% 16 = %u: %s", a, why);
		printf("entry %% 16 = %2u: %s\n", a, own.how);
	}
}

HMR_TEST(patch_cet_function_every_alignment_lea)
{
	every_alignment(cet_mix);
}

HMR_TEST(patch_cet_function_every_alignment_mov_imm)
{
	every_alignment(cet_const);
}

HMR_TEST(patch_cet_function_every_alignment_push_frame)
{
	char why[256];

	ASSERT_EQ(hmr__x86_push_len((const uint8_t *)(uintptr_t)cet_frame + 4),
	          1);
	every_alignment(cet_frame);
	/* The word boundary right after endbr64: the jump goes past the
	 * push (the stub pops it), and endbr64 stays. */
	ASSERT_EQ(patch_copy(cet_frame, 3, true, (void (*)(void))own_hook, why,
	                     sizeof(why)),
	          0);
	ASSERT_TRUE(strstr(own.how, "past pushes") != NULL);
	ASSERT_TRUE(hmr__x86_is_endbr64((const uint8_t *)own.entry));
}

/* With no padding before the function, a 2-byte jump has nowhere to go:
 * each alignment is patched correctly or refused with the bytes intact. */
HMR_TEST(patch_without_padding_patches_or_refuses_cleanly)
{
	fn2 fs[] = {cet_mix, cet_const, cet_frame};
	unsigned a, i, done = 0;
	char why[256];

	for (i = 0; i < 3; i++)
		for (a = 0; a < 16; a++)
			if (!patch_copy(fs[i], a, false,
			                (void (*)(void))own_hook, why,
			                sizeof(why)))
				done++;
	/* mov $11 after endbr64 takes a 5-byte jump at 4 alignments. */
	ASSERT_TRUE(done >= 4);
}

/* Enforced indirect-branch tracking: a hook without endbr64 is refused,
 * and so is replacing endbr64, exactly where that would be needed; with
 * an endbr64 hook the rest is patched as without it. */
HMR_TEST(patch_under_ibt_refuses_what_would_fault)
{
	fn2 fs[] = {cet_mix, cet_const, cet_frame};
	unsigned a, i, refused = 0;
	char why[256];
	bool over;

	hmr__patch_test_ibt(1);
	if (!hmr__x86_is_endbr64((const uint8_t *)(uintptr_t)own_hook)) {
		ASSERT_TRUE(patch_copy(cet_mix, 0, true,
		                       (void (*)(void))own_hook, why,
		                       sizeof(why)) < 0);
		ASSERT_TRUE(strstr(why, "indirect-branch tracking") != NULL);
	}
	for (i = 0; i < 3; i++) {
		for (a = 0; a < 16; a++) {
			hmr__patch_test_ibt(0);
			ASSERT_EQ(patch_copy(fs[i], a, true,
			                     (void (*)(void))own_hook, why,
			                     sizeof(why)),
			          0);
			over = strstr(own.how, "over endbr64") != NULL;
			hmr__patch_test_ibt(1);
			cet_hook_next = tramp_next;
			if (patch_copy(fs[i], a, true, (void (*)(void))cet_hook,
			               why, sizeof(why))) {
				ASSERT_TRUE(over);
				ASSERT_TRUE(strstr(why,
				                   "indirect-branch tracking"));
				refused++;
				continue;
			}
			ASSERT_TRUE(!over);
			ASSERT_TRUE(hmr__x86_is_endbr64(
			        (const uint8_t *)own.entry));
		}
	}
	/* The word boundary right after endbr64 (entry % 8 = 3) at least. */
	ASSERT_TRUE(refused >= 2);
	hmr__patch_test_ibt(-1);
}

#endif

HMR_TEST_MAIN()
