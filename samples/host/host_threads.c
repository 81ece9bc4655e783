/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* host_threads.c: one thread writes into another's memory by raw key. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hmr/hmr.h>

/*
 * What a shared-memory transport does on a software domain:
 *
 *   1. the owner registers a buffer and publishes its raw key
 *      (fi_mr_raw_attr), as it would send it to a peer;
 *   2. the writer maps the raw key to a key (fi_mr_map_raw);
 *   3. for each RMA write, the transport asks the domain where the bytes
 *      go (hmr_mr_access checks the key, the range and the access right)
 *      and copies them there.
 *
 * The mailbox stands in for the wire between the two.
 */
#define LEN     4096
#define OFFSET  64
#define RAW_MAX 64

struct mailbox {
	pthread_mutex_t lock; /* Guards the fields below. */
	pthread_cond_t cond;
	struct fid_domain *domain;
	uint8_t raw[RAW_MAX];
	size_t raw_size; /* 0 until the owner publishes. */
	uint64_t base;   /* The base address to map the raw key with. */
	int result;      /* The writer's, once done is set. */
	int done;
	int gave_up; /* The owner failed before publishing. */
};

static void *writer(void *arg)
{
	static const char msg[] = "hello from the writer thread";
	struct mailbox *m = arg;
	uint64_t key = 0;
	void *ptr = NULL;
	int ret;

	pthread_mutex_lock(&m->lock);
	while (!m->raw_size && !m->gave_up)
		pthread_cond_wait(&m->cond, &m->lock);
	pthread_mutex_unlock(&m->lock);
	if (!m->raw_size)
		return NULL;

	ret = fi_mr_map_raw(m->domain, m->base, m->raw, m->raw_size, &key, 0);
	if (ret) {
		fprintf(stderr, "writer: map_raw: %s\n", hmr_strerror(ret));
		goto out;
	}
	printf("writer: mapped the raw key to key %#llx\n",
	       (unsigned long long)key);
	/* Under FI_MR_VIRT_ADDR base is the buffer's address, else 0. */
	ret = hmr_mr_access(m->domain, key, m->base + OFFSET, sizeof(msg),
	                    FI_REMOTE_WRITE, &ptr);
	if (ret) {
		fprintf(stderr, "writer: access: %s\n", hmr_strerror(ret));
		goto unmap;
	}
	memcpy(ptr, msg, sizeof(msg));
	printf("writer: wrote %zu bytes at offset %d through hmr_mr_access\n",
	       sizeof(msg), OFFSET);
unmap:
	fi_mr_unmap_key(m->domain, key);
out:
	pthread_mutex_lock(&m->lock);
	m->result = ret;
	m->done = 1;
	pthread_cond_signal(&m->cond);
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

/* The owner's side: register, publish the raw key, wait for the write. */
static int owner(struct mailbox *m, char *buf)
{
	size_t size = sizeof(m->raw);
	struct fid_mr *mr;
	int ret;

	ret = fi_mr_reg(m->domain, buf, LEN, FI_REMOTE_WRITE, 0, 0, 0, &mr,
	                NULL);
	if (ret) {
		fprintf(stderr, "reg: %s\n", hmr_strerror(ret));
		mr = NULL;
	} else {
		ret = fi_mr_raw_attr(mr, &m->base, m->raw, &size, 0);
		if (ret)
			fprintf(stderr, "raw_attr: %s\n", hmr_strerror(ret));
		else
			printf("owner: registered %d bytes at %p, publishing "
			       "its %zu-byte raw key\n",
			       LEN, (void *)buf, size);
	}
	pthread_mutex_lock(&m->lock);
	m->raw_size = ret ? 0 : size;
	m->gave_up = ret != 0;
	pthread_cond_signal(&m->cond);
	pthread_mutex_unlock(&m->lock);
	if (ret)
		goto close;

	pthread_mutex_lock(&m->lock);
	while (!m->done)
		pthread_cond_wait(&m->cond, &m->lock);
	ret = m->result;
	pthread_mutex_unlock(&m->lock);
	if (!ret)
		printf("owner: my buffer now says \"%s\"\n", buf + OFFSET);
close:
	if (mr && fi_close(&mr->fid) && !ret)
		ret = -FI_EBUSY;
	return ret;
}

int main(void)
{
	struct mailbox m = {.lock = PTHREAD_MUTEX_INITIALIZER,
	                    .cond = PTHREAD_COND_INITIALIZER};
	char *buf = calloc(1, LEN);
	pthread_t thread;
	int ret;

	if (!buf)
		return 1;
	ret = hmr_domain_open(NULL, &m.domain); /* The software domain. */
	if (ret) {
		fprintf(stderr, "open: %s\n", hmr_strerror(ret));
		goto free;
	}
	ret = pthread_create(&thread, NULL, writer, &m);
	if (ret)
		goto close;
	ret = owner(&m, buf);
	pthread_join(thread, NULL);
close:
	if (fi_close(&m.domain->fid) && !ret)
		ret = -FI_EBUSY; /* A key still mapped, say. */
	if (!ret)
		printf("closed the MR and the domain\n");
free:
	free(buf);
	return ret ? 1 : 0;
}
