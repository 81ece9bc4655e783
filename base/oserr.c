/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* oserr.c: errno values to -FI_E* codes. */
#include <errno.h>
#include <stddef.h>

#include <hmr/hmr.h>

#include "base/oserr.h"

/* The Linux kernel's ENOTSUPP (include/linux/errno.h): internal to the
 * kernel, yet some drivers return it to user space. */
enum { KERNEL_ENOTSUPP = 524 };

int hmr__os_error(int err)
{
	static const int named[] = {
	        FI_EPERM,        FI_ENOENT,       FI_EINTR,
	        FI_EIO,          FI_E2BIG,        FI_EBADF,
	        FI_EAGAIN,       FI_ENOMEM,       FI_EACCES,
	        FI_EFAULT,       FI_EBUSY,        FI_ENODEV,
	        FI_EINVAL,       FI_EMFILE,       FI_ENOSPC,
	        FI_ENOSYS,       FI_ENOMSG,       FI_ENODATA,
	        FI_EOVERFLOW,    FI_EMSGSIZE,     FI_ENOPROTOOPT,
	        FI_EOPNOTSUPP,   FI_EADDRINUSE,   FI_EADDRNOTAVAIL,
	        FI_ENETDOWN,     FI_ENETUNREACH,  FI_ECONNABORTED,
	        FI_ECONNRESET,   FI_ENOBUFS,      FI_EISCONN,
	        FI_ENOTCONN,     FI_ESHUTDOWN,    FI_ETIMEDOUT,
	        FI_ECONNREFUSED, FI_EHOSTDOWN,    FI_EHOSTUNREACH,
	        FI_EALREADY,     FI_EINPROGRESS,  FI_EREMOTEIO,
	        FI_ECANCELED,    FI_EKEYREJECTED,
	};
	size_t i;

	if (err < 0)
		err = -err;
	if (err == ENOTSUP || err == EOPNOTSUPP || err == KERNEL_ENOTSUPP)
		return -FI_EOPNOTSUPP;
	for (i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (err && err == named[i])
			return -err;
	return -FI_EOTHER;
}
