/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* software.c: the software registrar: keys only, access checked in core. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>

#include "base/range.h"
#include "base/host.h"
#include "base/log.h"
#include "base/oserr.h"
#include "core/mr_check.h"

static int sw_probe(char *why, size_t why_len)
{
	(void)why;
	(void)why_len;
	return 0;
}

static int sw_open(struct hmr_domain *d)
{
	(void)d;
	return 0;
}

static void sw_close(struct hmr_domain *d)
{
	(void)d;
}

/* What the software registrar keeps per MR, in mr->registrar_space: the
 * mapping of an FI_MR_DMABUF buffer (NULL otherwise). */
struct sw_mr {
	void *map;
	size_t map_len;
};

static struct sw_mr *sw_mr(struct hmr_mr *mr)
{
	_Static_assert(sizeof(struct sw_mr) <= sizeof(mr->registrar_space),
	               "registrar_space holds struct sw_mr");
	return (struct sw_mr *)mr->registrar_space;
}

/* FI_MR_DMABUF: map the buffer so hmr_mr_access can hand out pointers.
 * The mapping holds its own reference: the caller may close the fd. */
static int map_dmabuf(struct hmr_mr *mr, const struct fi_mr_dmabuf *b)
{
	size_t page = hmr__host_page_size();
	uint64_t start = b->offset & ~(uint64_t)(page - 1), end;
	size_t len;
	void *p;

	if (fcntl(b->fd, F_GETFD) < 0) {
		hmr_warn("FI_MR_DMABUF: fd %d is not open", b->fd);
		return -FI_EBADF;
	}
	if (!hmr__range_end(b->offset, b->len, &end) ||
	    !hmr__align_up(end, page, &end)) {
		hmr_warn("FI_MR_DMABUF: [%#llx, +%zu) ends past the last page",
		         (unsigned long long)b->offset, b->len);
		return -FI_EINVAL;
	}
	len = (size_t)(end - start);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd,
	         (off_t)start);
	if (p == MAP_FAILED) {
		int err = errno, ret = hmr__os_error(err);

		/* ENODEV (no mmap at all) and ENOTSUPP (NVIDIA's dma-bufs,
		 * errno 524): the exporter keeps the CPU out. */
		if (err == ENODEV)
			ret = -FI_EOPNOTSUPP;
		if (ret == -FI_EOPNOTSUPP)
			hmr_warn(
			        "FI_MR_DMABUF: fd %d cannot be mapped by the "
			        "CPU (mmap: errno %d, %s): its exporter keeps "
			        "the CPU out, and a software domain reaches "
			        "registered memory with the CPU; register the "
			        "device memory by address with FI_HMEM, or use "
			        "a verbs domain",
			        b->fd, err, hmr_strerror(err));
		else
			hmr_warn("FI_MR_DMABUF: cannot map fd %d [%#llx, "
			         "+%zu): errno %d, %s",
			         b->fd, (unsigned long long)start, len, err,
			         hmr_strerror(err));
		return ret;
	}
	sw_mr(mr)->map = p;
	sw_mr(mr)->map_len = len;
	mr->iov[0].iov_base = (char *)p + (b->offset - start);
	return 0;
}

static int sw_reg(struct hmr_domain *d, struct hmr_mr *mr,
                  const struct hmr_mr_req *req)
{
	(void)d;
	sw_mr(mr)->map = NULL; /* The space is not cleared for a new MR. */
	if (req->flags & FI_MR_DMABUF)
		return map_dmabuf(mr, req->attr.dmabuf);
	return 0;
}

static int sw_dereg(struct hmr_domain *d, struct hmr_mr *mr)
{
	struct sw_mr *s = sw_mr(mr);

	(void)d;
	if (s->map)
		munmap(s->map, s->map_len);
	s->map = NULL;
	return 0;
}

const struct hmr_registrar_ops hmr__software_registrar = {
        .needed_mr_mode = 0,
        .supported_mr_mode = FI_MR_LOCAL | FI_MR_RAW | FI_MR_VIRT_ADDR |
                             FI_MR_ALLOCATED | FI_MR_PROV_KEY |
                             FI_MR_MMU_NOTIFY | FI_MR_RMA_EVENT |
                             FI_MR_ENDPOINT | FI_MR_HMEM | FI_MR_COLLECTIVE,
        .provides_keys = false,
        .probe = sw_probe,
        .open = sw_open,
        .reg = sw_reg,
        .dereg = sw_dereg,
        .close = sw_close,
};
