/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* driver_gen.c: the values the driver draws: ranges, keys, access, flags. */
#include <unistd.h>

#include "driver.h"

/* Auth keys: a few fixed ones, so that equal keys are drawn often. */
const uint8_t *drv_auth_pool(unsigned i, size_t *size)
{
	static const uint8_t k1[4] = {1, 2, 3, 4};
	static const uint8_t k2[16] = {9, 8, 7, 6, 5, 4, 3, 2,
	                               1, 0, 1, 2, 3, 4, 5, 6};
	static const uint8_t k3[HMR_AUTH_KEY_MAX] = {1, 2, 3, 4};

	switch (i) {
	case 1:
		*size = sizeof(k1);
		return k1;
	case 2:
		*size = sizeof(k2);
		return k2;
	case 3:
		*size = sizeof(k3);
		return k3;
	default:
		*size = 0;
		return NULL;
	}
}

bool drv_recently_closed(const struct drv *d, int id)
{
	/* Closed MRs stay inert shells for HMR_MR_SHELLS (256) closes of
	 * the domain; a second close is only defined inside that window. */
	return !d->opts.domain && d->m.mr[id].state == MODEL_CLOSED &&
	       d->mr[id] && d->closes - d->closed_at[id] < 128;
}

/* A live MR (or, if closed_ok, a recently closed one); -1 if none. */
int drv_pick_mr(struct drv *d, bool closed_ok)
{
	int start = (int)drv_pick(d->src, MODEL_MAX_MRS), i;

	for (i = 0; i < MODEL_MAX_MRS; i++) {
		int id = (start + i) % MODEL_MAX_MRS;

		if (d->m.mr[id].state == MODEL_LIVE ||
		    (closed_ok && drv_recently_closed(d, id)))
			return id;
	}
	return -1;
}

static uint64_t page(void)
{
	return (uint64_t)sysconf(_SC_PAGESIZE);
}

/* Offsets below this one are a page or more from the unmapped page. */
#define HOLE_OFFSET 4096

/* One iov of a plain registration: mostly inside the arena, and every
 * edge: the unmapped page, the arena's end, the top of the address space
 * (ending at 2^64 - 1, exactly at 2^64, past it), NULL, low and kernel
 * addresses, empty ranges. */
void drv_gen_iov(struct drv *d, struct model_iov *v)
{
	struct drv_src *s = d->src;
	uint64_t base, len, hole, top;

	drv_arena(&base, &len, &hole);
	/* One choice per statement: the order of choices is the input
	 * format, and C leaves the order within an expression open. */
	top = 0 - (1 + drv_pick(s, 8)) * page();
	top -= drv_pick(s, 16);
	switch (drv_pick(s, 32)) {
	case 0:
		v->addr = base + drv_pick(s, len);
		v->len = 1 + drv_pick(s, 256);
		break;
	case 1:
		v->addr = base + drv_pick(s, 16) * page();
		v->len = (1 + drv_pick(s, 4)) * page();
		break;
	case 2:
		v->addr = base + drv_pick(s, len);
		v->len = base + len - v->addr + drv_pick(s, 2);
		break;
	case 3:
		v->addr = base;
		v->len = len;
		break;
	case 4:
		v->addr = hole - 1 - drv_pick(s, 64);
		v->len = 2 + drv_pick(s, 128);
		break;
	case 5: /* Ends exactly at 2^64. */
		v->addr = top;
		v->len = 0 - top;
		break;
	case 6: /* Ends at 2^64 - 1: the last valid end. */
		v->addr = top;
		v->len = 0 - top - 1;
		break;
	case 7: /* From the arena to exactly 2^64. */
		v->addr = base + drv_pick(s, len);
		v->len = 0 - v->addr;
		break;
	case 8: /* Wraps past 2^64. */
		v->addr = base + drv_pick(s, len);
		v->len = 0 - v->addr + 1 + drv_pick(s, 4096);
		break;
	case 9:
		v->addr = drv_pick(s, 2) ? 0 : page() * (1 + drv_pick(s, 15));
		v->len = 1 + drv_pick(s, 4096);
		break;
	case 10:
		v->addr = (1ULL << 63) + (drv_u64(s) >> 1);
		v->len = 1 + drv_pick(s, 1u << 20);
		break;
	case 11:
		v->addr = drv_u64(s);
		v->len = drv_u64(s);
		break;
	case 12:
		v->addr = base + drv_pick(s, len);
		v->len = 0;
		break;
	case 13:
	case 14:
	case 15:
	case 16:
		/* Mostly valid: below the unmapped page. */
		v->addr = base + drv_pick(s, HOLE_OFFSET);
		v->len = 1 + drv_pick(s, hole - v->addr);
		break;
	default:
		v->addr = base + drv_pick(s, 8) * 512;
		v->addr += drv_pick(s, 64);
		v->len = 1 + drv_pick(s, 1024);
		break;
	}
}

