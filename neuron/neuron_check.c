/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* neuron_check.c: hmr's libnrt declarations checked against the SDK's headers.
 */
/* Built only where nrt/nrt.h (SDK 2.28 or later) is found: nothing here
 * runs; it compiles or the build fails.  hmr's function types are re-read
 * with the header's NRT_STATUS in place of the ABI int, and each must be
 * exactly the type of the header's declaration. */
#pragma GCC diagnostic push
/* nrt.h declares "void nrt_close();" (written for C++). */
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nrt/nrt.h>
#include <nrt/nrt_experimental.h>
#include <nrt/nrt_status.h>
#pragma GCC diagnostic pop

#define HMR_NEURON_SDK_TYPES
typedef NRT_STATUS hmr_NRT_STATUS;
#include "neuron/neuron_api.h"

/* The ABI int hmr uses without the SDK has the enum's size. */
_Static_assert(sizeof(int) == sizeof(NRT_STATUS), "NRT_STATUS");

#define SAME(a, b) _Static_assert((long long)(a) == (long long)(b), #a)
SAME(HMR_NRT_SUCCESS, NRT_SUCCESS);
SAME(HMR_NRT_FAILURE, NRT_FAILURE);
SAME(HMR_NRT_INVALID, NRT_INVALID);
SAME(HMR_NRT_INVALID_HANDLE, NRT_INVALID_HANDLE);
SAME(HMR_NRT_RESOURCE, NRT_RESOURCE);
SAME(HMR_NRT_TIMEOUT, NRT_TIMEOUT);
SAME(HMR_NRT_HW_ERROR, NRT_HW_ERROR);
SAME(HMR_NRT_UNINITIALIZED, NRT_UNINITIALIZED);
SAME(HMR_NRT_CLOSED, NRT_CLOSED);

/* Each entry of the list against the header that declares it; NONE
 * (nrt_get_dmabuf_fd_v2) is in no public header. */
#define CHECK_DECLARED(name)                                                   \
	_Static_assert(__builtin_types_compatible_p(hmr_##name##_fn,           \
	                                            __typeof__(&name)),        \
	               #name);
#define CHECK_NRT_H(name)    CHECK_DECLARED(name)
#define CHECK_EXP_H(name)    CHECK_DECLARED(name)
#define CHECK_STATUS_H(name) CHECK_DECLARED(name)
#define CHECK_NONE(name)
#define ABI(name, req, ret, params, hdr) CHECK_##hdr(name)
HMR_NEURON_CALLS(ABI)
