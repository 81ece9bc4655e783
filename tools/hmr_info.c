/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* hmr_info.c: what hmr can do on this machine, before anything registers. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include <hmr/hmr.h>

/*
 * One model, two views: the facts go into a JSON tree (jansson), which is
 * printed as is with --json (fields: doc/hmr_info.md) or as text.  The
 * exit status is the self-check's: 0 when every registration it tried
 * succeeded, 1 otherwise.
 */

static const char *mode_string(uint64_t mode, char *buf, size_t len)
{
	static const struct {
		uint64_t bit;
		const char *name;
	} bits[] = {
	        {FI_MR_LOCAL, "LOCAL"},
	        {FI_MR_RAW, "RAW"},
	        {FI_MR_VIRT_ADDR, "VIRT_ADDR"},
	        {FI_MR_ALLOCATED, "ALLOCATED"},
	        {FI_MR_PROV_KEY, "PROV_KEY"},
	        {FI_MR_MMU_NOTIFY, "MMU_NOTIFY"},
	        {FI_MR_RMA_EVENT, "RMA_EVENT"},
	        {FI_MR_ENDPOINT, "ENDPOINT"},
	        {FI_MR_HMEM, "HMEM"},
	        {FI_MR_COLLECTIVE, "COLLECTIVE"},
	};
	size_t i, n = 0;

	buf[0] = '\0';
	if (mode == FI_MR_BASIC)
		return "BASIC";
	for (i = 0; i < sizeof(bits) / sizeof(bits[0]) && n < len; i++)
		if (mode & bits[i].bit)
			n += (size_t)snprintf(buf + n, len - n, "%s%s",
			                      n ? "|" : "", bits[i].name);
	return n ? buf : "0";
}

static json_t *backends(void)
{
	json_t *list = json_array();
	enum fi_hmem_iface i;
	char why[256];
	uint32_t d;

	for (i = FI_HMEM_SYSTEM; i <= FI_HMEM_SYNAPSEAI; i++) {
		struct hmr_hmem_backend_info b = HMR_HMEM_BACKEND_INFO_INIT;
		json_t *o = json_pack("{s:s}", "name", hmr_hmem_iface_name(i));
		json_t *devs = json_array();

		if (hmr_hmem_status(i, why, sizeof(why))) {
			json_object_set_new(o, "present", json_false());
			json_object_set_new(o, "reason", json_string(why));
			json_array_append_new(list, o);
			json_decref(devs);
			continue;
		}
		json_object_set_new(o, "present", json_true());
		if (!hmr_hmem_backend_info(i, &b))
			json_object_update_new(
			        o, json_pack("{s:s,s:s,s:i,s:s}", "library",
			                     b.library, "version", b.version,
			                     "devices", (int)b.devices,
			                     "peermem", b.peermem));
		for (d = 0; d < b.devices; d++) {
			struct hmr_hmem_device_info di =
			        HMR_HMEM_DEVICE_INFO_INIT;

			if (hmr_hmem_device_info(i, d, &di))
				continue;
			json_array_append_new(
			        devs, json_pack("{s:I,s:s,s:s,s:s}", "device",
			                        (json_int_t)di.device, "name",
			                        di.name, "dmabuf",
			                        di.dmabuf > 0    ? "yes"
			                        : di.dmabuf == 0 ? "no"
			                                         : "unknown",
			                        "dmabuf_why", di.dmabuf_why));
		}
		json_object_set_new(o, "device_list", devs);
		json_array_append_new(list, o);
	}
	return list;
}

static json_t *domains(void)
{
	enum hmr_domain_kind kinds[] = {HMR_DOMAIN_SOFTWARE, HMR_DOMAIN_VERBS};
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	json_t *list = json_array();
	struct fid_domain *domain;
	char why[256], mode[128];
	uint64_t mr_mode;
	size_t i;
	int ret;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		json_t *o = json_pack("{s:s}", "kind",
		                      hmr_domain_kind_name(kinds[i]));

		ret = hmr_domain_probe(kinds[i], why, sizeof(why));
		attr.kind = kinds[i];
		if (!ret)
			ret = hmr_domain_open(&attr, &domain);
		if (ret) {
			json_object_set_new(o, "available", json_false());
			json_object_set_new(
			        o, "reason",
			        json_string(*why ? why : hmr_strerror(ret)));
		} else {
			hmr_domain_mr_mode(domain, &mr_mode);
			json_object_set_new(o, "available", json_true());
			json_object_set_new(
			        o, "mr_mode",
			        json_string(mode_string(mr_mode, mode,
			                                sizeof(mode))));
			fi_close(&domain->fid);
		}
		json_array_append_new(list, o);
	}
	return list;
}

