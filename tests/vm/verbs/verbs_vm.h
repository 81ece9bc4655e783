/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* verbs_vm.h: what the verbs suite's files share. */
#ifndef HMR_VERBS_VM_H
#define HMR_VERBS_VM_H

#include <hmr/hmr.h>

#include "rc_pair.h"

/* Where the payload puts the simulated libcuda. */
#define HMR_VM_SIM_CUDA "/payload/libcuda.so.1"

/* verbs_cuda.c */
void hmr_vm_cuda_env(void);
int hmr_vm_cuda_cases(struct rc_pair *p, struct fid_mr *src_mr, char *src);
int hmr_vm_child(int argc, char **argv);

#endif /* HMR_VERBS_VM_H */
