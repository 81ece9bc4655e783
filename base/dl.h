/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* dl.h: loading a vendor runtime with dlopen, symbols from one table. */
#ifndef HMR_HMEM_DL_H
#define HMR_HMEM_DL_H

#include <stdbool.h>
#include <stddef.h>

struct hmr_dl_sym {
	const char *name;
	void **ptr;
	bool optional; /* Left NULL when missing instead of failing. */
};

/*
 * dlopen the first library that loads: the path in the environment
 * variable `override_env` if it is set (and only it), else each of
 * `names` in order.  -FI_ENOSYS with the reason in `why` when none loads:
 * "absent", not an error.
 */
int hmr__dl_open(const char *override_env, const char *const *names,
                 size_t count, void **handle, char *why, size_t why_len);

/* The path the loader found for a handle dlopen returned ("" if none). */
void hmr__dl_path(void *handle, char *buf, size_t len);

/* Resolve each symbol with dlsym; -FI_ENOSYS naming the first missing
 * required one. */
int hmr__dl_resolve(void *handle, const struct hmr_dl_sym *syms, size_t count,
                    char *why, size_t why_len);

#endif /* HMR_HMEM_DL_H */
