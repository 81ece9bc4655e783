/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* dlpack.c: an object's memory through DLPack (__dlpack__), legacy or 1.x. */
#include "hmrpy.h"

#include <string.h>

#include "dlpack.h"

static PyObject *str_dlpack, *str_dlpack_device, *str_max_version;
static PyObject *max_version;    /* (1, 0) */
static PyObject *kw_max_version; /* ("max_version",) */
/* Types whose __dlpack__ refused max_version= (DLPack before 1.0): they
 * are called without it from then on, so the refusal costs only once. */
static PyObject *legacy_types;

int hmrpy_dlpack_init(void)
{
	if (str_dlpack)
		return 0;
	str_dlpack = PyUnicode_InternFromString("__dlpack__");
	str_dlpack_device = PyUnicode_InternFromString("__dlpack_device__");
	str_max_version = PyUnicode_InternFromString("max_version");
	max_version = Py_BuildValue("(ii)", HMRPY_DL_MAJOR, 0);
	kw_max_version =
	        str_max_version ? PyTuple_Pack(1, str_max_version) : NULL;
	legacy_types = PySet_New(NULL);
	if (!str_dlpack || !str_dlpack_device || !max_version ||
	    !kw_max_version || !legacy_types)
		return -1;
	return 0;
}

/* DLPack's device: the fi_hmem interface, device and registration flag. */
static int dl_device(const struct hmrpy_dl_device *dev, struct hmrpy_export *e)
{
	uint64_t id = (uint64_t)dev->device_id;

	if (dev->device_id < 0) {
		hmrpy_raise(-FI_EINVAL, "DLPack: device id %d",
		            (int)dev->device_id);
		return -1;
	}
	e->iface_known = e->device_known = true;
	switch (dev->device_type) {
	case HMRPY_DL_CPU:
		e->iface = FI_HMEM_SYSTEM;
		id = 0;
		break;
	case HMRPY_DL_CUDA_HOST:
		e->reg_flags = FI_HMEM_HOST_ALLOC; /* The device is ignored. */
		                                   /* fall through */
	case HMRPY_DL_CUDA:
	case HMRPY_DL_CUDA_MANAGED:
		e->iface = FI_HMEM_CUDA;
		break;
	case HMRPY_DL_ROCM_HOST:
		e->reg_flags = FI_HMEM_HOST_ALLOC;
		/* fall through */
	case HMRPY_DL_ROCM:
		e->iface = FI_HMEM_ROCR;
		break;
	case HMRPY_DL_ONEAPI:
		/* A SYCL device index: the first Level Zero driver's device. */
		if (dev->device_id > 0xffff)
			goto unsupported;
		e->iface = FI_HMEM_ZE;
		id = (uint64_t)fi_hmem_ze_device(0, dev->device_id);
		break;
	default:
		goto unsupported;
	}
	e->device = id;
	return 0;
unsupported:
	hmrpy_raise(-FI_EOPNOTSUPP,
	            "DLPack device type %d, device %d: no "
	            "memory interface of hmr's",
	            (int)dev->device_type, (int)dev->device_id);
	return -1;
}

void hmrpy_dlpack_free(struct hmrpy_export *e)
{
	if (!e->dl)
		return;
	if (e->dl_versioned) {
		struct hmrpy_dl_managed_versioned *m = e->dl;

		if (m->deleter)
			m->deleter(m);
	} else {
		struct hmrpy_dl_managed *m = e->dl;

		if (m->deleter)
			m->deleter(m);
	}
	e->dl = NULL;
}

/* Take the managed tensor out of the capsule: from now on its deleter is
 * ours to call (hmrpy_export_release), as the DLPack protocol says. */
