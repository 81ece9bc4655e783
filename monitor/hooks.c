/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* hooks.c: the memhooks monitor: libc's unmapping calls report first. */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif

#include <hmr/hmr.h>

#include "base/log.h"
#include "base/range.h"
#include "monitor/monitor.h"
#include "monitor/monitor_impl.h"
#include "monitor/patch.h"
#include "monitor/reloc.h"
#include "base/config.h"

/*
 * The functions are patched in libc's text (patch.c), not interposed by
 * symbol: libc calls them internally through aliases that interposition
 * never sees (free() of a large chunk unmaps with __munmap, malloc trims
 * with __madvise and __brk, sbrk calls __brk), and all those aliases are
 * the same code.  Each hook reports the range to hmr__monitor_notify on
 * the calling thread, then calls `next` (the original code, or another
 * library's hook that was there first), so the event comes BEFORE the
 * kernel sees the call.  Hooks allocate nothing and take no lock; with no
 * subscriber an event costs one atomic load (monitor.c).
 *
 * Not caught: ld.so's own munmap (dlclose unmapping a library's data),
 * raw system calls (syscall(SYS_munmap, ...), sanitizer runtimes'
 * internal allocators), and calls while the hooks are being installed.
 */

/*
 * ThreadSanitizer: glibc gives a finished thread's unused stack back with
 * madvise after TSan has dropped the thread's state; instrumented code
 * run there crashes in TSan's function-entry tracing.  So the hooks carry
 * no instrumentation, and under TSan only, the madvise of the calling
 * thread's own stack below its frame (nothing else calls that) is passed
 * on without an event.
 */
#if defined(__clang__) && defined(__has_attribute)
#if __has_attribute(disable_sanitizer_instrumentation)
#define HOOK __attribute__((disable_sanitizer_instrumentation))
#endif
#endif
#ifndef HOOK
#define HOOK __attribute__((no_sanitize("address", "thread")))
#endif
#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif

/*
 * Each function is patched at its entry where that can be done safely
 * (patch.c), else hooked by relocation (reloc.c); sbrk, free and realloc
 * only ever by relocation, and only when relocation hooks stand in for a
 * function malloc calls from inside libc (reloc.h says why).  mech[] says
 * which, set before the hook can be reached; the hooks call `next` of
 * the mechanism in force.
 */
enum {
	H_MUNMAP,
	H_MREMAP,
	H_MADVISE,
	H_BRK,
	H_SHMDT,
	H_MMAP,
	H_COUNT, /* The functions patched. */
	H_SBRK = H_COUNT,
	H_FREE,
	H_REALLOC,
	H_ALL
};
enum { M_NONE, M_PATCH, M_RELOC };

HMR_CONFIG_VAR(HMR_MEMHOOKS_MODE, "auto",
               "How memhooks reaches libc's unmapping calls: auto (patch "
               "each function's entry, relocation hooks where that cannot "
               "be done safely), patch (entries only) or reloc (GOT "
               "entries only)");

static struct hmr__patch patches[H_COUNT];
static struct hmr__reloc relocs[H_ALL];
static _Atomic int mech[H_ALL];
static char reloc_how[H_ALL][256];
/* malloc_usable_size of the allocator free() belongs to. */
static size_t (*usable)(void *);
/* Written before the first patch; atomic because the hooks that read it
 * are reached through code the sanitizers cannot see ordered. */
static atomic_uintptr_t page_mask;
/* Serialises installing and re-chaining. */
static pthread_mutex_t patch_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool installed, overwritten;
/* munmap's patch word and our value in it, for hmr__monitor_intact_quick
 * (monitor.h); set under patch_lock once a patch is in place. */
const uint64_t *_Atomic hmr__monitor_quick_word;
_Atomic uint64_t hmr__monitor_quick_value;
atomic_bool hmr__monitor_damaged;

static void publish_quick(void)
{
	atomic_store(&hmr__monitor_quick_value, patches[H_MUNMAP].mine);
	atomic_store(&hmr__monitor_quick_word, patches[H_MUNMAP].word);
}

