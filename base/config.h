/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* config.h: every setting hmr reads, declared where it is used. */
#ifndef HMR_BASE_CONFIG_H
#define HMR_BASE_CONFIG_H

#include <hmr/hmr.h>

/*
 * A setting is declared once, in the file that reads it, with
 * HMR_CONFIG_VAR(name, default, help): the declaration goes into the
 * linker section "hmr_config", which base/config.c walks, so hmr_info and
 * hmr_config_entry list every setting of every layer (a backend declares
 * its own: no vendor name leaves its folder) whether or not its code ran.
 * Values come from hmr_config_set (a program that does not want to set
 * environment variables), else the environment, else the default.
 */
struct hmr__config_var {
	const char *name;
	const char *def; /* NULL: unset by default. */
	const char *help;
};

#define HMR_CONFIG_VAR(var, dflt, text)                                        \
	__attribute__((                                                        \
	        used, section("hmr_config"),                                   \
	        aligned(sizeof(void *)))) static const struct hmr__config_var  \
	        hmr__config_##var = {#var, dflt, text}

/* The value of a declared setting, or NULL when it is unset with no
 * default; `source` (may be NULL) says where it came from.  Reading an
 * undeclared name is a bug: it logs a warning and reads the environment. */
const char *hmr__config_get(const char *name, enum hmr_config_source *source);

/* A boolean setting: 1, yes, true, on (any case) are true. */
int hmr__config_true(const char *name);

#endif /* HMR_BASE_CONFIG_H */
