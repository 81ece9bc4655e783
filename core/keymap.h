/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* keymap.h: a uint64_t -> pointer hash map (open addressing). */
#ifndef HMR_CORE_KEYMAP_H
#define HMR_CORE_KEYMAP_H

#include <stddef.h>
#include <stdint.h>

/*
 * Linear probing with backward-shift deletion, so lookups never wade
 * through tombstones after many register/close cycles.  Not thread-safe:
 * the owner (the domain) holds its lock around every call.
 */
struct hmr_keymap {
	struct hmr_keymap_slot *slots;
	size_t cap; /* A power of two, or 0 before the first insert. */
	size_t count;
};

void hmr__keymap_init(struct hmr_keymap *map);
void hmr__keymap_fini(struct hmr_keymap *map);
void *hmr__keymap_find(const struct hmr_keymap *map, uint64_t key);
/* 0; -FI_ENOKEY when the key is present; -FI_ENOMEM. */
int hmr__keymap_insert(struct hmr_keymap *map, uint64_t key, void *val);
/* Returns the removed value, or NULL. */
void *hmr__keymap_remove(struct hmr_keymap *map, uint64_t key);

#endif /* HMR_CORE_KEYMAP_H */
