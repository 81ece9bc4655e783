/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* gen_constants.c: prints hmr's constants and layouts as C11 asserts. */
#include <stdio.h>

#include <hmr/fi_mr.h>

/*
 * The output is compiled together with libfabric's <rdma/fi_domain.h>
 * (test_libfabric_compat.c), so every value and offset below is checked
 * against libfabric's header at compile time.  Macros are checked only
 * where libfabric defines them (#ifdef); the enum constants listed under
 * ENUMS exist in every libfabric since 1.5.
 */
/* clang-format off: the tables read better as written. */
// clang-format off
#define MACROS(X)                                                             \
	X(FI_MSG) X(FI_RMA) X(FI_TAGGED) X(FI_ATOMIC) X(FI_COLLECTIVE)        \
	X(FI_READ) X(FI_WRITE) X(FI_RECV) X(FI_SEND) X(FI_REMOTE_READ)        \
	X(FI_REMOTE_WRITE) X(FI_MR_DMABUF) X(FI_MR_SINGLE_USE)                \
	X(FI_HMEM_HOST_ALLOC) X(FI_HMEM_DEVICE_ONLY) X(FI_HMEM)               \
	X(FI_RMA_PMEM) X(FI_RMA_EVENT) X(FI_AUTH_KEY) X(FI_KEY_NOTAVAIL)      \
	X(FI_ADDR_NOTAVAIL) X(FI_MR_LOCAL) X(FI_MR_RAW) X(FI_MR_VIRT_ADDR)    \
	X(FI_MR_ALLOCATED) X(FI_MR_PROV_KEY) X(FI_MR_MMU_NOTIFY)              \
	X(FI_MR_RMA_EVENT) X(FI_MR_ENDPOINT) X(FI_MR_HMEM)                    \
	X(FI_MR_COLLECTIVE) X(FI_SUCCESS) X(FI_EPERM) X(FI_ENOENT)            \
	X(FI_EINTR) X(FI_EIO) X(FI_E2BIG) X(FI_EBADF) X(FI_EAGAIN)            \
	X(FI_ENOMEM) X(FI_EACCES) X(FI_EFAULT) X(FI_EBUSY) X(FI_ENODEV)       \
	X(FI_EINVAL) X(FI_EMFILE) X(FI_ENOSPC) X(FI_ENOSYS)                   \
	X(FI_EWOULDBLOCK) X(FI_ENOMSG) X(FI_ENODATA) X(FI_EOVERFLOW)          \
	X(FI_EMSGSIZE) X(FI_ENOPROTOOPT) X(FI_EOPNOTSUPP) X(FI_EADDRINUSE)    \
	X(FI_EADDRNOTAVAIL) X(FI_ENETDOWN) X(FI_ENETUNREACH)                  \
	X(FI_ECONNABORTED) X(FI_ECONNRESET) X(FI_ENOBUFS) X(FI_EISCONN)       \
	X(FI_ENOTCONN) X(FI_ESHUTDOWN) X(FI_ETIMEDOUT) X(FI_ECONNREFUSED)     \
	X(FI_EHOSTDOWN) X(FI_EHOSTUNREACH) X(FI_EALREADY) X(FI_EINPROGRESS)   \
	X(FI_EREMOTEIO) X(FI_ECANCELED) X(FI_EKEYREJECTED)                    \
	X(FI_ERRNO_OFFSET) X(FI_REG_MR)

#define ENUMS(X)                                                              \
	X(FI_MR_UNSPEC) X(FI_MR_BASIC) X(FI_MR_SCALABLE) X(FI_EOTHER)         \
	X(FI_ETOOSMALL) X(FI_EOPBADSTATE) X(FI_EAVAIL) X(FI_EBADFLAGS)        \
	X(FI_ENOEQ) X(FI_EDOMAIN) X(FI_ENOCQ) X(FI_ECRC) X(FI_ETRUNC)         \
	X(FI_ENOKEY) X(FI_ENOAV) X(FI_EOVERRUN) X(FI_ENORX)                   \
	X(FI_CLASS_UNSPEC) X(FI_CLASS_DOMAIN) X(FI_CLASS_EP) X(FI_CLASS_MR)   \
	X(FI_CLASS_CNTR) X(FI_ENABLE) X(FI_GET_RAW_MR) X(FI_MAP_RAW_MR)       \
	X(FI_UNMAP_KEY) X(FI_REFRESH) X(FI_HMEM_SYSTEM) X(FI_HMEM_CUDA)       \
	X(FI_HMEM_ROCR) X(FI_HMEM_ZE) X(FI_HMEM_NEURON) X(FI_HMEM_SYNAPSEAI)

