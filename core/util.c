/* util.c: version, error strings, ops-slot stubs, random numbers. */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "domain.h"

unsigned hmr_version(void)
{
	return HMR_VERSION;
}

const char *hmr_version_string(void)
{
	return "hmr 0.1.0";
}

const char *hmr_strerror(int err)
{
	const char *desc;
	static const char *const own[] = {
	        [FI_EOTHER - FI_ERRNO_OFFSET] = "Unspecified error",
	        [FI_ETOOSMALL - FI_ERRNO_OFFSET] =
	                "Provided buffer is too small",
	        [FI_EOPBADSTATE - FI_ERRNO_OFFSET] =
	                "Operation not permitted in current state",
	        [FI_EAVAIL - FI_ERRNO_OFFSET] = "Error available",
	        [FI_EBADFLAGS - FI_ERRNO_OFFSET] = "Flags not supported",
	        [FI_ENOEQ - FI_ERRNO_OFFSET] = "Missing or unavailable event "
	                                       "queue",
	        [FI_EDOMAIN - FI_ERRNO_OFFSET] = "Invalid resource domain",
	        [FI_ENOCQ - FI_ERRNO_OFFSET] = "Missing or unavailable "
	                                       "completion queue",
	        [FI_ECRC - FI_ERRNO_OFFSET] = "CRC error",
	        [FI_ETRUNC - FI_ERRNO_OFFSET] = "Truncation error",
	        [FI_ENOKEY - FI_ERRNO_OFFSET] = "Required key not available",
	        [FI_ENOAV - FI_ERRNO_OFFSET] = "Missing or unavailable address "
	                                       "vector",
	        [FI_EOVERRUN - FI_ERRNO_OFFSET] = "Queue has been overrun",
	        [FI_ENORX - FI_ERRNO_OFFSET] = "Receiver not ready, no receive "
	                                       "buffers available",
	};

	if (err == INT_MIN)
		return "Unknown error"; /* -INT_MIN does not exist. */
	if (err < 0)
		err = -err;
	if (err == 0)
		return "Success";
	if (err >= FI_ERRNO_OFFSET && err < FI_ERRNO_MAX)
		return own[err - FI_ERRNO_OFFSET];
	/* strerrordesc_np's strings are constant; strerror's buffer for an
	 * unknown code is reused by the next call. */
	desc = strerrordesc_np(err);
	return desc ? desc : "Unknown error";
}

int hmr__fid_enosys_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	(void)fid;
	(void)bfid;
	(void)flags;
	return -FI_ENOSYS;
}

int hmr__fid_enosys_control(struct fid *fid, int command, void *arg)
{
	(void)fid;
	(void)command;
	(void)arg;
	return -FI_ENOSYS;
}

int hmr__fid_enosys_ops_open(struct fid *fid, const char *name, uint64_t flags,
                             void **ops, void *context)
{
	(void)fid;
	(void)name;
	(void)flags;
	(void)ops;
	(void)context;
	return -FI_ENOSYS;
}

int hmr__fid_enosys_tostr(const struct fid *fid, char *buf, size_t len)
{
	(void)fid;
	(void)buf;
	(void)len;
	return -FI_ENOSYS;
}

int hmr__fid_enosys_ops_set(struct fid *fid, const char *name, uint64_t flags,
                            void *ops, void *context)
{
	(void)fid;
	(void)name;
	(void)flags;
	(void)ops;
	(void)context;
	return -FI_ENOSYS;
}

uint64_t hmr__random64(void)
{
	uint64_t v;
	struct timespec ts;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) == (ssize_t)sizeof(v))
		return v;
	/* No entropy yet (early boot): keys need uniqueness, not secrecy,
	 * and the raw-key check only guards against mistakes. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec ^
	       (uint64_t)(uintptr_t)&v;
}