/* The pages [start, start + len) touches: what the kernel acts on. */
static void event(uintptr_t start, size_t len)
{
	uintptr_t mask = atomic_load_explicit(&page_mask, memory_order_relaxed);
	uint64_t end;

	if (!len)
		return;
	if (!hmr__range_end(start, len, &end) ||
	    !hmr__align_up(end, mask + 1, &end))
		end = UINT64_MAX & ~(uint64_t)mask;
	start &= ~mask;
	if (end > start)
		hmr__monitor_notify(start, (size_t)(end - start));
}

typedef void (*fn)(void);

static fn next_of(int h)
{
	if (h >= H_COUNT ||
	    atomic_load_explicit(&mech[h], memory_order_relaxed) == M_RELOC)
		return atomic_load_explicit(&relocs[h].next,
		                            memory_order_acquire);
	return atomic_load_explicit(&patches[h].next, memory_order_acquire);
}

#define NEXT(h, type) ((type)next_of(h))

HOOK static int hook_munmap(void *addr, size_t len)
{
	event((uintptr_t)addr, len);
	return NEXT(H_MUNMAP, int (*)(void *, size_t))(addr, len);
}

/* glibc's mremap is variadic: new_address is read only with
 * MREMAP_FIXED, as the kernel does. */
HOOK static void *hook_mremap(void *old, size_t old_len, size_t new_len,
                              int flags, void *new_addr)
{
	event((uintptr_t)old, old_len);
	if (flags & MREMAP_FIXED)
		event((uintptr_t)new_addr, new_len);
	return NEXT(H_MREMAP, void *(*)(void *, size_t, size_t, int, ...))(
	        old, old_len, new_len, flags, new_addr);
}

HOOK static int hook_madvise(void *addr, size_t len, int how)
{
	int advice = how;

#ifdef UNDER_TSAN
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);

	uint64_t end;

	/* glibc's advise_stack_range: up to 16 KiB and a page below sp. */
	if (len && hmr__range_end((uintptr_t)addr, len, &end) && end <= sp &&
	    sp - end < (64 << 10))
		advice = -1;
#endif
	switch (advice) {
	case MADV_DONTNEED:
	case MADV_FREE:
	case MADV_REMOVE:
	case 24: /* MADV_DONTNEED_LOCKED, Linux 5.18 */
		event((uintptr_t)addr, len);
		break;
	}
	return NEXT(H_MADVISE, int (*)(void *, size_t, int))(addr, len, how);
}

/* brk is rare (malloc moves the break by 128 KiB and more): asking the
 * kernel for the current break costs nothing that matters. */
HOOK static int hook_brk(void *addr)
{
	uintptr_t cur = (uintptr_t)syscall(SYS_brk, 0);

	if (addr && (uintptr_t)addr < cur)
		event((uintptr_t)addr, cur - (uintptr_t)addr);
	return NEXT(H_BRK, int (*)(void *))(addr);
}

/* A hexadecimal or decimal number at *p, which moves past it and the
 * one separator after it (sscanf may allocate; hooks must not). */
static unsigned long number(const char **p, unsigned base)
{
	unsigned long v = 0;
	unsigned d;
	const char *c = *p;

	for (;; c++) {
		if (*c >= '0' && *c <= '9')
			d = (unsigned)(*c - '0');
		else if (base == 16 && *c >= 'a' && *c <= 'f')
			d = (unsigned)(*c - 'a' + 10);
		else
			break;
		v = v * base + d;
	}
	*p = *c ? c + 1 : c;
	return v;
}

/* Skip n space-separated fields. */
static const char *skip(const char *c, int n)
{
	while (n--) {
		while (*c && *c != ' ')
			c++;
		while (*c == ' ')
			c++;
	}
	return c;
}

/* The length of the mapping that starts at addr, with the mappings that
 * continue it (same inode), from /proc/self/maps read into a stack
 * buffer: no allocation.  0 when none starts there. */