static json_t *settings(void)
{
	static const char *const sources[] = {"default", "environment", "api"};
	struct hmr_config_info c;
	json_t *list = json_array();
	size_t i;

	for (i = 0; hmr_config_entry(i, &c) == 0; i++)
		json_array_append_new(
		        list, json_pack("{s:s,s:s?,s:s,s:s}", "name", c.name,
		                        "value", c.value, "source",
		                        sources[c.source], "help", c.help));
	return list;
}

static const char *path_name(enum hmr_verbs_path path)
{
	static const char *const names[] = {"none", "host", "dma-buf",
	                                    "peer-memory"};

	return (unsigned)path < 4 ? names[path] : "unknown";
}

/* The NICs as hmr_verbs_device_info describes them; *reason when none. */
static json_t *rdma_devices(json_t *root)
{
	json_t *list = json_array();
	char why[256];
	uint32_t n = 0, i;

	if (hmr_verbs_device_count(&n, why, sizeof(why)))
		json_object_set_new(root, "rdma_reason", json_string(why));
	for (i = 0; i < n; i++) {
		struct hmr_verbs_device_info d = HMR_VERBS_DEVICE_INFO_INIT;

		if (hmr_verbs_device_info(i, &d))
			continue;
		json_array_append_new(
		        list,
		        json_pack("{s:s,s:s,s:s,s:b,s:s,s:s,s:s}", "name",
		                  d.name, "link_layer", d.link_layer, "netdev",
		                  d.netdev, "odp", d.odp, "dmabuf",
		                  d.dmabuf ? "yes" : "no", "dmabuf_why",
		                  d.dmabuf_why, "peermem", d.peermem));
	}
	return list;
}

/* For each device of each present backend, on each NIC: the path. */
static json_t *paths(json_t *root)
{
	json_t *nics = json_object_get(root, "rdma_devices");
	json_t *list = json_array(), *b, *dev, *nic;
	enum hmr_verbs_path path;
	json_int_t device;
	char why[512];
	size_t i, j, k;

	/* backends[] is in enum fi_hmem_iface order. */
	json_array_foreach(json_object_get(root, "backends"), i, b)
	        json_array_foreach(json_object_get(b, "device_list"), j, dev)
	                json_array_foreach(nics, k, nic)
	{
		device = json_integer_value(json_object_get(dev, "device"));
		if (hmr_verbs_reg_path((enum fi_hmem_iface)i, (uint64_t)device,
		                       (uint32_t)k, &path, why, sizeof(why)))
			continue;
		json_array_append_new(
		        list,
		        json_pack("{s:O,s:I,s:O,s:s,s:s}", "iface",
		                  json_object_get(b, "name"), "device", device,
		                  "nic", json_object_get(nic, "name"), "path",
		                  path_name(path), "why", why));
	}
	return list;
}

/* The memory monitor: kind, why, and how each function is reached. */
static json_t *monitor(void)
{
	struct hmr_monitor_info m = HMR_MONITOR_INFO_INIT;
	json_t *o, *funcs = json_array();
	unsigned i;

	if (hmr_monitor_info(&m))
		return json_pack("{s:s}", "kind", "unknown");
	for (i = 0; i < m.nfuncs; i++)
		json_array_append_new(funcs,
		                      json_pack("{s:s,s:s,s:s}", "name",
		                                m.funcs[i].name, "mechanism",
		                                m.funcs[i].mechanism, "how",
		                                m.funcs[i].how));
	o = json_pack("{s:s,s:s,s:b,s:b}", "kind", m.kind, "why", m.why,
	              "caching", m.caching, "before_unmap", m.before_unmap);
	json_object_set_new(o, "functions", funcs);
	return o;
}

/* A verbs domain's cache must cache: it is why hmr is used on a NIC. */
static int cache_caches(struct fid_domain *d, json_t *o)
{
	struct hmr_mr_cache_stats st = HMR_MR_CACHE_STATS_INIT;

	if (hmr_mr_cache_stats(d, &st))
		return 0; /* No cache: nothing to say. */
	json_object_set_new(o, "cache",
	                    json_string(st.active ? "caching" : st.why));
	return st.active ? 0 : -FI_ENOSYS;
}

/* Register `buf` in a new domain of `kind` (on NIC `nic`, a verbs
 * domain's index) with FI_HMEM; one result. */
