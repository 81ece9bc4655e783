/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* config.c: the settings table: declared variables, API overrides, env. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/config.h"
#include "base/log.h"

/* The linker makes these for the section HMR_CONFIG_VAR fills. */
extern const struct hmr__config_var __start_hmr_config[];
extern const struct hmr__config_var __stop_hmr_config[];

HMR_CONFIG_VAR(HMR_LOG_LEVEL, "warn",
               "log level on stderr: none, warn, info, debug");

/* Values set with hmr_config_set, by declared variable.  Every copy ever
 * set is kept on `copies` and freed only at unload: a pointer handed out
 * by hmr__config_get stays valid while the library is loaded. */
#define MAX_SETS 64
struct copy {
	struct copy *next;
	char value[];
};
static pthread_mutex_t set_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	const struct hmr__config_var *var;
	const char *value;
} sets[MAX_SETS];           /* (set_lock) */
static size_t nsets;        /* (set_lock) */
static struct copy *copies; /* (set_lock) */

__attribute__((destructor)) static void free_copies(void)
{
	struct copy *c, *next;

	pthread_mutex_lock(&set_lock);
	for (c = copies; c; c = next) {
		next = c->next;
		free(c);
	}
	copies = NULL;
	nsets = 0;
	pthread_mutex_unlock(&set_lock);
}

static const struct hmr__config_var *find(const char *name)
{
	const struct hmr__config_var *v;

	for (v = __start_hmr_config; v < __stop_hmr_config; v++)
		if (strcmp(v->name, name) == 0)
			return v;
	return NULL;
}

static const char *api_value(const struct hmr__config_var *v)
{
	const char *value = NULL;
	size_t i;

	pthread_mutex_lock(&set_lock);
	for (i = 0; i < nsets; i++)
		if (sets[i].var == v)
			value = sets[i].value;
	pthread_mutex_unlock(&set_lock);
	return value;
}

static const char *value_of(const struct hmr__config_var *v,
                            enum hmr_config_source *source)
{
	const char *value = api_value(v);
	enum hmr_config_source src = HMR_CONFIG_API;

	if (!value) {
		value = getenv(v->name);
		src = HMR_CONFIG_ENV;
	}
	if (!value) {
		value = v->def;
		src = HMR_CONFIG_DEFAULT;
	}
	if (source)
		*source = src;
	return value;
}

const char *hmr__config_get(const char *name, enum hmr_config_source *source)
{
	const struct hmr__config_var *v = find(name);

	if (!v) {
		hmr_warn("setting %s is read but not declared", name);
		if (source)
			*source = HMR_CONFIG_ENV;
		return getenv(name);
	}
	return value_of(v, source);
}

int hmr__config_true(const char *name)
{
	const char *v = hmr__config_get(name, NULL);

	return v && (!strcmp(v, "1") || !strcasecmp(v, "yes") ||
	             !strcasecmp(v, "true") || !strcasecmp(v, "on"));
}

int hmr_config_set(const char *name, const char *value)
{
	const struct hmr__config_var *v;
	struct copy *copy = NULL;
	size_t i;

	if (!name)
		return -FI_EINVAL;
	v = find(name);
	if (!v) {
		hmr_warn("hmr_config_set: no setting named %s", name);
		return -FI_ENOENT;
	}
	if (value) {
		copy = malloc(sizeof(*copy) + strlen(value) + 1);
		if (!copy)
			return -FI_ENOMEM;
		strcpy(copy->value, value);
	}
	pthread_mutex_lock(&set_lock);
	for (i = 0; i < nsets && sets[i].var != v; i++)
		;
	if (i == MAX_SETS) {
		pthread_mutex_unlock(&set_lock);
		free(copy);
		return -FI_ENOSPC;
	}
	if (copy) {
		copy->next = copies;
		copies = copy;
	}
	sets[i].var = v;
	sets[i].value = copy ? copy->value : NULL;
	if (i == nsets)
		nsets++;
	pthread_mutex_unlock(&set_lock);
	return 0;
}

int hmr_config_entry(size_t index, struct hmr_config_info *info)
{
	const struct hmr__config_var *v = __start_hmr_config + index;

	if (!info)
		return -FI_EINVAL;
	if (index >= (size_t)(__stop_hmr_config - __start_hmr_config))
		return -FI_ENOENT;
	info->name = v->name;
	info->help = v->help;
	info->default_value = v->def;
	info->value = value_of(v, &info->source);
	return 0;
}
