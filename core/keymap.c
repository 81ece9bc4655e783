/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* keymap.c: the hash map behind keys and mapped raw keys. */
#include <stdlib.h>

#include <hmr/fi_mr.h>

#include "base/alloc.h"
#include "core/keymap.h"

/* Whole stores where a lock-free reader may look (find_racy). */
#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define LOAD(x)     HMR_READ_ONCE(x)

static size_t slot_of(const struct hmr_keymap_table *t, uint64_t key)
{
	return hmr__keymap_hash(key, t->shift);
}

void hmr__keymap_init(struct hmr_keymap *map)
{
	map->tab = NULL;
	map->count = 0;
}

void hmr__keymap_fini(struct hmr_keymap *map)
{
	struct hmr_keymap_table *t = map->tab, *next;

	for (; t; t = next) {
		next = t->retired;
		free(t);
	}
	hmr__keymap_init(map);
}

void *hmr__keymap_find(const struct hmr_keymap *map, uint64_t key)
{
	const struct hmr_keymap_table *t = map->tab;
	size_t i;

	if (!t)
		return NULL;
	for (i = slot_of(t, key); t->slots[i].val; i = (i + 1) & t->mask) {
		if (t->slots[i].key == key)
			return t->slots[i].val;
	}
	return NULL;
}

__attribute__((no_sanitize("thread"))) void
hmr__keymap_prefetch(const struct hmr_keymap *map, uint64_t key)
{
	const struct hmr_keymap_table *t = LOAD(map->tab);
	size_t mask;

	if (t)
		__builtin_prefetch(
		        &t->slots[hmr__keymap_racy_slot(t, key, &mask)], 1);
}

static void place(struct hmr_keymap_table *t, uint64_t key, void *val)
{
	size_t i = slot_of(t, key);

	while (t->slots[i].val)
		i = (i + 1) & t->mask;
	STORE(t->slots[i].key, key);
	STORE(t->slots[i].val, val);
}

static int grow(struct hmr_keymap *map)
{
	struct hmr_keymap_table *old = map->tab, *t;
	size_t cap = old ? (old->mask + 1) * 2 : 64, i;
	unsigned bits = 0;

	t = hmr__calloc(1, sizeof(*t) + cap * sizeof(t->slots[0]));
	if (!t)
		return -FI_ENOMEM;
	while (((size_t)1 << bits) < cap)
		bits++;
	t->mask = cap - 1;
	t->shift = 64 - bits;
	t->retired = old;
	for (i = 0; old && i <= old->mask; i++) {
		if (old->slots[i].val)
			place(t, old->slots[i].key, old->slots[i].val);
	}
	/* Filled before it is published. */
	__atomic_store_n(&map->tab, t, __ATOMIC_RELEASE);
	return 0;
}

int hmr__keymap_insert(struct hmr_keymap *map, uint64_t key, void *val)
{
	struct hmr_keymap_table *t = map->tab;
	size_t i;
	int ret;

	/* One probe run finds a duplicate or the free slot for the key. */
	for (i = t ? slot_of(t, key) : 0; t && t->slots[i].val;
	     i = (i + 1) & t->mask) {
		if (t->slots[i].key == key)
			return -FI_ENOKEY;
	}
	/* Keep the load under 1/2 so probe runs stay short. */
	if (!t || (map->count + 1) * 2 > t->mask + 1) {
		ret = grow(map);
		if (ret)
			return ret;
		t = map->tab;
		for (i = slot_of(t, key); t->slots[i].val;)
			i = (i + 1) & t->mask;
	}
	STORE(t->slots[i].key, key);
	STORE(t->slots[i].val, val);
	map->count++;
	return 0;
}

void *hmr__keymap_remove(struct hmr_keymap *map, uint64_t key)
{
	struct hmr_keymap_table *t = map->tab;
	size_t mask, i, j, home;
	void *val;

	if (!t)
		return NULL;
	mask = t->mask;
	for (i = slot_of(t, key); t->slots[i].val; i = (i + 1) & mask)
		if (t->slots[i].key == key)
			break;
	if (!t->slots[i].val)
		return NULL;
	val = t->slots[i].val;
	STORE(t->slots[i].val, NULL);
	map->count--;
	/* Backward-shift: pull later members of the run into the hole when
	 * their home slot does not lie cyclically in (i, j]. */
	for (j = (i + 1) & mask; t->slots[j].val; j = (j + 1) & mask) {
		home = slot_of(t, t->slots[j].key);
		if (((j - home) & mask) >= ((j - i) & mask)) {
			STORE(t->slots[i].key, t->slots[j].key);
			STORE(t->slots[i].val, t->slots[j].val);
			STORE(t->slots[j].val, NULL);
			i = j;
		}
	}
	return val;
}
