/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* cache_rcu.c: the cache's RCU read side, safe inside the memory hooks. */
#include <pthread.h>

#include "cache/cache_impl.h"

/*
 * liburcu-bp registers a thread at its first read lock, and registering
 * may grow its registry with mmap/mremap while it holds its registry
 * mutex.  Under memhooks that mremap reaches the cache's monitor callback
 * on the same thread, whose read lock would register again: the thread
 * waits for the mutex it holds (seen: the hash table's resize helper
 * threads, which register themselves, hung the benchmark).  So every read
 * lock of the cache goes through hmr__cache_read_lock, and the hash
 * table's helper threads register through the flavour handed to
 * cds_lfht_new_flavor: both mark the thread while it registers.  An
 * event that arrives on a marked thread comes from liburcu's registry
 * itself (memory liburcu owns, never a registered range): the callback
 * leaves it alone (hmr__cache_rcu_registering).
 */
static __thread bool registering;
__thread bool hmr__cache_rcu_registered;
static struct rcu_flavor_struct flavor;
static pthread_once_t flavor_once = PTHREAD_ONCE_INIT;

bool hmr__cache_rcu_registering(void)
{
	return registering;
}

void hmr__cache_read_lock_first(void)
{
	registering = true;
	rcu_read_lock(); /* Registers the thread with liburcu-bp. */
	registering = false;
	hmr__cache_rcu_registered = true;
}

static void flavor_read_lock(void)
{
	hmr__cache_read_lock();
}

/* The helper threads register themselves through the flavour. */
static void flavor_register_thread(void)
{
	registering = true;
	rcu_flavor.register_thread();
	registering = false;
	hmr__cache_rcu_registered = true;
}

static void flavor_init(void)
{
	flavor = rcu_flavor;
	flavor.read_lock = flavor_read_lock;
	flavor.register_thread = flavor_register_thread;
}

const struct rcu_flavor_struct *hmr__cache_rcu_flavor(void)
{
	pthread_once(&flavor_once, flavor_init);
	return &flavor;
}
