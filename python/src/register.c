/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* register.c: Domain.register: what the memory is, then fi_mr_regattr. */
#include "hmrpy.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/*
 * The order of one registration:
 *   1. the object's memory and what the object says it is (export.c);
 *   2. the caller's iface=/device= must agree with the object;
 *   3. without the GIL: what hmr finds, where the object cannot say
 *      (host claims are checked here: core/ checks device hints itself),
 *      the dma-buf export for FI_MR_DMABUF, and fi_mr_regattr;
 *   4. an MR object that holds the exporter until it is closed.
 */

/* Access bits that let the NIC or a peer write the memory. */
#define HMRPY_WRITES (FI_REMOTE_WRITE | FI_READ | FI_RECV)

enum reg_stage {
	STAGE_QUERY, /* hmr_hmem_query failed */
	STAGE_LIE,   /* the memory is not what the object says */
	STAGE_NOHMEM,
	STAGE_UNMAPPED,
	STAGE_DMABUF,
	STAGE_REG,
};

/* What the GIL-free part needs, copied out of Python objects. */
struct reg_job {
	struct fid_domain *fid;
	uint64_t caps, mr_mode;
	uint64_t addr;
	size_t len;
	bool claimed;    /* The object or iface= named the interface. */
	bool detect;     /* Ask hmr what the memory is. */
	bool host_check; /* The object says host memory: make sure. */
	bool device_known;
	bool address; /* An (address, length) from the caller. */
	enum fi_hmem_iface iface;
	uint64_t device;
	uint64_t access, key, flags;
	struct hmr_hmem_info info; /* What hmr found (detect/host_check). */
	enum reg_stage stage;
	struct fid_mr *mr;
};

static const char *const reg_names[] = {"obj",   "access", "requested_key",
                                        "iface", "device", "flags"};
#define REG_NARGS 6

/* Positional or keyword arguments without building a dict: this is the
 * hot path, and the argument parser costs as much as hmr's own work. */
static int reg_args(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                    PyObject **v)
{
	Py_ssize_t i, j, nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;

	for (i = 0; i < REG_NARGS; i++)
		v[i] = NULL;
	if (nargs > REG_NARGS) {
		PyErr_SetString(PyExc_TypeError, "register() takes at most 6 "
		                                 "arguments");
		return -1;
	}
	for (i = 0; i < nargs; i++)
		v[i] = args[i];
	for (i = 0; i < nkw; i++) {
		PyObject *name = PyTuple_GET_ITEM(kwnames, i);

		for (j = 0; j < REG_NARGS; j++)
			if (!PyUnicode_CompareWithASCIIString(name,
			                                      reg_names[j]))
				break;
		if (j == REG_NARGS || v[j]) {
			PyErr_Format(PyExc_TypeError,
			             "register(): %s keyword "
			             "argument %R",
			             j == REG_NARGS ? "unexpected" : "repeated",
			             name);
			return -1;
		}
		v[j] = args[nargs + i];
	}
	if (!v[0]) {
		PyErr_SetString(PyExc_TypeError, "register() needs the object");
		return -1;
	}
	return 0;
}

static int u64_of(PyObject *o, const char *name, uint64_t dflt, uint64_t *v)
{
	*v = dflt;
	if (!o || o == Py_None)
		return 0;
	*v = PyLong_AsUnsignedLongLong(o);
	if (*v == (uint64_t)-1 && PyErr_Occurred()) {
		PyErr_Format(PyExc_ValueError,
		             "register(): %s must be an int "
		             "in [0, 2**64)",
		             name);
		return -1;
	}
	return 0;
}

/* The caller's hints against what the object says; the job's iface,
 * device and flags. */
static int reg_hints(const struct hmrpy_export *e, PyObject *iface_o,
                     PyObject *device_o, struct reg_job *j)
{
	const char *src = hmrpy_source_name(e->source);
	int hint;

	if (hmrpy_iface_arg(iface_o ? iface_o : Py_None, &hint) ||
	    u64_of(device_o, "device", e->device, &j->device))
		return -1;
	if (hint >= 0 && e->iface_known && hint != (int)e->iface) {
		hmrpy_raise(-FI_EINVAL,
		            "iface=%s given, but the object (%s) "
		            "is %s memory",
		            hmr_hmem_iface_name(hint), src,
		            hmr_hmem_iface_name(e->iface));
		return -1;
	}
	if (device_o && device_o != Py_None && e->device_known &&
	    j->device != e->device && !(e->reg_flags & FI_HMEM_HOST_ALLOC)) {
		hmrpy_raise(-FI_EINVAL,
		            "device=%llu given, but the object (%s) "
		            "is on device %llu",
		            (unsigned long long)j->device, src,
		            (unsigned long long)e->device);
		return -1;
	}
	j->iface = hint >= 0 ? (enum fi_hmem_iface)hint : e->iface;
	j->device_known = e->device_known || (device_o && device_o != Py_None);
	j->claimed = hint >= 0 || e->iface_known;
	j->detect =
	        !j->claimed || (j->iface != FI_HMEM_SYSTEM && !j->device_known);
	j->host_check = !j->detect && j->iface == FI_HMEM_SYSTEM;
	j->address = e->source == HMRPY_SRC_ADDRESS;
	j->flags |= e->reg_flags;
	j->addr = e->addr;
	j->len = e->len;
	if (e->readonly && (j->access & HMRPY_WRITES)) {
		hmrpy_raise(-FI_EACCES,
		            "the object's memory (%s) is read-only: "
		            "no REMOTE_WRITE, READ or RECV access",
		            src);
		return -1;
	}
	return 0;
}