static json_t *try_register(enum hmr_domain_kind kind, const char *nic_name,
                            uint32_t nic, enum fi_hmem_iface iface,
                            const char *memory, void *buf, size_t len,
                            int *failed)
{
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	json_t *o = json_pack("{s:s,s:s}", "domain", hmr_domain_kind_name(kind),
	                      "memory", memory);
	enum hmr_verbs_path path;
	struct fid_domain *d;
	struct fid_mr *mr;
	int ret;

	attr.kind = kind;
	attr.caps = FI_HMEM;
	attr.nic_name = nic_name;
	if (nic_name) {
		json_object_set_new(o, "nic", json_string(nic_name));
		if (!hmr_verbs_reg_path(iface, 0, nic, &path, NULL, 0))
			json_object_set_new(o, "path",
			                    json_string(path_name(path)));
	}
	ret = hmr_domain_open(&attr, &d);
	if (!ret) {
		ret = fi_mr_reg(d, buf, len, FI_REMOTE_READ | FI_REMOTE_WRITE,
		                0, 1, 0, &mr, NULL);
		if (!ret)
			fi_close(&mr->fid);
		if (!ret)
			ret = cache_caches(d, o);
		fi_close(&d->fid);
	}
	json_object_set_new(
	        o, "result",
	        json_string(ret ? hmr_strerror(ret) : "registered"));
	json_object_set_new(o, "ok", json_boolean(!ret));
	*failed |= ret != 0;
	return o;
}

/* Host memory, and memory of every present backend that can allocate,
 * in a software domain and in a verbs domain on each NIC. */
static json_t *self_check(json_t *nics, int *failed)
{
	json_t *list = json_array();
	enum fi_hmem_iface i;
	char name[64];
	size_t k, n = json_array_size(nics);
	void *p;

	for (k = 0; k <= n; k++) {
		const char *nic =
		        k ? json_string_value(json_object_get(
		                    json_array_get(nics, k - 1), "name"))
		          : NULL;

		for (i = FI_HMEM_SYSTEM; i <= FI_HMEM_SYNAPSEAI; i++) {
			if (hmr_hmem_status(i, NULL, 0) ||
			    hmr_hmem_alloc(i, 0, 1 << 20, &p))
				continue;
			snprintf(name, sizeof(name), "%s%s",
			         hmr_hmem_iface_name(i),
			         i == FI_HMEM_SYSTEM ? "" : " device 0");
			json_array_append_new(
			        list,
			        try_register(k ? HMR_DOMAIN_VERBS
			                       : HMR_DOMAIN_SOFTWARE,
			                     nic, (uint32_t)(k ? k - 1 : 0), i,
			                     name, p, 1 << 20, failed));
			hmr_hmem_free(i, p);
		}
	}
	return list;
}

#define STR(o, key) json_string_value(json_object_get(o, key))

static void print_rdma(json_t *root)
{
	json_t *o;
	size_t i;

	printf("RDMA devices:\n");
	if (json_object_get(root, "rdma_reason"))
		printf("  %s\n", STR(root, "rdma_reason"));
	json_array_foreach(json_object_get(root, "rdma_devices"), i, o)
	        printf("  %-10s %s%s%s, ODP %s, dma-buf %s (%s), peer memory: "
	               "%s\n",
	               STR(o, "name"), STR(o, "link_layer"),
	               *STR(o, "netdev") ? " on " : "", STR(o, "netdev"),
	               json_is_true(json_object_get(o, "odp")) ? "yes" : "no",
	               STR(o, "dmabuf"), STR(o, "dmabuf_why"),
	               *STR(o, "peermem") ? STR(o, "peermem") : "none loaded");
	if (!json_array_size(json_object_get(root, "paths")))
		return;
	printf("registration paths (device memory -> NIC):\n");
	json_array_foreach(json_object_get(root, "paths"), i, o)
	        printf("  %s device %lld -> %s: %s (%s)\n", STR(o, "iface"),
	               json_integer_value(json_object_get(o, "device")),
	               STR(o, "nic"), STR(o, "path"), STR(o, "why"));
}

/* A setting's value as printed: "(unset)" when it has none. */
static const char *setting_value(json_t *o)
{
	const char *v = json_string_value(json_object_get(o, "value"));

	return v ? v : "(unset)";
}

/* The settings table, its name and value columns as wide as their widest
 * entry (FI_MR_CUDA_CACHE_MONITOR_ENABLED, a library's path), so that
 * every value and every source starts in one column. */
static void print_settings(json_t *settings)
{
	int name_w = 0, value_w = 0, n;
	size_t i;
	json_t *o;

	json_array_foreach(settings, i, o)
	{
		n = (int)strlen(STR(o, "name"));
		name_w = n > name_w ? n : name_w;
		n = (int)strlen(setting_value(o));
		value_w = n > value_w ? n : value_w;
	}
	printf("settings (value, where it came from):\n");
	json_array_foreach(settings, i, o)
	        printf("  %-*s %-*s (%s)\n", name_w, STR(o, "name"), value_w,
	               setting_value(o), STR(o, "source"));
}

