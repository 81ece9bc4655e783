/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* memtype.c: the memtype cache: address ranges already classified. */
#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <string.h>

#include "base/log.h"
#include "base/range.h"
#include "hmem/hmem.h"
#include "monitor/monitor.h"

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
	_Atomic uintptr_t end;        /* [starts[i], end) */
	_Atomic uint64_t iface_flags; /* iface << 32 | flags */
	_Atomic uint64_t device, base, size, buffer_id;
};

/* The starts apart from the rest, so the search walks a dense array. */
static _Atomic uintptr_t starts[MEMTYPE_MAX]; /* (write_lock; seq) */
static struct entry table[MEMTYPE_MAX];       /* (write_lock; seq) */
static _Atomic size_t count; /* (write_lock; seq for readers) */
/*
 * Host ranges again, by their start address in a direct-mapped table: a
 * registration path asks about buffers by their start, and one probe
 * answers that without the search's chain of dependent loads.  A slot is
 * overwritten on collision; the sorted array still has every range.
 */
#define HOST_SLOTS HMR_MEMTYPE_HOST_SLOTS
#define host_start hmr__memtype_host_start
#define host_end   hmr__memtype_host_end
#define seq        hmr__memtype_seq
#define host_slot  hmr__memtype_host_slot
_Atomic uintptr_t host_start[HOST_SLOTS], host_end[HOST_SLOTS];
_Atomic unsigned seq = 2; /* Odd while a writer works. */
static pthread_mutex_t write_lock = PTHREAD_MUTEX_INITIALIZER;

#define LD(x)    atomic_load_explicit(&(x), memory_order_relaxed)
#define ST(x, v) atomic_store_explicit(&(x), (v), memory_order_relaxed)

/* The index of the last entry with start <= addr, or -1. */
/* Branch-free: the conditional move keeps the search's cost the same
 * whichever buffer is asked about (no mispredicted branches). */
static long find(uintptr_t addr, size_t n)
{
	size_t lo = 0, half;

	if (!n)
		return -1;
	while (n > 1) {
		half = n / 2;
		lo = LD(starts[lo + half]) <= addr ? lo + half : lo;
		n -= half;
	}
	return LD(starts[lo]) <= addr ? (long)lo : -1;
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

/*
 * Each thread remembers its last hit with the sequence number it was read
 * under: while no writer has run since, the same range answers without
 * searching.  A registration path asks about the same buffers again and
 * again, so this is the common case.  Initial-exec TLS: no
 * __tls_get_addr call on the hot path.
 */
struct last_hit {
	unsigned seq; /* 0: empty (the table's seq starts at 2). */
	uintptr_t start, end;
	struct hmr_hmem_info info;
};
static __thread struct last_hit last __attribute__((tls_model("initial-exec")));

/* The slow path: the binary search over every range. */
static int search(uintptr_t addr, uint64_t aend, struct hmr_hmem_info *info)
{
	unsigned s1, s2;
	int found;

	do {
		s1 = atomic_load_explicit(&seq, memory_order_acquire);
		found = 0;
		if (!(s1 & 1)) {
			size_t n = LD(count);
			long i = find(addr, n < MEMTYPE_MAX ? n : MEMTYPE_MAX);

			if (i >= 0 && aend <= LD(table[i].end)) {
				read_entry(&table[i], info);
				last.start = LD(starts[i]);
				last.end = LD(table[i].end);
				found = 1;
			}
		}
		atomic_thread_fence(memory_order_acquire);
		s2 = atomic_load_explicit(&seq, memory_order_relaxed);
	} while ((s1 & 1) || s1 != s2);
	if (found) {
		last.info = *info;
		last.seq = s1;
	}
	return found;
}

int hmr__memtype_lookup(uintptr_t addr, size_t len, struct hmr_hmem_info *info)
{
	unsigned s1 = atomic_load_explicit(&seq, memory_order_acquire);
	uint64_t aend;

	if (!hmr__range_end(addr, len, &aend))
		return 0;
	if (hmr__memtype_host_hit(addr, aend)) {
		memset(info, 0, sizeof(*info));
		info->iface = FI_HMEM_SYSTEM;
		return 1;
	}
	/* This thread's last answer, if nothing changed since. */
	if (last.seq == s1 && addr >= last.start && aend <= last.end) {
		*info = last.info;
		return 1;
	}
	return search(addr, aend, info);
}

int hmr__memtype_device_at(const struct iovec *iov, size_t n,
                           struct hmr_hmem_info *info)
{
	size_t i;

	if (!LD(count))
		return 0;
	for (i = 0; i < n; i++) {
		if (!iov[i].iov_len ||
		    !hmr__memtype_lookup((uintptr_t)iov[i].iov_base, 1, info))
			continue;
		if (info->iface != FI_HMEM_SYSTEM &&
		    !(info->flags & (HMR_HMEM_HOST_ALLOC | HMR_HMEM_MANAGED)))
			return 1;
	}
	return 0;
}

static void copy_entry(size_t d, size_t src_i)
{
	struct entry *dst = &table[d], *src = &table[src_i];

	ST(starts[d], LD(starts[src_i]));
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
		uintptr_t s0 = LD(starts[i]);

		if (s0 < end && LD(table[i].end) > start) {
			size_t h = host_slot(s0);

			if (LD(host_start[h]) == s0)
				ST(host_start[h], 0);
			continue;
		}
		if (i != j)
			copy_entry(j, i);
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
			copy_entry(j, i);
		j++;
	}
	/* All device: start over rather than refuse to learn. */
	ST(count, j == n ? 0 : j);
	for (i = 0; i < HOST_SLOTS; i++)
		ST(host_start[i], 0);
}