/*
 * An object that says system memory (a NumPy array, a buffer) over memory
 * a runtime allocated or page-locked for the host (cuMemAllocHost,
 * cudaHostAlloc: CuPy's pinned allocator) tells the truth as the CPU sees
 * it.  It registers as what fi_mr(3) calls that memory: the runtime's
 * iface with FI_HMEM_HOST_ALLOC (the device is ignored), as a DLPack
 * kDLCUDAHost tensor does.  Device and managed memory stay refused.
 */
static bool host_alloc_claim(struct reg_job *j)
{
	if (j->iface != FI_HMEM_SYSTEM ||
	    !(j->info.flags & HMR_HMEM_HOST_ALLOC))
		return false;
	j->iface = j->info.iface;
	j->device = j->info.device;
	j->flags |= FI_HMEM_HOST_ALLOC;
	return true;
}

/* What hmr finds, against what the object says. */
static int reg_classify(struct reg_job *j)
{
	int ret = hmr_hmem_query((void *)(uintptr_t)j->addr, j->len, &j->info);

	if (ret) {
		j->stage = STAGE_QUERY;
		return ret;
	}
	if (j->claimed && j->info.iface != j->iface && !host_alloc_claim(j)) {
		j->stage = STAGE_LIE;
		return -FI_EINVAL;
	}
	if (j->detect) {
		j->iface = j->info.iface;
		if (!j->device_known)
			j->device = j->info.device;
	}
	return 0;
}

/* msync(MS_ASYNC) fails on any unmapped page, in one system call. */
static int host_mapped(uint64_t addr, size_t len)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), start;

	start = addr & ~(page - 1);
	return msync((void *)(uintptr_t)start, (size_t)(addr + len - start),
	             MS_ASYNC)
	               ? -FI_EFAULT
	               : 0;
}

/* Steps 3: runs without the GIL. */
static int reg_nogil(struct reg_job *j)
{
	struct iovec iov = {(void *)(uintptr_t)j->addr, j->len};
	struct fi_mr_attr attr = {.mr_iov = &iov, .iov_count = 1};
	struct fi_mr_dmabuf dmabuf;
	int ret, fd = -1;

	if ((j->detect || j->host_check) && (ret = reg_classify(j)))
		return ret;
	if (j->iface != FI_HMEM_SYSTEM && !(j->caps & FI_HMEM)) {
		j->stage = STAGE_NOHMEM;
		return -FI_EOPNOTSUPP;
	}
	/* The caller's own integers: no view of unmapped memory, ever. */
	if (j->address && j->iface == FI_HMEM_SYSTEM &&
	    !(j->mr_mode & FI_MR_ALLOCATED) && host_mapped(j->addr, j->len)) {
		j->stage = STAGE_UNMAPPED;
		return -FI_EFAULT;
	}
	attr.access = j->access;
	attr.requested_key = j->key;
	attr.iface = j->iface;
	attr.device.reserved = j->device;
	if (j->flags & FI_MR_DMABUF) {
		ret = hmr_hmem_dmabuf_get(iov.iov_base, j->len, 0, &fd,
		                          &dmabuf.offset);
		if (ret) {
			j->stage = STAGE_DMABUF;
			return ret;
		}
		dmabuf.fd = fd;
		dmabuf.len = j->len;
		dmabuf.base_addr = (char *)iov.iov_base - dmabuf.offset;
		attr.dmabuf = &dmabuf;
	}
	j->stage = STAGE_REG;
	ret = fi_mr_regattr(j->fid, &attr, j->flags, &j->mr);
	/* The registration holds its own reference to the buffer. */
	if (fd >= 0)
		hmr_hmem_dmabuf_put(iov.iov_base, fd);
	return ret;
}