static void print_text(json_t *root)
{
	json_t *o, *d;
	size_t i, j;

	printf("%s\n", json_string_value(json_object_get(root, "version")));
	printf("memory interfaces:\n");
	json_array_foreach(json_object_get(root, "backends"), i, o)
	{
		const char *name =
		        json_string_value(json_object_get(o, "name"));

		if (!json_is_true(json_object_get(o, "present"))) {
			printf("  %-10s absent: %s\n", name,
			       json_string_value(json_object_get(o, "reason")));
			continue;
		}
		printf("  %-10s present", name);
		if (json_object_get(o, "library") &&
		    *json_string_value(json_object_get(o, "library")))
			printf(": %s, %s, %lld devices%s%s",
			       json_string_value(json_object_get(o, "library")),
			       json_string_value(json_object_get(o, "version")),
			       json_integer_value(
			               json_object_get(o, "devices")),
			       *json_string_value(json_object_get(o, "peermem"))
			               ? ", peer-memory "
			               : "",
			       json_string_value(
			               json_object_get(o, "peermem")));
		printf("\n");
		json_array_foreach(json_object_get(o, "device_list"), j, d)
		{
			const char *why = json_string_value(
			        json_object_get(d, "dmabuf_why"));

			printf("    device %lld (%s): dma-buf %s%s%s%s\n",
			       json_integer_value(json_object_get(d, "device")),
			       json_string_value(json_object_get(d, "name")),
			       json_string_value(json_object_get(d, "dmabuf")),
			       *why ? " (" : "", why, *why ? ")" : "");
		}
	}
	print_rdma(root);
	printf("domains:\n");
	json_array_foreach(json_object_get(root, "domains"), i, o)
	{
		if (json_is_true(json_object_get(o, "available")))
			printf("  %-10s available, mr_mode %s\n",
			       json_string_value(json_object_get(o, "kind")),
			       json_string_value(
			               json_object_get(o, "mr_mode")));
		else
			printf("  %-10s absent: %s\n",
			       json_string_value(json_object_get(o, "kind")),
			       json_string_value(json_object_get(o, "reason")));
	}
	o = json_object_get(root, "monitor");
	printf("memory monitor: %s, %s (%s)\n", STR(o, "kind"),
	       json_is_true(json_object_get(o, "caching"))
	               ? (json_is_true(json_object_get(o, "before_unmap"))
	                          ? "caching, told before each unmap"
	                          : "caching, told after each unmap")
	               : "NOT caching",
	       STR(o, "why"));
	json_array_foreach(json_object_get(o, "functions"), i, d)
	        printf("  %-8s %-10s %s\n", STR(d, "name"), STR(d, "mechanism"),
	               STR(d, "how"));
	print_settings(json_object_get(root, "settings"));
	printf("self-check:\n");
	json_array_foreach(json_object_get(root, "self_check"), i, o)
	{
		printf("  %-16s in a %-8s domain", STR(o, "memory"),
		       STR(o, "domain"));
		if (json_object_get(o, "nic"))
			printf(" on %s (%s)", STR(o, "nic"),
			       json_object_get(o, "path") ? STR(o, "path")
			                                  : "?");
		printf(": %s", STR(o, "result"));
		if (json_object_get(o, "cache"))
			printf(", cache %s", STR(o, "cache"));
		printf("\n");
	}
	printf("self-check %s\n",
	       json_is_true(json_object_get(root, "self_check_passed"))
	               ? "passed"
	               : "FAILED");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
	                                     {"help", no_argument, NULL, 'h'},
	                                     {NULL, 0, NULL, 0}};
	int json = 0, failed = 0, c;
	json_t *root;

	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		if (c != 'j') {
			fprintf(stderr, "usage: hmr_info [--json]\n");
			return c == 'h' ? 0 : 2;
		}
		json = 1;
	}
	root = json_pack("{s:s,s:o,s:o,s:o}", "version", hmr_version_string(),
	                 "backends", backends(), "domains", domains(),
	                 "settings", settings());
	json_object_set_new(root, "monitor", monitor());
	json_object_set_new(root, "rdma_devices", rdma_devices(root));
	json_object_set_new(root, "paths", paths(root));
	json_object_set_new(
	        root, "self_check",
	        self_check(json_object_get(root, "rdma_devices"), &failed));
	json_object_set_new(root, "self_check_passed", json_boolean(!failed));
	if (json) {
		char *s = json_dumps(root, JSON_INDENT(2));

		puts(s);
		free(s);
	} else {
		print_text(root);
	}
	json_decref(root);
	return failed;
}
