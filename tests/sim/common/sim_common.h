/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* sim_common.h: what every simulated vendor runtime shares. */
#ifndef HMR_SIM_COMMON_H
#define HMR_SIM_COMMON_H

/*
 * A static library linked into each simulator's shared object, with
 * hidden symbols: every .so gets its own copy of the state below, and
 * exports nothing more than before.
 *
 * - hooks.c: the log line, environment integers and per-device switch
 *   lists, the per-call counters behind hmr_sim_<x>_calls and the
 *   failure rules "name[@N][=status][:count],..." behind HMR_SIM_<X>_FAIL.
 * - mem.c: memfds, their read/write shadow views (struct sim_mem),
 *   fixed mappings in a PROT_NONE address reservation, dma-bufs of them.
 * - table.c: the sorted address table with first-fit placement.
 *
 * The simulator supplies one const struct sim_ops named sim_ops: its log
 * prefix, the name of its FAIL variable and how a rule's name and status
 * are checked.  Locking: the counters and the rules have a lock each,
 * taken alone; the table and the mappings are the caller's to lock.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * How rules match calls; the simulators grew apart here, and each keeps
 * its own answer for several rules naming one call.
 * SIM_FAIL_SKIP_FIRST: a rule counts down @N even once exhausted (:0).
 * SIM_FAIL_SKIP_ON: a rule counting down @N does not hide later rules.
 */
#define SIM_FAIL_SKIP_FIRST 1u
#define SIM_FAIL_SKIP_ON    2u

struct sim_ops {
	const char *log_prefix; /* "sim-cuda" */
	const char *fail_var;   /* "HMR_SIM_CUDA_FAIL", for messages */
	unsigned int fail_flags;
	/*
	 * Checks a rule's name (and may rewrite it) and its status word,
	 * the text after '=' (NULL when absent): 0 with *code set, 1 when
	 * the call site's default applies, -1 to reject the item.
	 */
	int (*fail_rule)(char *name, const char *word, long *code);
};

/* Defined once by each simulator. */
extern const struct sim_ops sim_ops;

/* hooks.c: messages and configuration */
void sim_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sim_vlog(const char *fmt, va_list ap)
        __attribute__((format(printf, 1, 0)));
long sim_env_value(const char *var, const char *s, long lo, long hi, long dflt);
long sim_env_long(const char *var, long lo, long hi, long dflt);
int sim_parse_switches(const char *spec, int *out, int n);
int sim_parse_count(const char *s, unsigned long *out);

/* hooks.c: call counters and failure rules */
void sim_calls_count(const char *name);
unsigned long sim_calls_get(const char *name);
int sim_fails_set(const char *spec, int all_or_nothing);
int sim_fails_check(const char *name, long *code);
void sim_hooks_atfork(void);

/* mem.c */
size_t sim_page_size(void);
static inline uint64_t sim_round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}
int sim_memfd(const char *name, size_t size);
void *sim_map_shadow(int fd, size_t len);
int sim_map_fixed(uint64_t addr, size_t len, int prot, int fd, off_t off);
void sim_unmap_fixed(uint64_t addr, size_t len);
void *sim_reserve(size_t len);
int sim_dmabuf_fd(int memfd, off_t off, size_t len);
struct udmabuf_create_item; /* <linux/udmabuf.h> */
int sim_dmabuf_list_fd(const struct udmabuf_create_item *items, unsigned n);
/* 1 when sim_dmabuf_fd makes udmabufs (HMR_SIM_DMABUF=udmabuf): then an
 * export fd is not the memfd's open file. */
int sim_dmabuf_real(void);

/* A memfd and the simulator's read/write view of it. */
struct sim_mem {
	int fd;
	size_t size; /* page multiple */
	unsigned char *shadow;
};

int sim_mem_create(struct sim_mem *m, size_t size, size_t align,
                   const char *name);
int sim_mem_adopt(struct sim_mem *m, int fd, size_t size);
void sim_mem_destroy(struct sim_mem *m);

/*
 * table.c: pointers to the simulator's own records, sorted by the
 * 8-byte address field at base_off; span_off names the 8-byte field of
 * bytes each record holds from there.
 */
struct sim_table {
	void **v;
	size_t n, cap;
	size_t base_off, span_off;
};

#define SIM_TABLE_INIT(type, base, span)                                       \
	{                                                                      \
		.base_off = offsetof(type, base),                              \
		.span_off = offsetof(type, span),                              \
	}

/* At file scope, next to the record: the fields must be 8 bytes. */
#define SIM_TABLE_FIELDS_OK(type, base, span)                                  \
	_Static_assert(sizeof(((type *)0)->base) == 8 &&                       \
	                       sizeof(((type *)0)->span) == 8,                 \
	               #type ": table fields must be 8 bytes")

size_t sim_table_index(const struct sim_table *t, uint64_t p);
void *sim_table_floor(const struct sim_table *t, uint64_t p);
void *sim_table_overlap(const struct sim_table *t, uint64_t p, uint64_t len);
int sim_table_put(struct sim_table *t, void *e);
int sim_table_insert(struct sim_table *t, void *e);
int sim_table_remove(struct sim_table *t, void *e);
int sim_table_first_fit(const struct sim_table *t, uint64_t lo, uint64_t hi,
                        uint64_t span, uint64_t align, uint64_t *addr);
uint64_t sim_table_base(const struct sim_table *t, const void *e);
uint64_t sim_table_span(const struct sim_table *t, const void *e);

#endif /* HMR_SIM_COMMON_H */
