/* hmem.c: the backend table, lazy start-up, selection, classification. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hmem/hmem.h"
#include "base/log.h"

#define IFACES (FI_HMEM_SYNAPSEAI + 1)

static const char *const iface_names[IFACES] = {
        [FI_HMEM_SYSTEM] = "system", [FI_HMEM_CUDA] = "cuda",
        [FI_HMEM_ROCR] = "rocr",     [FI_HMEM_ZE] = "ze",
        [FI_HMEM_NEURON] = "neuron", [FI_HMEM_SYNAPSEAI] = "synapseai",
};

/* What this build has; a NULL slot is a backend not built. */
static const struct hmr_backend_ops *const built[IFACES] = {
        [FI_HMEM_SYSTEM] = &hmr__system_backend,
        [FI_HMEM_CUDA] = &hmr__cuda_backend,
};

/* Written once under `once`, read-only afterwards. */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct hmr_backend_ops merged[IFACES];
static bool present[IFACES];
static char why_absent[IFACES][192];
static bool any_device;     /* A present backend other than system. */
static atomic_bool started; /* Set (release) when start() is done. */
static bool p2p_disabled;

static int stub_query(const void *p, size_t l, struct hmr_hmem_info *i)
{
	(void)p, (void)l, (void)i;
	return -FI_ENOSYS;
}
static int stub_reg(void *p, size_t l)
{
	(void)p, (void)l;
	return -FI_ENOSYS;
}
static int stub_unreg(void *p)
{
	(void)p;
	return -FI_ENOSYS;
}
static int stub_copy(void *d, const void *s, size_t l)
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
static bool stub_dmabuf_supported(uint64_t d)
{
	(void)d;
	return false;
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
static void stub_fini(void)
{
}

/* The stubs, kept in the same order as struct hmr_backend_ops. */
static const struct hmr_backend_ops stubs = {
        .fini = stub_fini,
        .query = stub_query,
        .host_register = stub_reg,
        .host_unregister = stub_unreg,
        .copy_to = stub_copy,
        .copy_from = stub_copy,
        .dmabuf_get = stub_dmabuf_get,
        .dmabuf_put = stub_dmabuf_put,
        .dmabuf_supported = stub_dmabuf_supported,
        .ipc_get = stub_ipc_get,
        .ipc_open = stub_ipc_open,
        .ipc_close = stub_unreg,
};

#define FILL(slot) m->slot = b->slot ? b->slot : stubs.slot
static void merge(struct hmr_backend_ops *m, const struct hmr_backend_ops *b)
{
	*m = *b;
	FILL(fini);
	FILL(query);
	FILL(host_register);
	FILL(host_unregister);
	FILL(copy_to);
	FILL(copy_from);
	FILL(dmabuf_get);
	FILL(dmabuf_put);
	FILL(dmabuf_supported);
	FILL(ipc_get);
	FILL(ipc_open);
	FILL(ipc_close);
}
#undef FILL

/* HMR_HMEM, else FI_HMEM: a comma list of names; unset means all. A
 * leading '^' excludes the listed ones instead. */
static bool selected(const char *name)
{
	const char *env = getenv("HMR_HMEM"), *tok, *comma;
	size_t n = strlen(name);
	bool exclude, in = false;

	if (!env)
		env = getenv("FI_HMEM");
	if (!env || !*env)
		return true;
	exclude = *env == '^';
	/* Walked in place: a list of any length is read whole. */
	for (tok = env + exclude; *tok; tok = *comma ? comma + 1 : comma) {
		comma = strchr(tok, ',');
		if (!comma)
			comma = tok + strlen(tok);
		in = in ||
		     ((size_t)(comma - tok) == n && strncmp(tok, name, n) == 0);
	}
	return exclude ? !in : in;
}

static bool env_true(const char *name)
{
	const char *v = getenv(name);

	return v && (!strcmp(v, "1") || !strcmp(v, "yes") ||
	             !strcmp(v, "true") || !strcmp(v, "on"));
}

static void start(void)
{
	int i, ret;

	p2p_disabled = env_true("FI_HMEM_DISABLE_P2P") ||
	               env_true("HMR_HMEM_DISABLE_P2P");
	for (i = 0; i < IFACES; i++) {
		if (!built[i]) {
			snprintf(why_absent[i], sizeof(why_absent[i]),
			         "not built into this hmr");
			continue;
		}
		if (i != FI_HMEM_SYSTEM && !selected(iface_names[i])) {
			snprintf(why_absent[i], sizeof(why_absent[i]),
			         "not selected by HMR_HMEM/FI_HMEM");
			continue;
		}
		ret = built[i]->init(why_absent[i], sizeof(why_absent[i]));
		if (ret == -FI_ENOSYS) {
			hmr_info("%s: absent, because %s", iface_names[i],
			         why_absent[i]);
			continue;
		}
		if (ret) {
			hmr_warn("%s: start-up failed (%s): %s", iface_names[i],
			         hmr_strerror(ret), why_absent[i]);
			continue;
		}
		merge(&merged[i], built[i]);
		present[i] = true;
		any_device = any_device || i != FI_HMEM_SYSTEM;
	}
	atomic_store_explicit(&started, true, memory_order_release);
}

void hmr__hmem_init(void)
{
	pthread_once(&once, start);
}

__attribute__((destructor)) static void stop(void)
{
	int i;

	for (i = 0; i < IFACES; i++) {
		if (present[i])
			merged[i].fini();
	}
}

const struct hmr_backend_ops *hmr__hmem_backend(enum fi_hmem_iface iface)
{
	if ((unsigned)iface >= IFACES)
		return NULL;
	hmr__hmem_init();
	return present[iface] ? &merged[iface] : NULL;
}

bool hmr__hmem_any_device(void)
{
	/* After start-up, one load instead of a call to pthread_once. */
	if (!atomic_load_explicit(&started, memory_order_acquire))
		hmr__hmem_init();
	return any_device;
}

bool hmr__hmem_p2p_disabled(void)
{
	hmr__hmem_init();
	return p2p_disabled;
}

const char *hmr_hmem_iface_name(enum fi_hmem_iface iface)
{
	return (unsigned)iface < IFACES ? iface_names[iface] : "unknown";
}

int hmr_hmem_status(enum fi_hmem_iface iface, char *why, size_t why_len)
{
	if ((unsigned)iface >= IFACES) {
		if (why && why_len)
			snprintf(why, why_len, "unknown iface %d", (int)iface);
		return -FI_EINVAL;
	}
	hmr__hmem_init();
	if (present[iface])
		return 0;
	if (why && why_len)
		snprintf(why, why_len, "%s", why_absent[iface]);
	return -FI_ENOSYS;
}
