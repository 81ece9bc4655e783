/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* hmr_info.c: what hmr can do on this machine: version and domains. */
#include <stdio.h>

#include <hmr/hmr.h>

static void print_mode(uint64_t mode)
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
	const char *sep = "";
	size_t i;

	if (mode == FI_MR_BASIC) {
		printf("BASIC");
		return;
	}
	for (i = 0; i < sizeof(bits) / sizeof(bits[0]); i++) {
		if (mode & bits[i].bit) {
			printf("%s%s", sep, bits[i].name);
			sep = "|";
		}
	}
	if (!*sep)
		printf("0");
}

int main(void)
{
	enum hmr_domain_kind kinds[] = {HMR_DOMAIN_SOFTWARE, HMR_DOMAIN_VERBS};
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	struct fid_domain *domain;
	uint64_t mode;
	char why[256];
	size_t i;
	int ret, failed = 0;

	printf("%s (library %u.%u.%u, header %u.%u.%u)\n", hmr_version_string(),
	       hmr_version() >> 16, (hmr_version() >> 8) & 0xff,
	       hmr_version() & 0xff, HMR_VERSION_MAJOR, HMR_VERSION_MINOR,
	       HMR_VERSION_PATCH);
	printf("domains:\n");
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		printf("  %-9s ", hmr_domain_kind_name(kinds[i]));
		ret = hmr_domain_probe(kinds[i], why, sizeof(why));
		if (ret) {
			printf("absent: %s\n", why);
			continue;
		}
		attr.kind = kinds[i];
		ret = hmr_domain_open(&attr, &domain);
		if (ret) {
			printf("present, but opening failed: %s\n",
			       hmr_strerror(ret));
			failed = 1;
			continue;
		}
		hmr_domain_mr_mode(domain, &mode);
		printf("available, mr_mode ");
		print_mode(mode);
		printf("\n");
		fi_close(&domain->fid);
	}
	printf("memory interfaces:\n");
	for (i = FI_HMEM_SYSTEM; i <= FI_HMEM_SYNAPSEAI; i++) {
		ret = hmr_hmem_status((enum fi_hmem_iface)i, why, sizeof(why));
		printf("  %-9s %s%s\n",
		       hmr_hmem_iface_name((enum fi_hmem_iface)i),
		       ret ? "absent: " : "present", ret ? why : "");
	}
	return failed;
}