/* Say what went wrong, and what hmr finds when the object was wrong. */
static PyObject *reg_failed(struct reg_job *j, const struct hmrpy_export *e,
                            int ret)
{
	const char *src = hmrpy_source_name(e->source);
	const char *iface = hmr_hmem_iface_name(j->iface);
	unsigned long long a = j->addr, dev = j->device;
	struct hmr_hmem_info found;
	char why[256];

	switch (j->stage) {
	case STAGE_QUERY:
		return hmrpy_raise(ret, "%s [%#llx, +%zu): cannot classify",
		                   src, a, j->len);
	case STAGE_LIE:
		if (j->info.iface == FI_HMEM_SYSTEM &&
		    hmr_hmem_status(j->iface, why, sizeof(why)))
			goto absent;
		return hmrpy_raise(ret,
		                   "the object (%s) says %s memory, but hmr "
		                   "finds %s memory of device %llu at %#llx",
		                   src, iface,
		                   hmr_hmem_iface_name(j->info.iface),
		                   (unsigned long long)j->info.device, a);
	case STAGE_NOHMEM:
		return hmrpy_raise(ret,
		                   "%s memory needs a domain with the HMEM "
		                   "capability",
		                   iface);
	case STAGE_UNMAPPED:
		return hmrpy_raise(ret, "[%#llx, +%zu) is not mapped", a,
		                   j->len);
	case STAGE_DMABUF:
		return hmrpy_raise(ret, "dma-buf export of %s memory at %#llx",
		                   iface, a);
	case STAGE_REG:
		break;
	}
	if (ret == -FI_ENOSYS && hmr_hmem_status(j->iface, why, sizeof(why)))
		goto absent;
	if (j->iface == FI_HMEM_SYSTEM && ret == -FI_EFAULT)
		return hmrpy_raise(ret, "[%#llx, +%zu) is not mapped (%s)", a,
		                   j->len, src);
	if (j->iface != FI_HMEM_SYSTEM && ret == -FI_EINVAL &&
	    !hmrpy_mem_query(j->addr, j->len, &found))
		return hmrpy_raise(ret,
		                   "register %s memory of device %llu at "
		                   "%#llx (%s): hmr finds %s memory of device "
		                   "%llu",
		                   iface, dev, a, src,
		                   hmr_hmem_iface_name(found.iface),
		                   (unsigned long long)found.device);
	return hmrpy_raise(ret,
	                   "register %s memory of device %llu at [%#llx, "
	                   "+%zu) (%s)",
	                   iface, dev, a, j->len, src);
absent:
	return hmrpy_raise(-FI_ENOSYS,
	                   "the object (%s) says %s memory, but "
	                   "hmr's %s backend is absent: %s",
	                   src, iface, iface, why);
}

static HmrMR *mr_new(HmrDomain *d, const struct reg_job *j)
{
	HmrMR *mr = PyObject_GC_New(HmrMR, &HmrMR_Type);

	if (!mr)
		return NULL;
	mr->domain = d;
	Py_INCREF(d);
	mr->fid = NULL;
	mr->obj = NULL;
	mr->closing = mr->exported = false;
	mr->views = 0;
	mr->prev = mr->next = NULL;
	mr->access = j->access;
	mr->flags = j->flags;
	mr->key = FI_KEY_NOTAVAIL;
	return mr;
}

PyObject *hmrpy_register(HmrDomain *d, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames)
{
	PyThreadState *ts;
	PyObject *v[REG_NARGS];
	struct reg_job j = {0};
	HmrMR *mr;
	int ret;

	if (reg_args(args, nargs, kwnames, v) ||
	    u64_of(v[1], "access", FI_REMOTE_READ | FI_REMOTE_WRITE,
	           &j.access) ||
	    u64_of(v[2], "requested_key", 0, &j.key) ||
	    u64_of(v[5], "flags", 0, &j.flags))
		return NULL;
	if (!d->fid)
		return hmrpy_raise(-FI_EBADF, "the domain is closed");
	mr = mr_new(d, &j);
	if (!mr)
		return NULL;
	if (hmrpy_export_get(v[0], &mr->exp))
		goto err;
	mr->exported = true;
	if (reg_hints(&mr->exp, v[3], v[4], &j))
		goto err;
	j.fid = d->fid;
	j.caps = d->caps;
	j.mr_mode = d->mr_mode;
	d->inflight++;
	ts = PyEval_SaveThread();
	ret = reg_nogil(&j);
	PyEval_RestoreThread(ts);
	d->inflight--;
	if (ret) {
		reg_failed(&j, &mr->exp, ret);
		goto err;
	}
	mr->fid = j.mr;
	mr->key = fi_mr_key(j.mr);
	mr->flags = j.flags;
	mr->iface = j.iface;
	mr->device = j.device;
	if (mr->exp.source != HMRPY_SRC_ADDRESS)
		mr->obj = Py_NewRef(v[0]);
	hmrpy_mr_link(mr);
	PyObject_GC_Track(mr);
	return (PyObject *)mr;
err:
	Py_DECREF(mr);
	return NULL;
}