static int dl_take(PyObject *cap, struct hmrpy_export *e)
{
	const char *name = PyCapsule_GetName(cap);
	void *p;

	if (!name && PyErr_Occurred())
		return -1;
	if (name && (!strcmp(name, "used_dltensor") ||
	             !strcmp(name, "used_dltensor_versioned"))) {
		hmrpy_raise(-FI_EINVAL,
		            "DLPack: the capsule was already "
		            "consumed (%s)",
		            name);
		return -1;
	}
	if (!name ||
	    (strcmp(name, "dltensor") && strcmp(name, "dltensor_versioned"))) {
		hmrpy_raise(-FI_EINVAL,
		            "DLPack: a capsule named %s is not a "
		            "DLPack tensor",
		            name ? name : "NULL");
		return -1;
	}
	e->dl_versioned = !strcmp(name, "dltensor_versioned");
	p = PyCapsule_GetPointer(cap, name);
	if (!p)
		return -1;
	if (PyCapsule_SetName(cap, e->dl_versioned ? "used_dltensor_versioned"
	                                           : "used_dltensor"))
		return -1;
	e->dl = p;
	return 0;
}

/* obj.__dlpack__(), asking for DLPack 1.x where the producer knows it. */
static PyObject *dl_call(PyObject *obj, PyObject *meth)
{
	PyObject *type = (PyObject *)Py_TYPE(obj), *cap;
	PyObject *argv[1] = {max_version};
	int legacy = PySet_Contains(legacy_types, type);

	if (legacy < 0)
		return NULL;
	if (legacy)
		return PyObject_CallNoArgs(meth);
	cap = PyObject_Vectorcall(meth, argv, 0, kw_max_version);
	if (cap || !PyErr_ExceptionMatches(PyExc_TypeError))
		return cap;
	PyErr_Clear();
	if (PySet_Add(legacy_types, type))
		return NULL;
	return PyObject_CallNoArgs(meth);
}

/* (device_type, device_id) from __dlpack_device__. */
static int dl_declared(PyObject *obj, struct hmrpy_dl_device *dev)
{
	PyObject *t = PyObject_CallMethodNoArgs(obj, str_dlpack_device);
	long type, id;

	if (!t)
		return -1;
	if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 2) {
		Py_DECREF(t);
		PyErr_SetString(PyExc_TypeError,
		                "__dlpack_device__ must "
		                "return (device_type, device_id)");
		return -1;
	}
	type = PyLong_AsLong(PyTuple_GET_ITEM(t, 0));
	id = PyLong_AsLong(PyTuple_GET_ITEM(t, 1));
	Py_DECREF(t);
	if (PyErr_Occurred())
		return -1;
	if (type < INT32_MIN || type > INT32_MAX || id < INT32_MIN ||
	    id > INT32_MAX) {
		hmrpy_raise(-FI_EINVAL, "__dlpack_device__: (%ld, %ld)", type,
		            id);
		return -1;
	}
	dev->device_type = (int32_t)type;
	dev->device_id = (int32_t)id;
	return 0;
}

/* Sub-byte elements are packed: only a compact tensor has a byte range. */
static int dl_packed_span(const struct hmrpy_dl_tensor *t, int64_t bits,
                          int64_t *lo, uint64_t *len)
{
	uint64_t n, bytes, elems = 1;
	int64_t expect = 1;
	int i;

	if (hmrpy_span("DLPack", t->ndim, t->shape, NULL, 1, 1, lo, &n))
		return -1;
	for (i = t->ndim - 1; t->strides && i >= 0; i--) {
		if (t->shape[i] != 1 && t->strides[i] != expect) {
			hmrpy_raise(-FI_EINVAL,
			            "DLPack: a strided view of "
			            "%lld-bit elements has no byte range",
			            (long long)bits);
			return -1;
		}
		expect *= t->shape[i];
	}
	elems = n;
	if (__builtin_mul_overflow(elems, (uint64_t)bits, &bytes)) {
		hmrpy_raise(-FI_EOVERFLOW, "DLPack: size overflows 64 bits");
		return -1;
	}
	*lo = 0;
	*len = bytes / 8 + (bytes % 8 != 0);
	return 0;
}

/*
 * Page-locked host memory of a runtime (kDLCUDAHost, kDLROCMHost) is host
 * memory to the CPU, and producers disagree on which to say: torch 2.11's
 * pinned tensor says kDLCUDAHost in __dlpack_device__ and kDLCPU in its
 * capsule (lab/gpu.md).  Either way round, the pair names the runtime's
 * host memory: *out is the host-memory kind.  0: the pair disagrees.
 */
