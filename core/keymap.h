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

struct hmr_keymap_slot {
	uint64_t key;
	void *val; /* NULL marks an empty slot. */
};

struct hmr_keymap_table {
	struct hmr_keymap_table *retired; /* The table this one replaced. */
	size_t mask;                      /* Slots - 1 (a power of two). */
	unsigned shift;                   /* 64 - log2(slots). */
	struct hmr_keymap_slot slots[];
};

/* A load done once (volatile: not torn, not repeated), for lock-free
 * readers, which ThreadSanitizer must not watch (no_sanitize): their
 * sequence count, not a lock, makes what they read good. */
#define HMR_READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))

static inline size_t hmr__keymap_hash(uint64_t key, unsigned shift)
{
	/* Fibonacci hashing: one multiply, and the product's top bits
	 * spread sequential keys (and a shard's keys, which share their low
	 * bits) over the table. */
	return (size_t)((key * 0x9e3779b97f4a7c15ULL) >> shift);
}

/* The slot for a lock-free reader: a table just published may show it
 * zeros (calloc's) for mask and shift on a weakly ordered CPU; masked,
 * the slot stays inside the table whatever it reads. */
__attribute__((no_sanitize("thread"))) static inline size_t
hmr__keymap_racy_slot(const struct hmr_keymap_table *t, uint64_t key,
                      size_t *mask)
{
	*mask = HMR_READ_ONCE(t->mask);
	return hmr__keymap_hash(key, HMR_READ_ONCE(t->shift)) & *mask;
}

/* find, racing with writers: the answer may be stale or torn, and counts
 * only once the caller has checked that no writer ran meanwhile (the
 * shard's sequence count).  Always returns, and reads only the map's
 * live or retired tables.  Inline: hmr_mr_access runs it per access. */
__attribute__((no_sanitize("thread"))) static inline void *
hmr__keymap_find_racy(const struct hmr_keymap *map, uint64_t key)
{
	const struct hmr_keymap_table *t = HMR_READ_ONCE(map->tab);
	size_t i, n, mask;
	void *val;

	if (!t)
		return NULL;
	/* A table is never full (load under 1/2), but one read while it
	 * changes may look so: at most one lap. */
	i = hmr__keymap_racy_slot(t, key, &mask);
	for (n = 0; n <= mask; n++, i = (i + 1) & mask) {
		val = HMR_READ_ONCE(t->slots[i].val);
		if (!val)
			return NULL;
		if (HMR_READ_ONCE(t->slots[i].key) == key)
			return val;
	}
	return NULL;
}

/* Start loading key's slot into the cache, lock or no lock: a caller that
 * will insert or remove the key soon overlaps the miss with other work. */
void hmr__keymap_prefetch(const struct hmr_keymap *map, uint64_t key);

#endif /* HMR_CORE_KEYMAP_H */
