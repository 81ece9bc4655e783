/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* keymap.c: the hash map behind keys and mapped raw keys. */
#include <stdlib.h>

#include <hmr/fi_mr.h>

#include "base/alloc.h"
#include "base/hash.h"
#include "core/keymap.h"

struct hmr_keymap_slot {
	uint64_t key;
	void *val; /* NULL marks an empty slot. */
};

static size_t slot_of(uint64_t key, size_t cap)
{
	/* Mixed: keys are often sequential. */
	return (size_t)hmr__hash64(key) & (cap - 1);
}

void hmr__keymap_init(struct hmr_keymap *map)
{
	map->slots = NULL;
	map->cap = 0;
	map->count = 0;
}

void hmr__keymap_fini(struct hmr_keymap *map)
{
	free(map->slots);
	hmr__keymap_init(map);
}

void *hmr__keymap_find(const struct hmr_keymap *map, uint64_t key)
{
	size_t i;

	if (!map->cap)
		return NULL;
	for (i = slot_of(key, map->cap); map->slots[i].val;
	     i = (i + 1) & (map->cap - 1)) {
		if (map->slots[i].key == key)
			return map->slots[i].val;
	}
	return NULL;
}

static void place(struct hmr_keymap_slot *slots, size_t cap, uint64_t key,
                  void *val)
{
	size_t i = slot_of(key, cap);

	while (slots[i].val)
		i = (i + 1) & (cap - 1);
	slots[i].key = key;
	slots[i].val = val;
}

static int grow(struct hmr_keymap *map)
{
	size_t cap = map->cap ? map->cap * 2 : 64, i;
	struct hmr_keymap_slot *slots = hmr__calloc(cap, sizeof(*slots));

	if (!slots)
		return -FI_ENOMEM;
	for (i = 0; i < map->cap; i++) {
		if (map->slots[i].val)
			place(slots, cap, map->slots[i].key, map->slots[i].val);
	}
	free(map->slots);
	map->slots = slots;
	map->cap = cap;
	return 0;
}

int hmr__keymap_insert(struct hmr_keymap *map, uint64_t key, void *val)
{
	int ret;

	if (hmr__keymap_find(map, key))
		return -FI_ENOKEY;
	/* Keep the load under 1/2 so probe runs stay short. */
	if ((map->count + 1) * 2 > map->cap) {
		ret = grow(map);
		if (ret)
			return ret;
	}
	place(map->slots, map->cap, key, val);
	map->count++;
	return 0;
}

void *hmr__keymap_remove(struct hmr_keymap *map, uint64_t key)
{
	size_t mask = map->cap - 1, i, j, home;
	void *val;

	if (!map->cap)
		return NULL;
	for (i = slot_of(key, map->cap); map->slots[i].val; i = (i + 1) & mask)
		if (map->slots[i].key == key)
			break;
	if (!map->slots[i].val)
		return NULL;
	val = map->slots[i].val;
	map->slots[i].val = NULL;
	map->count--;
	/* Backward-shift: pull later members of the run into the hole when
	 * their home slot does not lie cyclically in (i, j]. */
	for (j = (i + 1) & mask; map->slots[j].val; j = (j + 1) & mask) {
		home = slot_of(map->slots[j].key, map->cap);
		if (((j - home) & mask) >= ((j - i) & mask)) {
			map->slots[i] = map->slots[j];
			map->slots[j].val = NULL;
			i = j;
		}
	}
	return val;
}