static int dl_pinned_pair(const struct hmrpy_dl_device *a,
                          const struct hmrpy_dl_device *b,
                          struct hmrpy_dl_device *out)
{
	const struct hmrpy_dl_device *host =
	        a->device_type == HMRPY_DL_CPU ? b : a;
	const struct hmrpy_dl_device *cpu = host == a ? b : a;

	if (cpu->device_type != HMRPY_DL_CPU ||
	    (host->device_type != HMRPY_DL_CUDA_HOST &&
	     host->device_type != HMRPY_DL_ROCM_HOST))
		return 0;
	*out = *host;
	return 1;
}

static int dl_tensor(const struct hmrpy_dl_tensor *t,
                     const struct hmrpy_dl_device *declared,
                     struct hmrpy_export *e)
{
	int64_t bits = (int64_t)t->dtype.bits * t->dtype.lanes, lo;
	struct hmrpy_dl_device dev = t->device;
	uint64_t len;
	int ret;

	if ((t->device.device_type != declared->device_type ||
	     t->device.device_id != declared->device_id) &&
	    !dl_pinned_pair(&t->device, declared, &dev)) {
		hmrpy_raise(
		        -FI_EINVAL,
		        "DLPack: __dlpack_device__ says (%d, "
		        "%d) but the tensor is on (%d, %d)",
		        (int)declared->device_type, (int)declared->device_id,
		        (int)t->device.device_type, (int)t->device.device_id);
		return -1;
	}
	/* A host-memory kind is a claim hmr checks: the registration asks
	 * for FI_HMEM_HOST_ALLOC, which the backend must confirm. */
	if (dl_device(&dev, e))
		return -1;
	if (t->ndim < 0 || (t->ndim > 0 && !t->shape) || bits == 0) {
		hmrpy_raise(-FI_EINVAL, "DLPack: ndim %d, dtype of %lld bits",
		            (int)t->ndim, (long long)bits);
		return -1;
	}
	if (bits % 8)
		ret = dl_packed_span(t, bits, &lo, &len);
	else
		ret = hmrpy_span("DLPack", t->ndim, t->shape, t->strides,
		                 bits / 8, bits / 8, &lo, &len);
	if (ret)
		return -1;
	return hmrpy_place(e, "DLPack", (uint64_t)(uintptr_t)t->data,
	                   t->byte_offset, lo, len);
}

/* 1: handled (0 or -1 in *ret); 0: the object speaks no DLPack, or
 * refuses to (a read-only NumPy array) and has a buffer to offer. */
int hmrpy_from_dlpack(PyObject *obj, struct hmrpy_export *e, int *ret)
{
	PyObject *meth = hmrpy_optional_attr(obj, str_dlpack), *cap;
	struct hmrpy_dl_device declared;
	const struct hmrpy_dl_tensor *t;

	*ret = -1;
	if (!meth)
		return PyErr_Occurred() ? 1 : 0;
	e->source = HMRPY_SRC_DLPACK;
	if (dl_declared(obj, &declared)) {
		Py_DECREF(meth);
		return 1;
	}
	cap = dl_call(obj, meth);
	Py_DECREF(meth);
	if (!cap) {
		if (PyErr_ExceptionMatches(PyExc_BufferError) &&
		    PyObject_CheckBuffer(obj)) {
			PyErr_Clear();
			return 0;
		}
		return 1;
	}
	if (!PyCapsule_CheckExact(cap)) {
		Py_DECREF(cap);
		PyErr_SetString(PyExc_TypeError, "__dlpack__ did not return "
		                                 "a capsule");
		return 1;
	}
	*ret = dl_take(cap, e);
	Py_DECREF(cap);
	if (*ret)
		return 1;
	if (e->dl_versioned) {
		struct hmrpy_dl_managed_versioned *m = e->dl;

		if (m->version.major > HMRPY_DL_MAJOR) {
			hmrpy_raise(-FI_EOPNOTSUPP,
			            "DLPack %u.%u: this hmr "
			            "reads DLPack 1.x",
			            m->version.major, m->version.minor);
			*ret = -1;
			return 1;
		}
		e->readonly = m->flags & HMRPY_DL_FLAG_READ_ONLY;
		t = &m->dl_tensor;
	} else {
		t = &((struct hmrpy_dl_managed *)e->dl)->dl_tensor;
	}
	*ret = dl_tensor(t, &declared, e);
	return 1;
}
