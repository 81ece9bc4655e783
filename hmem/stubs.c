/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* stubs.c: -FI_ENOSYS for every backend slot a backend leaves NULL. */
#include "hmem/hmem.h"

/* Positional, in struct hmr_backend_ops's order, with a missing
 * initialiser an error even without -Werror: a slot added to the struct
 * and not here fails the build (rdma-core's dummy_ops.c does the same). */
#pragma GCC diagnostic error "-Wmissing-field-initializers"

static int stub_init(char *why, size_t why_len)
{
	(void)why, (void)why_len;
	return -FI_ENOSYS;
}

static void stub_fini(void)
{
}

static int stub_query(const void *p, size_t l, struct hmr_hmem_info *i)
{
	(void)p, (void)l, (void)i;
	return -FI_ENOSYS;
}

static int stub_host_register(void *p, size_t l)
{
	(void)p, (void)l;
	return -FI_ENOSYS;
}

static int stub_ptr(void *p)
{
	(void)p;
	return -FI_ENOSYS;
}

static int stub_copy_to(void *d, const void *s, size_t l)
{
	(void)d, (void)s, (void)l;
	return -FI_ENOSYS;
}

static int stub_dmabuf_get(const void *p, size_t l, uint64_t f, int *fd,
                           uint64_t *o)
{
	(void)p, (void)l, (void)f, (void)fd, (void)o;
	return -FI_ENOSYS;
}

static int stub_dmabuf_put(int fd)
{
	(void)fd;
	return -FI_ENOSYS;
}

static int stub_ipc_get(const void *p, void *h, size_t *s)
{
	(void)p, (void)h, (void)s;
	return -FI_ENOSYS;
}

static int stub_ipc_open(uint64_t d, const void *h, size_t s, void **p)
{
	(void)d, (void)h, (void)s, (void)p;
	return -FI_ENOSYS;
}

static int stub_describe(struct hmr_hmem_backend_info *i)
{
	(void)i;
	return -FI_ENOSYS;
}

static int stub_device(uint32_t index, struct hmr_hmem_device_info *i)
{
	(void)index, (void)i;
	return -FI_ENOSYS;
}

static int stub_alloc(uint64_t device, size_t len, void **p)
{
	(void)device, (void)len, (void)p;
	return -FI_ENOSYS;
}

const struct hmr_backend_ops hmr__backend_stubs = {
        FI_HMEM_SYSTEM,     /* iface */
        NULL,               /* peermem_modules */
        NULL,               /* cache_setting */
        stub_init,          /* init */
        stub_fini,          /* fini */
        stub_query,         /* query */
        stub_host_register, /* host_register */
        stub_ptr,           /* host_unregister */
        stub_copy_to,       /* copy_to */
        stub_copy_to,       /* copy_from (the same signature) */
        stub_dmabuf_get,    /* dmabuf_get */
        stub_dmabuf_put,    /* dmabuf_put */
        stub_ipc_get,       /* ipc_get */
        stub_ipc_open,      /* ipc_open */
        stub_ptr,           /* ipc_close */
        stub_describe,      /* describe */
        stub_device,        /* device */
        stub_alloc,         /* alloc */
        stub_ptr,           /* free */
};
