/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* reloc.c: relocation hooks: rewriting GOT entries of every loaded object. */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <hmr/hmr.h>

#include "base/log.h"
#include "monitor/reloc.h"

/*
 * Map of this file: object() walks one loaded object's relocations (the
 * PLT's and the GOT's) through its dynamic section and rewrite() points
 * the entries of our functions at our hooks; hook_dlopen walks again
 * after each dlopen; hmr__reloc_apply walks every object.
 */

#if defined(__x86_64__)
#define R_JUMP_SLOT R_X86_64_JUMP_SLOT
#define R_GLOB_DAT  R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define R_JUMP_SLOT R_AARCH64_JUMP_SLOT
#define R_GLOB_DAT  R_AARCH64_GLOB_DAT
#endif

typedef void (*fn)(void);

/* The set being kept in place (for the dlopen hook), and the dlopen
 * entry itself: set under reloc_lock, read by hook_dlopen. */
static pthread_mutex_t reloc_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hmr__reloc *set;
static size_t nset;
static struct hmr__reloc dl_entry = {.name = "dlopen"};

struct walk {
	struct hmr__reloc *r;
	size_t n;
	int rc;
	char *why;
	size_t why_len;
};

/* A dynamic entry's address: glibc relocates them in place, other
 * loaders leave them relative to the object. */
static uintptr_t dyn_addr(uintptr_t base, ElfW(Addr) v)
{
	return v < base ? base + v : v;
}

/* The object's own loaded bytes: a lazy-binding PLT stub in a GOT entry
 * points there, and is not another library's hook. */
static bool inside(const struct dl_phdr_info *info, uintptr_t a)
{
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && a >= lo && a - lo < ph->p_memsz)
			return true;
	}
	return false;
}

static int rewrite(const struct dl_phdr_info *info, struct walk *w,
                   struct hmr__reloc *r, uintptr_t slot, bool relro)
{
	long pg = sysconf(_SC_PAGESIZE);
	void *page = (void *)(slot & ~(uintptr_t)(pg - 1));
	_Atomic uintptr_t *s = (_Atomic uintptr_t *)slot;
	uintptr_t cur = atomic_load(s);

	if (cur == (uintptr_t)r->hook)
		return 0;
	/* Another library's relocation hook: ours calls it (both hear the
	 * call); a PLT stub or the definition itself is the plain case. */
	if (cur && cur != (uintptr_t)r->real && !inside(info, cur))
		atomic_store(&r->next, (fn)cur);
	if (relro && mprotect(page, (size_t)pg, PROT_READ | PROT_WRITE)) {
		snprintf(w->why, w->why_len,
		         "relocation hooks: cannot make the GOT of %s "
		         "writable for %s",
		         info->dlpi_name[0] ? info->dlpi_name : "the program",
		         r->name);
		return -FI_EACCES;
	}
	atomic_store(s, (uintptr_t)r->hook);
	if (relro)
		mprotect(page, (size_t)pg, PROT_READ);
	r->slots++;
	return 0;
}

/* The relocations [rel, rel + size) of one object: ours are rewritten. */
static int relocs(const struct dl_phdr_info *info, struct walk *w,
                  const ElfW(Rela) * rel, size_t size, const ElfW(Sym) * sym,
                  const char *str, uintptr_t relro_lo, uintptr_t relro_hi)
{
	size_t k, i;
	int rc;

	for (k = 0; k < size / sizeof(*rel); k++) {
		unsigned long type = ELF64_R_TYPE(rel[k].r_info);
		const char *name;
		uintptr_t slot;

		if (type != R_JUMP_SLOT && type != R_GLOB_DAT)
			continue;
		name = str + sym[ELF64_R_SYM(rel[k].r_info)].st_name;
		for (i = 0; i <= w->n; i++) {
			struct hmr__reloc *r = i < w->n ? &w->r[i] : &dl_entry;

			if (!r->hook || strcmp(name, r->name))
				continue;
			slot = info->dlpi_addr + rel[k].r_offset;
			rc = rewrite(info, w, r, slot,
			             slot >= relro_lo && slot < relro_hi);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* The dynamic linker and the vDSO are never rewritten: ld.so's own calls
 * are not the application's, and the vDSO has no GOT of ours to mind. */
static bool skipped(const char *name)
{
	return strstr(name, "linux-vdso") || strstr(name, "linux-gate") ||
	       strstr(name, "/ld-linux") || !strncmp(name, "ld-linux", 8);
}

static int object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct walk *w = arg;
	const ElfW(Dyn) *d = NULL;
	const ElfW(Sym) *sym = NULL;
	const ElfW(Rela) *jmprel = NULL, *rela = NULL;
	const char *str = NULL;
	size_t pltrelsz = 0, relasz = 0;
	uintptr_t base = info->dlpi_addr, relro_lo = 0, relro_hi = 0;
	int i;

	(void)size;
	if (w->rc || skipped(info->dlpi_name))
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_DYNAMIC)
			d = (const ElfW(Dyn) *)(base + ph->p_vaddr);
		/* The pages the loader made read-only: it rounds both ends
		 * down, so a last partial page stays writable (and must). */
		if (ph->p_type == PT_GNU_RELRO) {
			uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);

			relro_lo = (base + ph->p_vaddr) & ~(pg - 1);
			relro_hi =
			        (base + ph->p_vaddr + ph->p_memsz) & ~(pg - 1);
		}
	}
	for (; d && d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_SYMTAB:
			sym = (const ElfW(Sym) *)dyn_addr(base, d->d_un.d_ptr);
			break;
		case DT_STRTAB:
			str = (const char *)dyn_addr(base, d->d_un.d_ptr);
			break;
		case DT_JMPREL:
			jmprel = (const ElfW(Rela) *)dyn_addr(base,
			                                      d->d_un.d_ptr);
			break;
		case DT_PLTRELSZ:
			pltrelsz = d->d_un.d_val;
			break;
		case DT_RELA:
			rela = (const ElfW(Rela) *)dyn_addr(base,
			                                    d->d_un.d_ptr);
			break;
		case DT_RELASZ:
			relasz = d->d_un.d_val;
			break;
		}
	}
	if (!sym || !str)
		return 0;
	if (jmprel)
		w->rc = relocs(info, w, jmprel, pltrelsz, sym, str, relro_lo,
		               relro_hi);
	if (rela && !w->rc)
		w->rc = relocs(info, w, rela, relasz, sym, str, relro_lo,
		               relro_hi);
	return 0;
}

