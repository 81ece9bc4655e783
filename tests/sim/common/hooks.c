/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* hooks.c: log lines, environment values, call counters, failure rules. */
#include "sim_common.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIM_MAX_FAIL_RULES 32

/* One failure rule: name[@N][=status][:count]. */
struct sim_fail {
	char name[64];
	unsigned long skip; /* calls still let through */
	long count;         /* failures left; < 0: forever */
	long code;          /* what the call returns, if has_code */
	int has_code;       /* 0: the call site's default */
};

/* More than any simulator has entry points: every name gets a counter. */
#define SIM_MAX_NAMES 160

struct sim_calls {
	const char *name; /* a string literal of the simulator */
	unsigned long count;
};

/* calls_lock protects calls and ncalls. */
static pthread_mutex_t calls_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sim_calls calls[SIM_MAX_NAMES];
static int ncalls;
/* fails_lock protects fails and nfails, which sim_fails_set replaces. */
static pthread_mutex_t fails_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sim_fail fails[SIM_MAX_FAIL_RULES];
static int nfails;

void sim_vlog(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", sim_ops.log_prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void sim_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sim_vlog(fmt, ap);
	va_end(ap);
}

/* s (the value of var) as a number in lo..hi; dflt if unset or bad. */
long sim_env_value(const char *var, const char *s, long lo, long hi, long dflt)
{
	char *end;
	long v;

	if (!s || !*s)
		return dflt;
	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || *end || v < lo || v > hi) {
		sim_log("ignoring %s=%s (want %ld..%ld)", var, s, lo, hi);
		return dflt;
	}
	return v;
}

long sim_env_long(const char *var, long lo, long hi, long dflt)
{
	return sim_env_value(var, getenv(var), lo, hi, dflt);
}

/*
 * "1,0,...": out[i] is the switch of device i, 1 where the list ends
 * early.  -1 for a bad list; the entries before the bad one are kept.
 */
int sim_parse_switches(const char *spec, int *out, int n)
{
	int i;

	for (i = 0; i < n; i++)
		out[i] = 1;
	for (i = 0; spec && *spec && i < n; i++) {
		char *end;
		long v = strtol(spec, &end, 0);

		if (end == spec || (*end && *end != ','))
			return -1;
		out[i] = v != 0;
		spec = *end ? end + 1 : end;
	}
	return 0;
}

/* A whole non-negative number (decimal, 0x hex or 0 octal); 0 or -1. */
int sim_parse_count(const char *s, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 0);
	return errno || end == s || *end || *s == '-' ? -1 : 0;
}

void sim_calls_count(const char *name)
{
	int i;

	pthread_mutex_lock(&calls_lock);
	for (i = 0; i < ncalls; i++)
		if (strcmp(calls[i].name, name) == 0)
			break;
	if (i == ncalls && ncalls < SIM_MAX_NAMES)
		calls[ncalls++].name = name;
	if (i < ncalls)
		calls[i].count++;
	pthread_mutex_unlock(&calls_lock);
}

/* Calls so far of the entry point name; 0 for a name never called. */
unsigned long sim_calls_get(const char *name)
{
	unsigned long n = 0;

	if (!name)
		return 0;
	pthread_mutex_lock(&calls_lock);
	for (int i = 0; i < ncalls; i++)
		if (strcmp(calls[i].name, name) == 0)
			n = calls[i].count;
	pthread_mutex_unlock(&calls_lock);
	return n;
}

/* "name[@N][=status][:count]"; item is modified. */
static int parse_rule(char *item, struct sim_fail *r)
{
	char *colon = strchr(item, ':'), *eq, *at;
	unsigned long n;
	int rc;

	memset(r, 0, sizeof(*r));
	r->count = -1;
	if (colon) {
		*colon = '\0';
		if (sim_parse_count(colon + 1, &n) || n > LONG_MAX)
			return -1;
		r->count = (long)n;
	}
	eq = strchr(item, '=');
	if (eq)
		*eq = '\0';
	at = strchr(item, '@');
	if (at) {
		*at = '\0';
		if (sim_parse_count(at + 1, &r->skip))
			return -1;
	}
	if (!*item || strlen(item) >= sizeof(r->name))
		return -1;
	memcpy(r->name, item, strlen(item) + 1);
	rc = sim_ops.fail_rule(r->name, eq ? eq + 1 : NULL, &r->code);
	r->has_code = rc == 0;
	return rc < 0 ? -1 : 0;
}

/*
 * The rules of spec, into rules[].  A bad item is logged and dropped;
 * with all_or_nothing it makes the whole spec bad (-1).
 */
static int parse_rules(const char *spec, struct sim_fail *rules,
                       int all_or_nothing)
{
	char *copy, *item, *save = NULL;
	int n = 0, bad = 0;

	if (!spec || !*spec)
		return 0;
	copy = strdup(spec);
	if (!copy)
		return all_or_nothing ? -1 : 0;
	for (item = strtok_r(copy, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		char shown[128];

		snprintf(shown, sizeof(shown), "%s", item);
		if (n < SIM_MAX_FAIL_RULES &&
		    parse_rule(item, &rules[n]) == 0) {
			n++;
			continue;
		}
		bad = 1;
		if (!all_or_nothing)
			sim_log("ignoring %s item '%s'", sim_ops.fail_var,
			        shown);
	}
	free(copy);
	return bad && all_or_nothing ? -1 : n;
}

/*
 * Replaces the rules with those of spec (NULL or "" clears them); @N
 * counts from now.  The number of rules, or -1 for a spec refused whole
 * (all_or_nothing), which changes nothing.
 */
int sim_fails_set(const char *spec, int all_or_nothing)
{
	struct sim_fail rules[SIM_MAX_FAIL_RULES];
	int n = parse_rules(spec, rules, all_or_nothing);

	if (n < 0)
		return -1;
	pthread_mutex_lock(&fails_lock);
	memcpy(fails, rules, (size_t)n * sizeof(rules[0]));
	nfails = n;
	pthread_mutex_unlock(&fails_lock);
	return n;
}

/*
 * 1 when a rule makes this call of name fail, with *code set unless the
 * rule leaves the call site's default in it.
 */
int sim_fails_check(const char *name, long *code)
{
	unsigned int flags = sim_ops.fail_flags;
	int fire = 0;

	pthread_mutex_lock(&fails_lock);
	for (int i = 0; i < nfails && !fire; i++) {
		struct sim_fail *r = &fails[i];

		if (strcmp(r->name, name) != 0)
			continue;
		if (r->count == 0 && !(flags & SIM_FAIL_SKIP_FIRST))
			continue;
		if (r->skip > 0) {
			r->skip--;
			if (flags & SIM_FAIL_SKIP_ON)
				continue;
			break;
		}
		if (r->count == 0)
			continue;
		if (r->count > 0)
			r->count--;
		if (r->has_code)
			*code = r->code;
		fire = 1;
	}
	pthread_mutex_unlock(&fails_lock);
	return fire;
}

static void hooks_lock(void)
{
	pthread_mutex_lock(&calls_lock);
	pthread_mutex_lock(&fails_lock);
}

static void hooks_unlock(void)
{
	pthread_mutex_unlock(&fails_lock);
	pthread_mutex_unlock(&calls_lock);
}

/* A fork child must not inherit a hooks lock another thread held. */
void sim_hooks_atfork(void)
{
	pthread_atfork(hooks_lock, hooks_unlock, hooks_unlock);
}
