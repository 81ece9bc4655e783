/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* consumer.c: a program built against an installed hmr. */
#include <stdio.h>

#include <hmr/hmr.h>

int main(void)
{
	struct fid_domain *domain;
	struct fid_mr *mr;
	static char buf[4096];
	int ret = hmr_domain_open(NULL, &domain);

	if (ret)
		return 1;
	ret = fi_mr_reg(domain, buf, sizeof(buf), FI_REMOTE_READ, 0, 0, 0, &mr,
	                NULL);
	if (ret)
		return 2;
	printf("installed hmr %s registered key %#llx\n", hmr_version_string(),
	       (unsigned long long)fi_mr_key(mr));
	fi_close(&mr->fid);
	return fi_close(&domain->fid) ? 3 : 0;
}