static int walk_all(char *why, size_t why_len)
{
	struct walk w = {set, nset, 0, why, why_len};

	dl_iterate_phdr(object, &w);
	return w.rc;
}

typedef void *(*dlopen_fn)(const char *, int);

/* The path the caller's own search list finds for a bare file name, or
 * NULL.  dlopen searches the RPATH or RUNPATH of the object that called
 * it; called from our hook, it would search ours.  So a bare name is
 * looked up here in the caller's list (with $ORIGIN, the caller's
 * folder) and passed on as a path; a name with a slash, or one the list
 * does not hold, goes on unchanged (the cache, LD_LIBRARY_PATH and the
 * default folders then decide, as they would have).  Limit: an RPATH
 * folder is searched before LD_LIBRARY_PATH, a RUNPATH one after it; a
 * file in both is found in the caller's list here. */
static const char *caller_path(const char *file, const void *ret, char *buf,
                               size_t len)
{
	const char *str = NULL, *list = NULL, *e, *slash;
	struct link_map *lm = NULL;
	const ElfW(Dyn) * d;
	size_t off = 0, olen, tok;
	bool have = false;
	Dl_info di;

	if (!file || strchr(file, '/') ||
	    !dladdr1(ret, &di, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
		return NULL;
	for (d = lm->l_ld; d && d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_STRTAB)
			str = (const char *)dyn_addr(lm->l_addr, d->d_un.d_ptr);
		if (d->d_tag == DT_RUNPATH || (d->d_tag == DT_RPATH && !have)) {
			off = d->d_un.d_val;
			have = true;
		}
	}
	if (!str || !have)
		return NULL;
	list = str + off;
	slash = di.dli_fname ? strrchr(di.dli_fname, '/') : NULL;
	olen = slash ? (size_t)(slash - di.dli_fname) : 1;
	for (; *list; list = *e ? e + 1 : e) {
		size_t n;

		e = strchr(list, ':');
		if (!e)
			e = list + strlen(list);
		n = (size_t)(e - list);
		/* $ORIGIN or ${ORIGIN} at the start: the caller's folder. */
		tok = n >= 7 && !strncmp(list, "$ORIGIN", 7)     ? 7
		      : n >= 9 && !strncmp(list, "${ORIGIN}", 9) ? 9
		                                                 : 0;
		snprintf(buf, len, "%.*s%.*s/%s", tok ? (int)olen : 0,
		         slash ? di.dli_fname : ".", (int)(n - tok), list + tok,
		         file);
		if (!access(buf, F_OK))
			return buf;
	}
	return NULL;
}

/* Objects loaded later get our hooks too: after the real dlopen
 * returned, outside the loader's own lock. */
static void *hook_dlopen(const char *file, int mode)
{
	dlopen_fn real = (dlopen_fn)atomic_load(&dl_entry.next);
	char why[256], path[4096];
	const char *as = caller_path(file, __builtin_return_address(0), path,
	                             sizeof(path));
	void *h = real(as ? as : file, mode);

	if (!h)
		return h;
	pthread_mutex_lock(&reloc_lock);
	if (walk_all(why, sizeof(why)))
		hmr_warn("%s (in an object dlopen loaded)", why);
	pthread_mutex_unlock(&reloc_lock);
	return h;
}

int hmr__reloc_apply(struct hmr__reloc *r, size_t n, char *why, size_t why_len)
{
	size_t i;
	int rc;

	pthread_mutex_lock(&reloc_lock);
	for (i = 0; i < n; i++) {
		if (!r[i].hook || r[i].real)
			continue;
		r[i].real = (fn)dlsym(RTLD_DEFAULT, r[i].name);
		if (!r[i].real) {
			snprintf(why, why_len,
			         "relocation hooks: no definition of %s",
			         r[i].name);
			rc = -FI_ENOSYS;
			goto out;
		}
		atomic_store(&r[i].next, r[i].real);
	}
	if (!dl_entry.real) {
		dl_entry.real = (fn)dlsym(RTLD_DEFAULT, "dlopen");
		atomic_store(&dl_entry.next, dl_entry.real);
		dl_entry.hook = dl_entry.real ? (fn)hook_dlopen : NULL;
	}
	set = r;
	nset = n;
	rc = walk_all(why, why_len);
out:
	pthread_mutex_unlock(&reloc_lock);
	return rc;
}
