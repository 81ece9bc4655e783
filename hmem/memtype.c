/* memtype.c: the memtype cache: address ranges already classified. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "hmem.h"

/*
 * A sorted array of disjoint ranges under a sequence lock: lookups take no
 * lock and write nothing shared, so classifying a known host buffer costs
 * a binary search, and threads do not contend.  Writers (a backend
 * reported an allocation, a range was classified, memory was freed) hold
 * `write_lock` and bump `seq` to odd while they change the array; readers
 * retry when `seq` moved.  Every field is an atomic so that the retry
 * protocol is data-race free in C11 terms (and quiet under TSan).
 *
 * Host ranges are cached only at the size they were asked about; nothing
 * here learns the extent of host mappings.  When the array is full the
 * host ranges are dropped first: they are cheap to learn again.
 */
#define MEMTYPE_MAX 4096

struct entry {
	_Atomic uintptr_t start, end; /* [start, end) */
	_Atomic uint64_t iface_flags; /* iface << 32 | flags */
	_Atomic uint64_t device, base, size, buffer_id;
};

static struct entry table[MEMTYPE_MAX]; /* (write_lock; seq for readers) */
static _Atomic size_t count;            /* (write_lock; seq for readers) */
static _Atomic unsigned seq;            /* Odd while a writer works. */
static pthread_mutex_t write_lock = PTHREAD_MUTEX_INITIALIZER;

#define LD(x)    atomic_load_explicit(&(x), memory_order_relaxed)
#define ST(x, v) atomic_store_explicit(&(x), (v), memory_order_relaxed)

/* The index of the last entry with start <= addr, or -1. */
static long find(uintptr_t addr, size_t n)
{
	long lo = 0, hi = (long)n - 1, at = -1;

	while (lo <= hi) {
		long mid = lo + (hi - lo) / 2;

		if (LD(table[mid].start) <= addr) {
			at = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return at;
}

static void read_entry(const struct entry *e, struct hmr_hmem_info *info)
{
	uint64_t iface_flags = LD(e->iface_flags);

	info->iface = (enum fi_hmem_iface)(iface_flags >> 32);
	info->flags = (uint32_t)iface_flags;
	info->device = LD(e->device);
	info->base = LD(e->base);
	info->size = LD(e->size);
	info->buffer_id = LD(e->buffer_id);
}

int hmr__memtype_lookup(uintptr_t addr, size_t len, struct hmr_hmem_info *info)
{
	unsigned s1, s2;
	int found;

	do {
		s1 = atomic_load_explicit(&seq, memory_order_acquire);
		found = 0;
		if (!(s1 & 1)) {
			size_t n = LD(count);
			long i = find(addr, n < MEMTYPE_MAX ? n : MEMTYPE_MAX);

			if (i >= 0 && addr + len <= LD(table[i].end) &&
			    addr + len >= addr) {
				read_entry(&table[i], info);
				found = 1;
			}
		}
		atomic_thread_fence(memory_order_acquire);
		s2 = atomic_load_explicit(&seq, memory_order_relaxed);
	} while ((s1 & 1) || s1 != s2);
	return found;
}

static void copy_entry(struct entry *dst, struct entry *src)
{
	ST(dst->start, LD(src->start));
	ST(dst->end, LD(src->end));
	ST(dst->iface_flags, LD(src->iface_flags));
	ST(dst->device, LD(src->device));
	ST(dst->base, LD(src->base));
	ST(dst->size, LD(src->size));
	ST(dst->buffer_id, LD(src->buffer_id));
}

static void write_begin(void)
{
	pthread_mutex_lock(&write_lock);
	atomic_fetch_add_explicit(&seq, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
}

static void write_end(void)
{
	atomic_fetch_add_explicit(&seq, 1, memory_order_release);
	pthread_mutex_unlock(&write_lock);
}

/* Writers only: drop entries overlapping [start, end), trimming none (a
 * partial overlap means the old allocation is gone). */
static void remove_locked(uintptr_t start, uintptr_t end)
{
	size_t n = LD(count), i, j = 0;

	for (i = 0; i < n; i++) {
		if (LD(table[i].start) < end && LD(table[i].end) > start)
			continue;
		if (i != j)
			copy_entry(&table[j], &table[i]);
		j++;
	}
	ST(count, j);
}

/* Writers only: the array is full; forget the host ranges. */
static void drop_host_locked(void)
{
	size_t n = LD(count), i, j = 0;

	for (i = 0; i < n; i++) {
		if ((LD(table[i].iface_flags) >> 32) == FI_HMEM_SYSTEM)
			continue;
		if (i != j)
			copy_entry(&table[j], &table[i]);
		j++;
	}
	/* All device: start over rather than refuse to learn. */
	ST(count, j == n ? 0 : j);
}

void hmr__memtype_insert(uintptr_t start, uintptr_t end,
                         const struct hmr_hmem_info *info)
{
	size_t n, i;
	long at;

	if (end <= start)
		return;
	write_begin();
	remove_locked(start, end);
	if (LD(count) == MEMTYPE_MAX)
		drop_host_locked();
	n = LD(count);
	at = find(start, n) + 1;
	for (i = n; i > (size_t)at; i--)
		copy_entry(&table[i], &table[i - 1]);
	ST(table[at].start, start);
	ST(table[at].end, end);
	ST(table[at].iface_flags,
	   (uint64_t)info->iface << 32 | (uint64_t)info->flags);
	ST(table[at].device, info->device);
	ST(table[at].base, info->base);
	ST(table[at].size, info->size);
	ST(table[at].buffer_id, info->buffer_id);
	ST(count, n + 1);
	write_end();
}

void hmr__memtype_remove(uintptr_t start, uintptr_t end)
{
	write_begin();
	remove_locked(start, end);
	write_end();
}