static size_t mapping_len(uintptr_t addr)
{
	char buf[4096], *line, *nl;
	unsigned long s, e, want_inode = 0, inode, expect = addr;
	size_t have = 0, len = 0;
	ssize_t got;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	while ((got = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
		have += (size_t)got;
		buf[have] = '\0';
		for (line = buf; (nl = strchr(line, '\n')); line = nl + 1) {
			const char *c = line;

			*nl = '\0';
			s = number(&c, 16);
			e = number(&c, 16);
			c = skip(c, 3); /* perms, offset, device */
			inode = number(&c, 10);
			if (e <= expect)
				continue;
			if (s != expect || (len && inode != want_inode))
				goto out;
			want_inode = inode;
			len += e - s;
			expect = e;
		}
		have = (size_t)(buf + have - line);
		memmove(buf, line, have);
		if (have == sizeof(buf) - 1)
			break; /* A line longer than the buffer. */
	}
out:
	close(fd);
	return len;
}

HOOK static int hook_shmdt(const void *addr)
{
	event((uintptr_t)addr, mapping_len((uintptr_t)addr));
	return NEXT(H_SHMDT, int (*)(const void *))(addr);
}

/* MAP_FIXED replaces whatever was mapped there (MAP_FIXED_NOREPLACE does
 * not: it fails instead, and has no MAP_FIXED bit). */
HOOK static void *hook_mmap(void *addr, size_t len, int prot, int flags, int fd,
                            off_t off)
{
	if (flags & MAP_FIXED)
		event((uintptr_t)addr, len);
	return NEXT(H_MMAP, void *(*)(void *, size_t, int, int, int, off_t))(
	        addr, len, prot, flags, fd, off);
}

/* Relocation hooks only: sbrk (libc's sbrk calls its brk inside libc,
 * which no GOT entry sees) and free and realloc (glibc's malloc unmaps,
 * remaps, advises and trims inside libc): the memory handed back is
 * reported before it goes, the chunk's pages whole. */
HOOK static void *hook_sbrk(intptr_t incr)
{
	uintptr_t cur = (uintptr_t)syscall(SYS_brk, 0);

	if (incr < 0 && cur >= (uintptr_t)-incr)
		event(cur - (uintptr_t)-incr, (size_t)-incr);
	return NEXT(H_SBRK, void *(*)(intptr_t))(incr);
}

HOOK static void hook_free(void *p)
{
	if (p)
		event((uintptr_t)p, usable(p));
	NEXT(H_FREE, void (*)(void *))(p);
}

HOOK static void *hook_realloc(void *p, size_t n)
{
	if (p)
		event((uintptr_t)p, usable(p));
	return NEXT(H_REALLOC, void *(*)(void *, size_t))(p, n);
}

/* Once hooks point into this library it must never be unmapped: a
 * thread inside munmap would jump into a hole (libfabric issue 10943).
 * dlopen with RTLD_NODELETE marks the object loaded here as never to
 * unload; the handle is kept on purpose.  In an executable it is a
 * no-op. */
void hmr__monitor_pin_library(void)
{
	Dl_info info;

	if (dladdr((void *)(uintptr_t)hook_munmap, &info) && info.dli_fname &&
	    info.dli_fname[0])
		(void)dlopen(info.dli_fname,
		             RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
}

static bool under_valgrind(void)
{
#ifdef RUNNING_ON_VALGRIND
	if (RUNNING_ON_VALGRIND)
		return true;
#endif
	/* valgrind preloads its vgpreload_*.so into every client. */
	const char *pre = getenv("LD_PRELOAD");

	return pre && strstr(pre, "vgpreload");
}

static const char *const names[H_ALL] = {
        [H_MUNMAP] = "munmap", [H_MREMAP] = "mremap", [H_MADVISE] = "madvise",
        [H_BRK] = "brk",       [H_SHMDT] = "shmdt",   [H_MMAP] = "mmap",
        [H_SBRK] = "sbrk",     [H_FREE] = "free",     [H_REALLOC] = "realloc",
};
static const fn hooks[H_ALL] = {
        [H_MUNMAP] = (fn)hook_munmap,   [H_MREMAP] = (fn)hook_mremap,
        [H_MADVISE] = (fn)hook_madvise, [H_BRK] = (fn)hook_brk,
        [H_SHMDT] = (fn)hook_shmdt,     [H_MMAP] = (fn)hook_mmap,
        [H_SBRK] = (fn)hook_sbrk,       [H_FREE] = (fn)hook_free,
        [H_REALLOC] = (fn)hook_realloc,
};

static int resolve(void *libc, char *why, size_t why_len)
{
	int i;

	for (i = 0; i < H_ALL; i++) {
		if (i < H_COUNT) {
			patches[i].name = names[i];
			patches[i].hook = hooks[i];
			/* libc's own definition: a sanitizer's interceptor
			 * of the same name would be found first by plain
			 * linking. */
			patches[i].entry = dlsym(libc, names[i]);
		}
		relocs[i].name = names[i];
		if (i < H_COUNT && !patches[i].entry) {
			snprintf(why, why_len, "memhooks: libc has no %s",
			         names[i]);
			return -FI_ENOSYS;
		}
	}
	return 0;
}

/* Relocation hooks stand in for function i: and where it is one that
 * glibc's malloc calls from inside libc, for sbrk, free and realloc too
 * (only when glibc's malloc is the allocator: another one calls the
 * kernel through its own GOT, which these hooks see). */
static void use_reloc(void *libc, int i, const char *reason)
{
	void *glibc_free;

	atomic_store(&mech[i], M_RELOC);
	relocs[i].hook = hooks[i];
	snprintf(reloc_how[i], sizeof(reloc_how[i]), "%s", reason);
	if (i == H_BRK) {
		atomic_store(&mech[H_SBRK], M_RELOC);
		relocs[H_SBRK].hook = hooks[H_SBRK];
		snprintf(reloc_how[H_SBRK], sizeof(reloc_how[H_SBRK]),
		         "libc's sbrk calls its brk inside libc");
	}
	if (i == H_SHMDT || i == H_MMAP || relocs[H_FREE].hook)
		return;
	glibc_free = dlsym(libc, "free");
	if (!glibc_free || dlsym(RTLD_DEFAULT, "free") != glibc_free)
		return;
	usable = (size_t(*)(void *))dlsym(libc, "malloc_usable_size");
	if (!usable)
		return;
	for (i = H_FREE; i <= H_REALLOC; i++) {
		atomic_store(&mech[i], M_RELOC);
		relocs[i].hook = hooks[i];
		snprintf(reloc_how[i], sizeof(reloc_how[i]),
		         "glibc's malloc unmaps and trims inside libc");
	}
}

/* Each function patched where it can be (mode auto or patch), the rest
 * by relocation (auto or reloc).  Under patch_lock. */
static int install(void *libc, const char *mode, char *why, size_t why_len)
{
	char one[256];
	bool any = false;
	int i, rc;

	for (i = 0; i < H_COUNT; i++) {
		if (strcmp(mode, "reloc")) {
			atomic_store(&mech[i], M_PATCH);
			rc = hmr__patch_apply(&patches[i], 1, one, sizeof(one));
			if (!rc)
				continue;
			atomic_store(&mech[i], M_NONE);
			if (!strcmp(mode, "patch")) {
				snprintf(why, why_len, "%s", one);
				return rc;
			}
			hmr_info("%s; relocation hooks instead", one);
		} else {
			snprintf(one, sizeof(one), "HMR_MEMHOOKS_MODE=reloc");
		}
		use_reloc(libc, i, one);
		any = true;
	}
	if (!any)
		return 0;
	rc = hmr__reloc_apply(relocs, H_ALL, why, why_len);
	for (i = 0; i < H_ALL; i++)
		if (atomic_load(&mech[i]) == M_RELOC)
			hmr_info("memhooks: %s by relocation hooks (%s)",
			         names[i], reloc_how[i]);
	return rc;
}

int hmr__monitor_hooks_start(char *why, size_t why_len)
{
	const char *mode = hmr__config_get("HMR_MEMHOOKS_MODE", NULL);
	void *libc;
	int rc = 0;

	if (under_valgrind()) {
		snprintf(why, why_len,
		         "memhooks: running under valgrind, which runs its "
		         "own translation of libc's code, so patched entries "
		         "would never reach the hooks");
		return -FI_ENOSYS;
	}
	if (!mode || (strcmp(mode, "auto") && strcmp(mode, "patch") &&
	              strcmp(mode, "reloc"))) {
		snprintf(why, why_len,
		         "memhooks: HMR_MEMHOOKS_MODE=%s is not one of auto, "
		         "patch, reloc",
		         mode ? mode : "");
		return -FI_EINVAL;
	}
	pthread_mutex_lock(&patch_lock);
	if (atomic_load(&installed))
		goto out;
	atomic_store(&page_mask, (uintptr_t)sysconf(_SC_PAGESIZE) - 1);
	libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	if (!libc) {
		snprintf(why, why_len, "memhooks: libc.so.6 is not loaded");
		rc = -FI_ENOSYS;
		goto out;
	}
	rc = resolve(libc, why, why_len);
	if (!rc) {
		hmr__monitor_pin_library();
		rc = install(libc, mode, why, why_len);
	}
	dlclose(libc);
	if (!rc)
		atomic_store(&installed, true);
	if (!rc && atomic_load(&mech[H_MUNMAP]) == M_PATCH)
		publish_quick();
out:
	pthread_mutex_unlock(&patch_lock);
	return rc;
}

size_t hmr__monitor_hooks_describe(struct hmr__monitor_func *out, size_t max)
{
	size_t n = 0;
	int i;

	if (!atomic_load(&installed))
		return 0;
	for (i = 0; i < H_ALL && n < max; i++) {
		int m = atomic_load(&mech[i]);

		if (m == M_NONE)
			continue;
		out[n].name = names[i];
		out[n].mechanism = m == M_PATCH ? "patch" : "relocation";
		out[n].how = m == M_PATCH ? patches[i].how : reloc_how[i];
		n++;
	}
	return n;
}

/*
 * A patch of ours was overwritten: another library (libfabric's memhooks,
 * a UCX loaded after us) patched the same entry without chaining, so its
 * hook reached the kernel without ours and unmaps in between were lost.
 * The repair: put our patch back in front, chaining to the newcomer (both
 * hear events again), then report the whole address space unmapped, so
 * every cache drops what it held (idle registrations are deregistered,
 * those in use die at their last put) and the memtype cache forgets its
 * host answers.  While it runs, `overwritten` makes every check answer
 * false (no hit is served from what may be stale).  Called where no
 * cache or memtype lock is held (a lookup's first check).
 */
static bool repair(void)
{
	char why[256];
	bool ok = true;
	int i;

	pthread_mutex_lock(&patch_lock);
	for (i = 0; i < H_COUNT; i++) {
		if (atomic_load(&mech[i]) != M_PATCH ||
		    hmr__patch_intact(&patches[i]))
			continue;
		hmr_warn("memhooks: another library overwrote hmr's patch of "
		         "%s; events may have been missed: hmr's hook is put "
		         "back in front of the newcomer's and every cache "
		         "drops what it holds",
		         patches[i].name);
		if (hmr__patch_apply(&patches[i], 1, why, sizeof(why))) {
			hmr_warn("%s", why);
			ok = false;
		}
	}
	if (ok)
		publish_quick();
	pthread_mutex_unlock(&patch_lock);
	if (ok)
		hmr__monitor_notify(0, UINTPTR_MAX);
	return ok;
}

bool hmr__monitor_hooks_intact(void)
{
	int i;

	if (!atomic_load_explicit(&installed, memory_order_acquire))
		return false;
	for (i = 0; i < H_COUNT; i++)
		if (atomic_load_explicit(&mech[i], memory_order_relaxed) ==
		            M_PATCH &&
		    !hmr__patch_intact(&patches[i]))
			break;
	if (i == H_COUNT)
		return !atomic_load_explicit(&overwritten,
		                             memory_order_acquire);
	/* One thread repairs; the others answer false meanwhile. */
	atomic_store(&hmr__monitor_damaged, true);
	if (atomic_exchange(&overwritten, true))
		return false;
	if (!repair())
		return false; /* Stays overwritten: caches stop caching. */
	atomic_store_explicit(&overwritten, false, memory_order_release);
	atomic_store(&hmr__monitor_damaged, false);
	return true;
}