/* Writers only: [start, end) is `info` from now on. */
static void insert_locked(uintptr_t start, uintptr_t end,
                          const struct hmr_hmem_info *info)
{
	size_t n, i;
	long at;

	remove_locked(start, end);
	if (LD(count) == MEMTYPE_MAX)
		drop_host_locked();
	n = LD(count);
	at = find(start, n) + 1;
	for (i = n; i > (size_t)at; i--)
		copy_entry(i, i - 1);
	ST(starts[at], start);
	ST(table[at].end, end);
	ST(table[at].iface_flags,
	   (uint64_t)info->iface << 32 | (uint64_t)info->flags);
	ST(table[at].device, info->device);
	ST(table[at].base, info->base);
	ST(table[at].size, info->size);
	ST(table[at].buffer_id, info->buffer_id);
	ST(count, n + 1);
	if (info->iface == FI_HMEM_SYSTEM) {
		ST(host_start[host_slot(start)], start);
		ST(host_end[host_slot(start)], end);
	}
}

void hmr__memtype_insert(uintptr_t start, uintptr_t end,
                         const struct hmr_hmem_info *info)
{
	if (end <= start)
		return;
	write_begin();
	insert_locked(start, end, info);
	write_end();
}

void hmr__memtype_remove(uintptr_t start, uintptr_t end)
{
	write_begin();
	remove_locked(start, end);
	write_end();
}

/*
 * Host answers.  Device memory can appear at an address that was host
 * memory (Neuron maps /dev/neuron anywhere; runtimes hand freed addresses
 * back), so a host answer is remembered only while something will tell
 * when it ends: the process's memory monitor, whose event for an unmap,
 * remap or MAP_FIXED over a range arrives before the kernel acts, and
 * removes every entry overlapping it (`unmapped` below).  Pages that are
 * not mapped readable now (a freed device address, a runtime's PROT_NONE
 * reservation, where it may allocate next without any mmap) are answered
 * host but never remembered (hostmap.c).
 *
 * The race: a thread classifies [a, b) as host, then an event for [a, b)
 * runs and device memory is mapped there, then the thread inserts its
 * answer.  `events` counts every event; a host answer carries the count
 * read before the backends were asked (its ticket) and is inserted only
 * if no event ran since.  The check is made with seq odd, and an event
 * bumps `events` before it reads seq: one of the two sees the other (the
 * seq_cst fences), so either the insert is skipped or the event finds the
 * entry and removes it.
 */
enum host_state { HOST_UNDECIDED, HOST_CACHED, HOST_NOT_CACHED };
static _Atomic uint64_t events;
static _Atomic int host_state; /* enum host_state; set under state_lock */
static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;

