/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* keymap.h: a uint64_t -> pointer hash map (open addressing). */
#ifndef HMR_CORE_KEYMAP_H
#define HMR_CORE_KEYMAP_H

#include <stddef.h>
#include <stdint.h>

/*
 * Linear probing with backward-shift deletion, so lookups never wade
 * through tombstones after many register/close cycles.  Not thread-safe
 * for writers: the owner (the domain) holds its lock around every call
 * but hmr__keymap_find_racy.  A table outgrown is retired, not freed
 * (until fini: at most as much again as the live table), so a lock-free
 * reader holding it still reads mapped memory.
 */
struct hmr_keymap_table;

struct hmr_keymap {
	struct hmr_keymap_table *tab; /* NULL before the first insert. */
	size_t count;
};

void hmr__keymap_init(struct hmr_keymap *map);
void hmr__keymap_fini(struct hmr_keymap *map);
void *hmr__keymap_find(const struct hmr_keymap *map, uint64_t key);
/* 0; -FI_ENOKEY when the key is present; -FI_ENOMEM. */
int hmr__keymap_insert(struct hmr_keymap *map, uint64_t key, void *val);
/* Returns the removed value, or NULL. */
void *hmr__keymap_remove(struct hmr_keymap *map, uint64_t key);

/* find, racing with writers: the answer may be stale or torn, and counts
 * only once the caller has checked that no writer ran meanwhile (the
 * shard's sequence count).  Always returns, and reads only the map's
 * live or retired tables. */
void *hmr__keymap_find_racy(const struct hmr_keymap *map, uint64_t key);
/* Start loading key's slot into the cache, lock or no lock: a caller that
 * will insert or remove the key soon overlaps the miss with other work. */
void hmr__keymap_prefetch(const struct hmr_keymap *map, uint64_t key);

#endif /* HMR_CORE_KEYMAP_H */
