/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* fuzz_domain_attr.c: fuzz target: hmr_domain_open with any attributes. */
#include <string.h>

#include "fuzz_util.h"

/*
 * hmr_domain_open with a NULL attr or a struct hmr_domain_attr of any
 * size (the buffer is an exact heap allocation of `size` bytes, so reading
 * past it trips ASan) and any contents: kind, fi_version, mr_mode (every
 * bit, FI_MR_BASIC and FI_MR_SCALABLE mixed in), caps, key size, iov
 * limit, flags, auth key (NULL or exact-size), NIC name.  The model says
 * whether a software domain must open and with which mr_mode; an opened
 * domain must report its mr_mode and caps, register and grant as the
 * model says, and close (a second close: -FI_EBADF).
 *
 * Also hmr_strerror of every code these calls return and of the input's
 * first four bytes as an int (little endian): never NULL, whatever the
 * int (INT_MIN included).
 *
 * Input: byte 0 < 16 means a NULL attr.  Otherwise the driver's choices
 * (tests/model/driver.h encoding) draw each field, or, when byte 1 is odd,
 * the bytes after byte 2 are the struct itself (pointers replaced).
 */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	setenv("HMR_LOG_LEVEL", "none", 0);
	return 0;
}

static uint64_t gen_bits(struct drv_src *s, uint64_t known)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 64; i++)
		if (((known >> i) & 1) && drv_pick(s, 2))
			v |= 1ULL << i;
	if (!drv_pick(s, 8))
		v |= 1ULL << drv_pick(s, 64); /* Any bit at all. */
	return v;
}

static void gen_fields(struct drv_src *s, struct hmr_domain_attr *a)
{
	static const size_t limits[] = {0, 1, 4, 256, 257, SIZE_MAX};
	static const uint32_t versions[] = {0, FI_VERSION(1, 17),
	                                    FI_VERSION(2, 1), UINT32_MAX};

	a->kind = (enum hmr_domain_kind)(drv_pick(s, 16) ? 0 : drv_pick(s, 3));
	a->fi_version = versions[drv_pick(s, 4)];
	a->mr_mode = gen_bits(s, 0xfff);
	if (!drv_pick(s, 4))
		a->mr_mode = drv_pick(s, 2) ? FI_MR_BASIC : FI_MR_SCALABLE;
	a->caps = gen_bits(s, FI_MSG | FI_RMA | FI_READ | FI_REMOTE_READ |
	                              FI_REMOTE_WRITE | FI_HMEM | FI_RMA_EVENT |
	                              FI_RMA_PMEM | FI_COLLECTIVE | FI_ATOMIC);
	a->mr_key_size = (size_t)drv_pick(s, 10);
	a->mr_iov_limit = limits[drv_pick(s, 6)];
	a->flags = gen_bits(s, 3);
	a->auth_key_size =
	        drv_pick(s, 4) ? (size_t)drv_pick(s, 66) : (size_t)drv_u64(s);
}

/* A message for any int: not NULL, a string. */
static void check_strerror(int err)
{
	const char *msg = hmr_strerror(err);

	if (!msg || strlen(msg) > 4096) {
		fprintf(stderr, "hmr_strerror(%d) is no message\n", err);
		abort();
	}
}

/* The key the domain gave mr: fi_mr_key, or under FI_MR_RAW the key its
 * raw key maps to. */
static uint64_t own_key(struct fid_domain *dom, const struct model *m,
                        struct fid_mr *mr)
{
	uint8_t raw[DRV_RAW_MAX];
	size_t size = sizeof(raw);
	uint64_t base = 0, key = 0;

	if (!(m->mr_mode & FI_MR_RAW))
		return fi_mr_key(mr);
	if (fi_mr_raw_attr(mr, &base, raw, &size, 0) ||
	    fi_mr_map_raw(dom, base, raw, size, &key, 0) ||
	    fi_mr_unmap_key(dom, key)) {
		fprintf(stderr, "the raw key of a new MR does not map\n");
		abort();
	}
	return key;
}

