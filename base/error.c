/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* error.c: hmr_strerror, the names of -FI_E* codes. */
#include <limits.h>
#include <string.h>

#include <hmr/hmr.h>

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