/* Some entry meets [start, end): read under seq, like a lookup. */
static bool overlaps(uintptr_t start, uintptr_t end)
{
	unsigned s1, s2;
	bool hit;

	do {
		s1 = atomic_load_explicit(&seq, memory_order_acquire);
		hit = false;
		if (!(s1 & 1)) {
			size_t n = LD(count);
			long i = find(end - 1,
			              n < MEMTYPE_MAX ? n : MEMTYPE_MAX);

			/* Sorted and disjoint: the last entry starting below
			 * `end` is the one that may reach past `start`. */
			hit = i >= 0 && LD(table[i].end) > start;
		}
		atomic_thread_fence(memory_order_acquire);
		s2 = atomic_load_explicit(&seq, memory_order_relaxed);
	} while ((s1 & 1) || s1 != s2);
	return hit;
}

/*
 * The monitor's event: runs inside munmap (maybe called by free), on any
 * thread.  It allocates nothing, and write_lock is never held across an
 * allocation or an unmap, so waiting for it cannot deadlock.  Most events
 * meet no entry and take no lock.  Nested events need no care: removing
 * entries unmaps nothing.
 */
static void unmapped(struct hmr_monitor_sub *sub, uintptr_t start, size_t len,
                     bool nested)
{
	uint64_t end;

	(void)sub, (void)nested;
	atomic_fetch_add(&events, 1);
	atomic_thread_fence(memory_order_seq_cst);
	if (!hmr__range_end(start, len, &end))
		end = UINTPTR_MAX;
	if (!overlaps(start, end))
		return;
	write_begin();
	remove_locked(start, end);
	write_end();
}

static struct hmr_monitor_sub sub = {.unmapped = unmapped};

/* Writers only: forget every host answer. */
static void drop_all_host(void)
{
	write_begin();
	drop_host_locked();
	write_end();
}

/* Once: start the monitor (lazily: the first host answer to remember) and
 * decide whether host answers can be remembered at all. */
static void decide(void)
{
	char why[256] = "";
	enum hmr_monitor_kind kind;
	int state = HOST_NOT_CACHED;

	pthread_mutex_lock(&state_lock);
	if (atomic_load(&host_state) != HOST_UNDECIDED)
		goto out;
	hmr__monitor_start(why, sizeof(why));
	kind = hmr__monitor_kind();
	/* userfaultfd and kdreg2 report after the kernel acted: device memory
	 * may be mapped over the range before the event is read.  memhooks
	 * reports first whether it patched or relocated (monitor.h). */
	if (hmr__monitor_reports_before()) {
		hmr__monitor_subscribe(&sub);
		state = HOST_CACHED;
	} else {
		hmr_info("memtype: host memory is classified afresh on every "
		         "query while a device backend is loaded: the memory "
		         "monitor is %s (%s)",
		         hmr__monitor_kind_name(kind), why);
	}
	atomic_store(&host_state, state);
out:
	pthread_mutex_unlock(&state_lock);
}

/* Before the first answer that may be host: the monitor starts here. */
uint64_t hmr__memtype_host_ticket(void)
{
	int state = atomic_load_explicit(&host_state, memory_order_acquire);

	if (state == HOST_UNDECIDED) {
		decide();
		state = atomic_load(&host_state);
	}
	return state == HOST_CACHED ? atomic_load(&events)
	                            : HMR_MEMTYPE_NO_TICKET;
}

void hmr__memtype_insert_host(uintptr_t start, uintptr_t end, uint64_t ticket)
{
	struct hmr_hmem_info host = {.iface = FI_HMEM_SYSTEM};
	bool stale;

	if (end <= start)
		return;
	if (ticket == HMR_MEMTYPE_NO_TICKET)
		return;
	if (!hmr__monitor_intact()) {
		/* Another library replaced the hooks: events are lost. */
		pthread_mutex_lock(&state_lock);
		if (atomic_exchange(&host_state, HOST_NOT_CACHED) ==
		    HOST_CACHED)
			hmr_warn("memtype: the memory hooks were overwritten; "
			         "host answers are no longer remembered");
		pthread_mutex_unlock(&state_lock);
		drop_all_host();
		return;
	}
	if (!hmr__hmem_host_accessible(start, end))
		return;
	write_begin();
	atomic_thread_fence(memory_order_seq_cst);
	stale = atomic_load(&events) != ticket;
	if (!stale)
		insert_locked(start, end, &host);
	write_end();
}