/* A requested key: small ones (conflicts), the edges of mr_key_size, the
 * reserved FI_KEY_NOTAVAIL, anything. */
uint64_t drv_gen_key(struct drv *d)
{
	switch (drv_pick(d->src, 8)) {
	case 4:
		return d->m.key_max;
	case 5:
		return d->m.key_max + 1;
	case 6:
		return FI_KEY_NOTAVAIL;
	case 7:
		return drv_u64(d->src);
	default:
		return drv_pick(d->src, 16);
	}
}

uint64_t drv_gen_access(struct drv *d)
{
	static const uint64_t odd[] = {
	        0,
	        FI_READ | FI_WRITE | FI_SEND | FI_RECV,
	        FI_COLLECTIVE | FI_REMOTE_READ,
	        1ULL << 20,
	};

	switch (drv_pick(d->src, 8)) {
	case 4:
		return FI_REMOTE_READ;
	case 5:
		return FI_REMOTE_WRITE;
	case 6:
		return odd[drv_pick(d->src, 4)];
	case 7:
		return drv_u64(d->src);
	default:
		return FI_REMOTE_READ | FI_REMOTE_WRITE;
	}
}

uint64_t drv_gen_flags(struct drv *d)
{
	static const uint64_t hmem[] = {FI_HMEM_DEVICE_ONLY, FI_HMEM_HOST_ALLOC,
	                                FI_MR_DMABUF};

	switch (drv_pick(d->src, 24)) {
	case 8:
	case 9:
		return FI_MR_SINGLE_USE;
	case 10:
		return FI_RMA_EVENT;
	case 11:
		return FI_RMA_EVENT | FI_MR_SINGLE_USE;
	case 12:
		return FI_RMA_PMEM;
	case 13:
		return hmem[drv_pick(d->src, 3)];
	case 14:
		return FI_AUTH_KEY;
	case 15:
		return drv_pick(d->src, 2) ? 1ULL << 30 : drv_u64(d->src);
	default:
		return 0;
	}
}

/* Offset of iov i in the region (saturating: regions may claim more
 * than 2^64 bytes in all). */
static uint64_t iov_start(const struct model_mr *mr, size_t i)
{
	uint64_t off = 0;
	size_t j;

	for (j = 0; j < i; j++)
		off = mr->iov[j].len > UINT64_MAX - off ? UINT64_MAX
		                                        : off + mr->iov[j].len;
	return off;
}

/* An access target for MR id: inside an iov, at its edges, across iovs,
 * before the region, far past it (the range a rogue MR claims), and any
 * length from 0 to SIZE_MAX. */
void drv_gen_target(struct drv *d, int id, uint64_t *addr, uint64_t *len)
{
	const struct model_mr *mr = &d->m.mr[id];
	struct drv_src *s = d->src;
	size_t i = mr->iov_count ? (size_t)drv_pick(s, mr->iov_count) : 0;
	uint64_t il = mr->iov_count ? mr->iov[i].len : 0;
	uint64_t start = iov_start(mr, i), o, in;
	uint64_t va = mr->iov_count ? mr->iov[0].addr : 0;

	switch (mr->iov_count ? drv_pick(s, 16) : 3) {
	case 1:
		o = start + il - 1 - drv_pick(s, il < 64 ? il + 1 : 64);
		break;
	case 2:
		o = start + il;
		break;
	case 3:
		o = drv_u64(s);
		break;
	case 4:
		o = start + (drv_pick(s, 2) ? 1ULL << 40 : 1ULL << 20);
		break;
	case 5:
		o = 0;
		break;
	case 6:
		o = iov_start(mr, mr->iov_count) - 1;
		break;
	case 7:
		o = 0 - 1 - drv_pick(s, 16); /* Before the first byte. */
		break;
	case 8:
		o = iov_start(mr, mr->iov_count);
		break;
	case 9:
	case 10:
		o = start + (il ? drv_u64(s) % il : 0);
		break;
	default: /* Inside iov i, near its start. */
		o = start + drv_pick(s, il < 65536 ? il : 65536);
		break;
	}
	*addr = model_virt_addr(&d->m) ? va + o : o;
	in = o - start < il ? il - (o - start) : 1;
	switch (drv_pick(s, 12)) {
	case 1:
		*len = 1 + drv_pick(s, 64);
		break;
	case 2:
		*len = in;
		break;
	case 3:
		*len = in + 1;
		break;
	case 4:
		*len = 0;
		break;
	case 5:
		*len = SIZE_MAX;
		break;
	case 6:
		*len = drv_u64(s);
		break;
	default: /* Mostly inside what remains of the iov. */
		*len = 1 + drv_pick(s, in < 64 ? in : 64);
		break;
	}
}
