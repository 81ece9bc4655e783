/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* register_host.c: register a buffer and read its key (README example). */
#include <stdio.h>
#include <stdlib.h>

#include <hmr/hmr.h>

int main(void)
{
	struct fid_domain *domain;
	struct fid_mr *mr;
	size_t len = 1 << 20;
	void *buf = malloc(len);
	int ret;

	ret = hmr_domain_open(NULL, &domain); /* The software domain. */
	if (ret)
		return fprintf(stderr, "open: %s\n", hmr_strerror(ret)), 1;
	ret = fi_mr_reg(domain, buf, len, FI_REMOTE_READ | FI_REMOTE_WRITE, 0,
	                0, 0, &mr, NULL);
	if (ret)
		return fprintf(stderr, "reg: %s\n", hmr_strerror(ret)), 1;
	printf("key %#llx desc %p\n", (unsigned long long)fi_mr_key(mr),
	       fi_mr_desc(mr));
	fi_close(&mr->fid);
	fi_close(&domain->fid);
	free(buf);
	return 0;
}