/* Register one page and access it, as the model says. */
static void use_domain(struct fid_domain *dom, struct model *m)
{
	struct model_req r;
	struct fid_mr *mr = NULL;
	uint64_t base, len, hole, mptr = 0, key;
	void *ptr = NULL;
	int p, rc, id = -1;

	drv_arena(&base, &len, &hole);
	memset(&r, 0, sizeof(r));
	r.api = MODEL_REG;
	r.iov_count = 1;
	r.iov[0].addr = base;
	r.iov[0].len = 4096;
	r.access = FI_REMOTE_READ | FI_REMOTE_WRITE;
	r.requested_key = 7;
	r.base = -1;
	p = model_reg_check(m, &r);
	rc = fi_mr_reg(dom, (void *)(uintptr_t)base, 4096, r.access, 0, 7, 0,
	               &mr, NULL);
	if ((rc == 0) != (p == 0)) {
		fprintf(stderr, "fi_mr_reg: %d, the model %d\n", rc, p);
		abort();
	}
	if (rc)
		return;
	key = model_prov_key(m) ? own_key(dom, m, mr) : 7;
	model_reg_add(m, 0, &r, key, false);
	p = model_access(m, true, NULL, 0, key, model_virt_addr(m) ? base : 0,
	                 8, FI_REMOTE_WRITE, &mptr, &id);
	rc = hmr_mr_access(dom, key, model_virt_addr(m) ? base : 0, 8,
	                   FI_REMOTE_WRITE, &ptr);
	if (rc == 0 && (p != 0 || (uint64_t)(uintptr_t)ptr != mptr)) {
		fprintf(stderr, "GRANT %p, the model %d %#llx\n", ptr, p,
		        (unsigned long long)mptr);
		abort();
	}
	if (fi_close(&mr->fid))
		abort();
}

static void check_open(const struct hmr_domain_attr *a)
{
	struct fid_domain *dom = NULL;
	uint64_t mode = 0, caps = 0;
	struct model m;
	int p = model_domain_open(&m, a, &drv_env);
	int rc = hmr_domain_open(a, &dom);

	check_strerror(rc);

	if (p != MODEL_UNKNOWN && (rc == 0) != (p == 0)) {
		fprintf(stderr, "hmr_domain_open: %d, the model %d\n", rc, p);
		abort();
	}
	if (rc)
		return;
	if (hmr_domain_mr_mode(dom, &mode) || hmr_domain_caps(dom, &caps))
		abort();
	if (p == 0 && (mode != m.mr_mode || caps != m.caps)) {
		fprintf(stderr,
		        "mr_mode %#llx caps %#llx, the model's %#llx "
		        "%#llx\n",
		        (unsigned long long)mode, (unsigned long long)caps,
		        (unsigned long long)m.mr_mode,
		        (unsigned long long)m.caps);
		abort();
	}
	if (p == 0)
		use_domain(dom, &m);
	if (fi_close(&dom->fid) || fi_close(&dom->fid) != -FI_EBADF) {
		fprintf(stderr, "closing the domain twice: not 0, -FI_EBADF\n");
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hmr_domain_attr a;
	struct drv_src s;
	size_t claimed, n;
	uint8_t *buf, *auth = NULL;

	if (size >= 4)
		check_strerror((int)((uint32_t)data[0] |
		                     (uint32_t)data[1] << 8 |
		                     (uint32_t)data[2] << 16 |
		                     (uint32_t)data[3] << 24));
	if (size < 3 || data[0] < 16) {
		check_open(NULL);
		return 0;
	}
	memset(&a, 0, sizeof(a));
	drv_src_bytes(&s, data + 3, size - 3);
	if (data[1] & 1)
		memcpy(&a, data + 3,
		       size - 3 < sizeof(a) ? size - 3 : sizeof(a));
	else
		gen_fields(&s, &a);
	/* size: anything up to the struct and a bit past it. */
	claimed = data[2] % 4 ? sizeof(a) : data[2] % (sizeof(a) + 33);
	a.size = claimed;
	a.pd = NULL;       /* The caller's PD: never forged. */
	a.nic_name = NULL; /* (A verbs domain takes the first NIC.) */
	a.auth_key = NULL;
	if ((data[1] & 2) && a.auth_key_size) {
		/* Exact size, with at least one byte; filled from the input. */
		n = a.auth_key_size < 4096 ? a.auth_key_size : 1;
		auth = calloc(1, n);
		memcpy(auth, data, size < n ? size : n);
		a.auth_key = auth;
	}
	buf = malloc(claimed > sizeof(a.size) ? claimed : sizeof(a.size));
	memcpy(buf, &a, claimed < sizeof(a) ? claimed : sizeof(a));
	if (claimed > sizeof(a))
		memset(buf + sizeof(a), 0xa5, claimed - sizeof(a));
	if (claimed < sizeof(a.size))
		memcpy(buf, &a.size, sizeof(a.size));
	check_open((const struct hmr_domain_attr *)buf);
	free(buf);
	free(auth);
	return 0;
}