/* Offsets checked against every libfabric since 1.17; fields added to
 * struct fi_mr_attr after `device` are checked only where present. */
#define LAYOUT(X)                                                             \
	X(fid, fclass) X(fid, context) X(fid, ops) X(fi_ops, close)           \
	X(fi_ops, bind) X(fi_ops, control) X(fi_ops, ops_open)                \
	X(fi_ops, tostr) X(fi_ops, ops_set) X(fid_mr, fid)                    \
	X(fid_mr, mem_desc) X(fid_mr, key) X(fid_domain, fid)                 \
	X(fid_domain, ops) X(fid_domain, mr) X(fi_ops_mr, reg)                \
	X(fi_ops_mr, regv) X(fi_ops_mr, regattr) X(fi_mr_attr, mr_iov)        \
	X(fi_mr_attr, iov_count) X(fi_mr_attr, access)                        \
	X(fi_mr_attr, offset) X(fi_mr_attr, requested_key)                    \
	X(fi_mr_attr, context) X(fi_mr_attr, auth_key_size)                   \
	X(fi_mr_attr, auth_key) X(fi_mr_attr, iface) X(fi_mr_attr, device)    \
	X(fi_mr_modify, flags) X(fi_mr_modify, attr)                          \
	X(fi_mr_raw_attr, flags) X(fi_mr_raw_attr, base_addr)                 \
	X(fi_mr_raw_attr, raw_key) X(fi_mr_raw_attr, key_size)                \
	X(fi_mr_map_raw, flags) X(fi_mr_map_raw, base_addr)                   \
	X(fi_mr_map_raw, raw_key) X(fi_mr_map_raw, key_size)                  \
	X(fi_mr_map_raw, key) X(fid_cntr, fid) X(fid_cntr, ops)               \
	X(fi_ops_cntr, read) X(fi_ops_cntr, readerr) X(fi_ops_cntr, add)      \
	X(fi_ops_cntr, set) X(fi_ops_cntr, wait)                              \
	X(fi_ops_domain, cntr_open) X(fi_ops_domain, endpoint2)

#define SIZES(X)                                                              \
	X(fid) X(fi_ops) X(fid_mr) X(fid_domain) X(fi_ops_mr)                 \
	X(fi_mr_raw_attr) X(fi_mr_map_raw) X(fid_cntr)

// clang-format on

#define PRINT_MACRO(name)                                                      \
	printf("#ifdef %s\n_Static_assert((unsigned long long)(%s) == "        \
	       "%lluULL, \"%s\");\n#endif\n",                                  \
	       #name, #name, (unsigned long long)(name), #name);
#define PRINT_ENUM(name)                                                       \
	printf("_Static_assert((long long)(%s) == %lldLL, \"%s\");\n", #name,  \
	       (long long)(name), #name);
#define PRINT_OFFSET(type, field)                                              \
	printf("_Static_assert(offsetof(struct %s, %s) == %zu, "               \
	       "\"%s.%s\");\n",                                                \
	       #type, #field, offsetof(struct type, field), #type, #field);
#define PRINT_SIZE(type)                                                       \
	printf("_Static_assert(sizeof(struct %s) == %zu, \"sizeof %s\");\n",   \
	       #type, sizeof(struct type), #type);

int main(void)
{
	printf("/* Generated by gen_constants.c from hmr's fi_mr.h. */\n");
	printf("#include <stddef.h>\n");
	MACROS(PRINT_MACRO)
	ENUMS(PRINT_ENUM)
	LAYOUT(PRINT_OFFSET)
	SIZES(PRINT_SIZE)
	/* Fields libfabric added after 1.17, checked where it has them. */
	printf("#if FI_MAJOR_VERSION >= 2\n");
	PRINT_OFFSET(fi_mr_attr, hmem_data)
	PRINT_OFFSET(fi_mr_attr, page_size)
	PRINT_OFFSET(fi_mr_attr, base_mr)
	PRINT_OFFSET(fi_mr_attr, sub_mr_cnt)
	PRINT_SIZE(fi_mr_attr)
	PRINT_SIZE(fi_mr_dmabuf)
	PRINT_SIZE(fi_mr_auth_key)
	printf("#endif\n");
	return 0;
}
