/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* dl.c: dlopen with an override variable, and a symbol-table loop. */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>

#include <hmr/fi_mr.h>

#include "base/config.h"
#include "base/dl.h"
#include "base/log.h"

int hmr__dl_open(const char *override_env, const char *const *names,
                 size_t count, void **handle, char *why, size_t why_len)
{
	const char *path =
	        override_env ? hmr__config_get(override_env, NULL) : NULL;
	size_t i;

	if (path && *path) {
		*handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (*handle)
			return 0;
		snprintf(why, why_len, "%s=%s does not load: %s", override_env,
		         path, dlerror());
		return -FI_ENOSYS;
	}
	for (i = 0; i < count; i++) {
		*handle = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
		if (*handle) {
			hmr_info("loaded %s", names[i]);
			return 0;
		}
	}
	/* dlerror() speaks of the last name tried; name the first. */
	snprintf(why, why_len, "%s not found (%zu names tried; %s)",
	         count ? names[0] : "?", count, dlerror());
	return -FI_ENOSYS;
}

void hmr__dl_path(void *handle, char *buf, size_t len)
{
	struct link_map *map = NULL;

	if (handle && dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map &&
	    map->l_name)
		snprintf(buf, len, "%s", map->l_name);
	else if (len)
		buf[0] = '\0';
}

int hmr__dl_resolve(void *handle, const struct hmr_dl_sym *syms, size_t count,
                    char *why, size_t why_len)
{
	size_t i;

	for (i = 0; i < count; i++) {
		*syms[i].ptr = dlsym(handle, syms[i].name);
		if (!*syms[i].ptr && !syms[i].optional) {
			snprintf(why, why_len, "symbol %s missing",
			         syms[i].name);
			return -FI_ENOSYS;
		}
	}
	return 0;
}
