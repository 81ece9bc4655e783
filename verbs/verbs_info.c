/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* verbs_info.c: the NICs and each memory's registration path, for hmr_info. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/config.h"
#include "hmem/hmem.h"
#include "verbs/verbs.h"

/*
 * These calls answer before any domain opens, so each opens the NIC for
 * itself (a context and a protection domain, closed before returning) and
 * asks what a verbs domain asks at open (verbs.c): the same dma-buf probe
 * and setting, the same peer-memory modules, the same order of paths as
 * verbs_mr.c tries them.  Nothing is cached: a module loaded between two
 * calls shows in the second.
 */

struct nic {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
};

/* A reason into the caller's buffer, which may be absent. */
__attribute__((format(printf, 3, 4))) static void say(char *why, size_t why_len,
                                                      const char *fmt, ...)
{
	va_list ap;

	if (!why || !why_len)
		return;
	va_start(ap, fmt);
	vsnprintf(why, why_len, fmt, ap);
	va_end(ap);
}

/* The device list, or -FI_ENODEV with the reason libibverbs gives. */
static int device_list(struct ibv_device ***list, int *n, char *why,
                       size_t why_len)
{
	*list = ibv_get_device_list(n);
	if (!*list) {
		say(why, why_len, "no RDMA device: ibv_get_device_list: %s%s",
		    strerror(errno),
		    errno == ENOSYS ? " (this kernel has no RDMA support)"
		                    : "");
		return -FI_ENODEV;
	}
	if (*n > 0)
		return 0;
	ibv_free_device_list(*list);
	say(why, why_len,
	    "no RDMA device: libibverbs lists none (no RDMA driver loaded, "
	    "or no user-space provider for it: ibverbs-providers)");
	return -FI_ENODEV;
}

int hmr_verbs_device_count(uint32_t *count, char *why, size_t why_len)
{
	struct ibv_device **list;
	int n = 0, ret;

	if (!count)
		return -FI_EINVAL;
	say(why, why_len, "%s", "");
	*count = 0;
	ret = device_list(&list, &n, why, why_len);
	if (ret)
		return ret;
	ibv_free_device_list(list);
	*count = (uint32_t)n;
	return 0;
}

static int nic_open(uint32_t index, struct nic *nic, char *name, size_t len,
                    char *why, size_t why_len)
{
	struct ibv_device **list;
	int n = 0, ret;

	ret = device_list(&list, &n, why, why_len);
	if (ret)
		return ret;
	if (index >= (uint32_t)n) {
		ibv_free_device_list(list);
		say(why, why_len, "no RDMA device %u (%d listed)", index, n);
		return -FI_ENOENT;
	}
	snprintf(name, len, "%s", ibv_get_device_name(list[index]));
	nic->ctx = ibv_open_device(list[index]);
	ibv_free_device_list(list);
	nic->pd = nic->ctx ? ibv_alloc_pd(nic->ctx) : NULL;
	if (nic->pd)
		return 0;
	say(why, why_len, "%s: cannot open it: %s", name, strerror(errno));
	if (nic->ctx)
		ibv_close_device(nic->ctx);
	return -FI_ENODEV;
}

static void nic_close(struct nic *nic)
{
	ibv_dealloc_pd(nic->pd);
	ibv_close_device(nic->ctx);
}

/* As a domain decides at open (verbs.c): HMR_VERBS_DMABUF, else a probe
 * with fd -1, which fails on the fd (EBADF) where the NIC imports. */
static int nic_dmabuf(struct nic *nic, char *why, size_t why_len)
{
	const char *mode = hmr__config_get("HMR_VERBS_DMABUF", NULL);
	struct ibv_mr *mr;

	if (mode && (!strcmp(mode, "on") || !strcmp(mode, "off"))) {
		snprintf(why, why_len, "HMR_VERBS_DMABUF=%s", mode);
		return !strcmp(mode, "on");
	}
	mr = ibv_reg_dmabuf_mr(nic->pd, 0, 4096, 0, -1, IBV_ACCESS_LOCAL_WRITE);
	if (mr) { /* Cannot happen with fd -1. */
		ibv_dereg_mr(mr);
		snprintf(why, why_len, "probe: a dma-buf MR with fd -1");
		return 1;
	}
	if (errno == EBADF) {
		snprintf(why, why_len,
		         "probe: ibv_reg_dmabuf_mr looked at the fd (EBADF)");
		return 1;
	}
	snprintf(why, why_len, "probe: ibv_reg_dmabuf_mr: %s", strerror(errno));
	return 0;
}

/* "module (iface)" for each present interface with a module loaded. */
static void peermem_list(char *buf, size_t len)
{
	enum fi_hmem_iface i;
	char module[64];
	size_t n = 0;

	buf[0] = '\0';
	for (i = FI_HMEM_CUDA; i <= FI_HMEM_SYNAPSEAI && n < len; i++)
		if (hmr__hmem_backend(i) &&
		    hmr__verbs_peermem(i, module, sizeof(module)))
			n += (size_t)snprintf(buf + n, len - n, "%s%s (%s)",
			                      n ? ", " : "", module,
			                      hmr_hmem_iface_name(i));
}

/* Port 1's network device, from sysfs (RoCE and iWARP NICs have one). */
static void netdev_of(const char *name, char *buf, size_t len)
{
	char path[256];
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path),
	         "/sys/class/infiniband/%s/ports/1/gid_attrs/ndevs/0", name);
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

