/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* oserr.h: a system call's errno as hmr's -FI_E* code. */
#ifndef HMR_BASE_OSERR_H
#define HMR_BASE_OSERR_H

/*
 * hmr returns 0 or a negative -FI_E* code, never a raw errno: a kernel
 * can hand back a value no caller knows (ENOTSUPP, 524, has no name in
 * user space: mmap of NVIDIA's dma-buf fds gives it).  Every errno that
 * leaves hmr goes through this.  The errno values that fi_mr(3) names
 * (FI_EPERM ... FI_EKEYREJECTED: the same numbers) pass as they are;
 * ENOTSUP, EOPNOTSUPP and 524 become -FI_EOPNOTSUPP; anything else
 * -FI_EOTHER (the caller logs what it was).  err 0 gives -FI_EOTHER too:
 * a failure without a reason is still a failure.
 */
int hmr__os_error(int err);

#endif /* HMR_BASE_OSERR_H */
