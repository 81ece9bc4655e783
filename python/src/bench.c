/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* bench.c: the same registration from C, for tools/bench_python.py. */
#include "hmrpy.h"

#include <time.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * _bench_c(domain, address, length, access, count) -> (reg_ns, close_ns)
 *
 * `count` fi_mr_regattr calls of host memory on the domain, as a C
 * program makes them (the attr Domain.register builds: one iov, iface
 * system), then `count` fi_close: the thread's CPU time of each phase
 * (a shared machine's preemption would swamp wall time).  The GIL is held
 * throughout, as a C caller would not drop one.
 */
PyObject *hmrpy_bench_c(PyObject *self, PyObject *args)
{
	unsigned long long addr, access;
	Py_ssize_t len, count, i, done = 0;
	struct iovec iov;
	struct fi_mr_attr attr = {.iov_count = 1, .iface = FI_HMEM_SYSTEM};
	struct fid_mr **mrs;
	HmrDomain *d;
	uint64_t t0, t1, t2;
	int ret = 0;

	(void)self;
	if (!PyArg_ParseTuple(args, "O!KnKn", &HmrDomain_Type, &d, &addr, &len,
	                      &access, &count))
		return NULL;
	if (!d->fid || len <= 0 || count <= 0)
		return hmrpy_raise(-FI_EINVAL, "_bench_c");
	mrs = PyMem_Calloc((size_t)count, sizeof(*mrs));
	if (!mrs)
		return PyErr_NoMemory();
	iov.iov_base = (void *)(uintptr_t)addr;
	iov.iov_len = (size_t)len;
	attr.mr_iov = &iov;
	attr.access = access;
	t0 = now_ns();
	for (i = 0; i < count && !ret; i++, done++)
		ret = fi_mr_regattr(d->fid, &attr, 0, &mrs[i]);
	t1 = now_ns();
	for (i = 0; i < done; i++)
		if (mrs[i])
			fi_close(&mrs[i]->fid);
	t2 = now_ns();
	PyMem_Free(mrs);
	if (ret)
		return hmrpy_raise(ret, "_bench_c: fi_mr_regattr");
	return Py_BuildValue("(KK)", (unsigned long long)(t1 - t0),
	                     (unsigned long long)(t2 - t1));
}