static void describe(struct nic *nic, struct hmr_verbs_device_info *d)
{
	struct ibv_device_attr_ex attr;
	struct ibv_port_attr port;
	uint32_t rc = IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ;

	memset(&port, 0, sizeof(port));
	if (!ibv_query_port(nic->ctx, 1, &port))
		snprintf(d->link_layer, sizeof(d->link_layer), "%s",
		         port.link_layer == IBV_LINK_LAYER_ETHERNET
		                 ? "Ethernet"
		                 : "InfiniBand");
	netdev_of(d->name, d->netdev, sizeof(d->netdev));
	memset(&attr, 0, sizeof(attr));
	if (!ibv_query_device_ex(nic->ctx, NULL, &attr))
		d->odp = (attr.odp_caps.general_caps & IBV_ODP_SUPPORT) &&
		         (attr.odp_caps.per_transport_caps.rc_odp_caps & rc) ==
		                 rc;
	d->dmabuf = nic_dmabuf(nic, d->dmabuf_why, sizeof(d->dmabuf_why));
	peermem_list(d->peermem, sizeof(d->peermem));
}

int hmr_verbs_device_info(uint32_t index, struct hmr_verbs_device_info *info)
{
	struct hmr_verbs_device_info full;
	struct nic nic;
	size_t n;
	int ret;

	if (!info || info->size < sizeof(info->size))
		return -FI_EINVAL;
	memset(&full, 0, sizeof(full));
	ret = nic_open(index, &nic, full.name, sizeof(full.name), NULL, 0);
	if (ret)
		return ret == -FI_ENODEV ? -FI_ENOENT : ret;
	describe(&nic, &full);
	nic_close(&nic);
	/* What fits in the caller's struct; its size stays. */
	n = (info->size < sizeof(full) ? info->size : sizeof(full)) -
	    sizeof(full.size);
	memcpy((char *)info + sizeof(full.size),
	       (const char *)&full + sizeof(full.size), n);
	return 0;
}

/* The device's dma-buf export support, from its backend; -FI_ENOENT when
 * the backend has no device of that number. */
static int gpu_dmabuf(enum fi_hmem_iface iface, uint64_t device,
                      struct hmr_hmem_device_info *di)
{
	uint32_t i;

	for (i = 0; i < HMR_MAX_DEVICES; i++) {
		di->size = sizeof(*di);
		if (hmr_hmem_device_info(iface, i, di))
			return -FI_ENOENT;
		if (di->device == device)
			return 0;
	}
	return -FI_ENOENT;
}

/* Device memory, in verbs_mr.c's order: dma-buf, then peer memory. */
static enum hmr_verbs_path device_path(struct nic *nic, const char *name,
                                       enum fi_hmem_iface iface,
                                       const struct hmr_hmem_device_info *di,
                                       char *why, size_t why_len)
{
	char probe[128], first[256], module[64];
	int imports = nic_dmabuf(nic, probe, sizeof(probe));

	if (imports && di->dmabuf) {
		snprintf(why, why_len,
		         "dma-buf: %s imports them (%s) and %s exports them%s",
		         name, probe, di->name,
		         di->dmabuf < 0 ? " (known at the first registration)"
		                        : "");
		return HMR_VERBS_PATH_DMABUF;
	}
	if (imports)
		snprintf(first, sizeof(first),
		         "no dma-buf: %s cannot export (%s)", di->name,
		         di->dmabuf_why);
	else
		snprintf(first, sizeof(first),
		         "no dma-buf: %s does not import them (%s)", name,
		         probe);
	if (hmr__verbs_peermem(iface, module, sizeof(module))) {
		snprintf(why, why_len,
		         "%s; peer memory: %s is loaded, so ibv_reg_mr pins "
		         "the device memory",
		         first, module);
		return HMR_VERBS_PATH_PEERMEM;
	}
	snprintf(why, why_len, "%s; no peer memory: no module for %s loaded",
	         first, hmr_hmem_iface_name(iface));
	return HMR_VERBS_PATH_NONE;
}

int hmr_verbs_reg_path(enum fi_hmem_iface iface, uint64_t device,
                       uint32_t nic_index, enum hmr_verbs_path *path, char *why,
                       size_t why_len)
{
	struct hmr_hmem_device_info di = HMR_HMEM_DEVICE_INFO_INIT;
	char unused[8], name[64], absent[160];
	struct nic nic;
	int ret;

	if (!why || !why_len) {
		why = unused;
		why_len = sizeof(unused);
	}
	why[0] = '\0';
	if (!path || (unsigned)iface > FI_HMEM_SYNAPSEAI)
		return -FI_EINVAL;
	*path = HMR_VERBS_PATH_NONE;
	ret = nic_open(nic_index, &nic, name, sizeof(name), why, why_len);
	if (ret)
		return ret;
	if (iface == FI_HMEM_SYSTEM) {
		*path = HMR_VERBS_PATH_HOST;
		snprintf(why, why_len, "host memory: ibv_reg_mr on %s", name);
	} else if (hmr_hmem_status(iface, absent, sizeof(absent))) {
		snprintf(why, why_len, "%s is absent: %s",
		         hmr_hmem_iface_name(iface), absent);
	} else if (gpu_dmabuf(iface, device, &di)) {
		snprintf(why, why_len, "%s has no device %llu",
		         hmr_hmem_iface_name(iface),
		         (unsigned long long)device);
		ret = -FI_ENOENT;
	} else if (hmr__hmem_p2p_disabled()) {
		snprintf(why, why_len,
		         "FI_HMEM_DISABLE_P2P forbids the dma-buf and the "
		         "peer-memory path");
	} else {
		*path = device_path(&nic, name, iface, &di, why, why_len);
	}
	nic_close(&nic);
	return ret;
}
