/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* export.c: an object's memory: DLPack, CUDA array interface, buffers. */
#include "hmrpy.h"

#include <string.h>

/*
 * Each protocol (DLPack in dlpack.c) yields the byte range the object's
 * elements touch, what the object says the memory is, whether it is read-only,
 * and what keeps it alive.  Everything an object reports is checked before use:
 * a shape or stride that overflows, a negative length, a device that the
 * capsule and __dlpack_device__ disagree on, a consumed capsule.  A range is
 * never guessed: it is computed from shape, strides and offset, or refused.
 */

static PyObject *str_cai;

const char *hmrpy_source_name(enum hmrpy_source s)
{
	switch (s) {
	case HMRPY_SRC_DLPACK:
		return "DLPack";
	case HMRPY_SRC_CAI:
		return "__cuda_array_interface__";
	case HMRPY_SRC_BUFFER:
		return "buffer protocol";
	case HMRPY_SRC_ADDRESS:
		return "address";
	}
	return "?";
}

int hmrpy_export_init(void)
{
	if (!str_cai)
		str_cai =
		        PyUnicode_InternFromString("__cuda_array_interface__");
	return str_cai ? hmrpy_dlpack_init() : -1;
}

/*
 * An attribute, or NULL without an exception when there is none.  Most
 * objects lack two of the three protocols: looking them up must not cost
 * an AttributeError each (half a microsecond), so the lookup that skips
 * making one is used: public from 3.13, private (and stable) before.
 */
PyObject *hmrpy_optional_attr(PyObject *obj, PyObject *name)
{
	PyObject *v = NULL;

#if PY_VERSION_HEX >= 0x030D0000
	PyObject_GetOptionalAttr(obj, name, &v);
#else
	_PyObject_LookupAttr(obj, name, &v);
#endif
	return v;
}

/*
 * The byte range [lo, lo + len) relative to the first element that an
 * array of `ndim` dimensions touches.  strides are in units of `unit`
 * bytes (an element for DLPack, a byte for the other protocols); NULL
 * strides mean compact row-major.  Negative strides reach below the first
 * element, so lo <= 0.  -1 with hmr.Error set on a lie or an overflow.
 */
int hmrpy_span(const char *what, int ndim, const int64_t *shape,
               const int64_t *strides, int64_t unit, int64_t itemsize,
               int64_t *lo, uint64_t *len)
{
	int64_t low = 0, high = 0, reach, stride, count = 1;
	int i;

	for (i = 0; i < ndim; i++) {
		if (shape[i] < 0)
			goto lie_shape;
		if (shape[i] == 0) {
			hmrpy_raise(-FI_EINVAL,
			            "%s: empty array (shape[%d] "
			            "is 0): nothing to register",
			            what, i);
			return -1;
		}
		if (__builtin_mul_overflow(count, shape[i], &count))
			goto overflow;
	}
	if (!strides) {
		if (__builtin_mul_overflow(count, itemsize, &high))
			goto overflow;
		*lo = 0;
		*len = (uint64_t)high;
		return 0;
	}
	for (i = 0; i < ndim; i++) {
		if (__builtin_mul_overflow(strides[i], unit, &stride) ||
		    __builtin_mul_overflow(shape[i] - 1, stride, &reach))
			goto overflow;
		if (reach < 0 ? __builtin_add_overflow(low, reach, &low)
		              : __builtin_add_overflow(high, reach, &high))
			goto overflow;
	}
	if (__builtin_add_overflow(high, itemsize, &high) ||
	    __builtin_sub_overflow(high, low, &reach))
		goto overflow;
	*lo = low;
	*len = (uint64_t)reach;
	return 0;

lie_shape:
	hmrpy_raise(-FI_EINVAL, "%s: negative length (shape[%d] is %lld)", what,
	            i, (long long)shape[i]);
	return -1;
overflow:
	hmrpy_raise(-FI_EOVERFLOW, "%s: shape and strides overflow 64 bits",
	            what);
	return -1;
}

/* addr = base + offset + lo (lo <= 0), every step checked; the range
 * must end below 2^64 (one ending exactly there is an overflow too). */
int hmrpy_place(struct hmrpy_export *e, const char *what, uint64_t base,
                uint64_t offset, int64_t lo, uint64_t len)
{
	uint64_t a, end, below = (uint64_t)0 - (uint64_t)lo;

	if (__builtin_add_overflow(base, offset, &a) || a < below ||
	    __builtin_add_overflow(a - below, len, &end)) {
		hmrpy_raise(-FI_EINVAL,
		            "%s: the range wraps the address "
		            "space",
		            what);
		return -1;
	}
	if (a - below == 0) {
		hmrpy_raise(-FI_EINVAL, "%s: NULL data pointer", what);
		return -1;
	}
	e->addr = a - below;
	e->len = (size_t)len;
	return 0;
}

/* numpy's typestr ("<f4", "|u1", "<U8", "<M8[ns]"): the element size. */
static int typestr_size(PyObject *s, int64_t *size)
{
	const char *t = PyUnicode_Check(s) ? PyUnicode_AsUTF8(s) : NULL;
	char *end;
	long n;

	if (!t) {
		if (!PyErr_Occurred())
			PyErr_SetString(PyExc_TypeError,
			                "__cuda_array_interface__"
			                ": typestr must be a str");
		return -1;
	}
	n = strlen(t) >= 3 ? strtol(t + 2, &end, 10) : 0;
	if (n <= 0 || n > (1L << 20)) {
		hmrpy_raise(-FI_EINVAL, "__cuda_array_interface__: typestr %s",
		            t);
		return -1;
	}
	*size = t[1] == 'U' ? n * 4 : n; /* UCS-4 characters. */
	return 0;
}

#define HMRPY_MAX_DIMS 64

/* A sequence of at most HMRPY_MAX_DIMS ints; *n its length. */
static int int_tuple(PyObject *seq, const char *what, int64_t *out, int *n)
{
	PyObject *fast = PySequence_Fast(seq, what);
	Py_ssize_t i, len;

	if (!fast)
		return -1;
	len = PySequence_Fast_GET_SIZE(fast);
	if (len > HMRPY_MAX_DIMS) {
		Py_DECREF(fast);
		hmrpy_raise(-FI_EINVAL, "%s: %zd dimensions", what, len);
		return -1;
	}
	for (i = 0; i < len; i++) {
		out[i] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fast, i));
		if (out[i] == -1 && PyErr_Occurred()) {
			Py_DECREF(fast);
			return -1;
		}
	}
	Py_DECREF(fast);
	*n = (int)len;
	return 0;
}

/* The interface's data pointer and read-only flag. */
static int cai_data(PyObject *data, uint64_t *ptr, bool *readonly)
{
	int ro;

	if (!data || !PyTuple_Check(data) || PyTuple_GET_SIZE(data) != 2) {
		PyErr_SetString(PyExc_TypeError,
		                "__cuda_array_interface__: "
		                "data must be (pointer, read_only)");
		return -1;
	}
	*ptr = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(data, 0));
	if (PyErr_Occurred()) {
		if (!PyErr_ExceptionMatches(PyExc_OverflowError))
			return -1;
		PyErr_Clear();
		hmrpy_raise(-FI_EINVAL, "__cuda_array_interface__: the data "
		                        "pointer is negative or too large");
		return -1;
	}
	ro = PyObject_IsTrue(PyTuple_GET_ITEM(data, 1));
	if (ro < 0)
		return -1;
	*readonly = ro;
	return 0;
}

/* __cuda_array_interface__ versions 0 to 3 (v3 adds the stream, which
 * hmr leaves alone: registering reads no data; the caller orders the
 * peer's access after the producer's work). */
static int cai_parse(PyObject *d, struct hmrpy_export *e)
{
	const char *what = "__cuda_array_interface__";
	int64_t shape[HMRPY_MAX_DIMS], strides[HMRPY_MAX_DIMS], size, lo;
	PyObject *v, *s, *t;
	int ndim, nstrides;
	uint64_t ptr, len;
	long version;

	if (!PyDict_Check(d)) {
		PyErr_Format(PyExc_TypeError, "%s must be a dict", what);
		return -1;
	}
	v = PyDict_GetItemString(d, "version");
	version = v ? PyLong_AsLong(v) : 0;
	if (version == -1 && PyErr_Occurred())
		return -1;
	if (version < 0 || version > 3) {
		hmrpy_raise(-FI_EOPNOTSUPP, "%s version %ld (hmr reads 0-3)",
		            what, version);
		return -1;
	}
	v = PyDict_GetItemString(d, "mask");
	if (v && v != Py_None) {
		hmrpy_raise(-FI_EOPNOTSUPP, "%s: masked arrays", what);
		return -1;
	}
	s = PyDict_GetItemString(d, "shape");
	t = PyDict_GetItemString(d, "typestr");
	if (!s || !t) {
		PyErr_Format(PyExc_TypeError, "%s lacks shape or typestr",
		             what);
		return -1;
	}
	if (int_tuple(s, "__cuda_array_interface__ shape", shape, &ndim) ||
	    typestr_size(t, &size) ||
	    cai_data(PyDict_GetItemString(d, "data"), &ptr, &e->readonly))
		return -1;
	v = PyDict_GetItemString(d, "strides");
	if (v && v != Py_None) {
		if (int_tuple(v, "__cuda_array_interface__ strides", strides,
		              &nstrides))
			return -1;
		if (nstrides != ndim) {
			hmrpy_raise(-FI_EINVAL,
			            "%s: %d strides for %d "
			            "dimensions",
			            what, nstrides, ndim);
			return -1;
		}
	}
	if (hmrpy_span(what, ndim, shape, v && v != Py_None ? strides : NULL, 1,
	               size, &lo, &len))
		return -1;
	/* The interface names no device: hmr asks the memory. */
	e->iface_known = true;
	e->iface = FI_HMEM_CUDA;
	return hmrpy_place(e, what, ptr, 0, lo, len);
}

static int from_cai(PyObject *obj, struct hmrpy_export *e, int *ret)
{
	PyObject *d = hmrpy_optional_attr(obj, str_cai);

	*ret = -1;
	if (!d)
		return PyErr_Occurred() ? 1 : 0;
	e->source = HMRPY_SRC_CAI;
	*ret = cai_parse(d, e);
	Py_DECREF(d);
	return 1;
}

static int from_buffer(PyObject *obj, struct hmrpy_export *e)
{
	int64_t shape[HMRPY_MAX_DIMS], strides[HMRPY_MAX_DIMS], lo;
	Py_buffer *v = &e->view;
	uint64_t len;
	int i;

	e->source = HMRPY_SRC_BUFFER;
	/* Strides, no suboffsets: an indirect (PIL-style) buffer is not
	 * one range, and its exporter refuses this request. */
	if (PyObject_GetBuffer(obj, v, PyBUF_STRIDES))
		return -1;
	e->has_view = true;
	e->readonly = v->readonly;
	if (v->ndim > HMRPY_MAX_DIMS) {
		hmrpy_raise(-FI_EINVAL, "buffer protocol: %d dimensions",
		            v->ndim);
		return -1;
	}
	for (i = 0; i < v->ndim; i++) {
		shape[i] = v->shape[i];
		strides[i] = v->strides ? v->strides[i] : 0;
	}
	if (hmrpy_span("buffer protocol", v->ndim, shape,
	               v->strides ? strides : NULL, 1, v->itemsize, &lo, &len))
		return -1;
	e->iface_known = e->device_known = true;
	e->iface = FI_HMEM_SYSTEM;
	return hmrpy_place(e, "buffer protocol", (uint64_t)(uintptr_t)v->buf, 0,
	                   lo, len);
}

/* (address, length): the caller vouches for the memory; iface= and
 * device= say what it is, or hmr finds out. */
static int from_address(PyObject *t, struct hmrpy_export *e)
{
	uint64_t addr;
	long long len;

	e->source = HMRPY_SRC_ADDRESS;
	if (PyTuple_GET_SIZE(t) != 2 || !PyLong_Check(PyTuple_GET_ITEM(t, 0)) ||
	    !PyLong_Check(PyTuple_GET_ITEM(t, 1))) {
		PyErr_SetString(PyExc_TypeError, "an address must be given as "
		                                 "(address, length), two ints");
		return -1;
	}
	addr = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(t, 0));
	if (PyErr_Occurred()) {
		PyErr_Clear();
		hmrpy_raise(-FI_EINVAL, "address: not in [0, 2**64)");
		return -1;
	}
	len = PyLong_AsLongLong(PyTuple_GET_ITEM(t, 1));
	if (len == -1 && PyErr_Occurred()) {
		PyErr_Clear();
		hmrpy_raise(-FI_EINVAL, "address: the length does not fit in "
		                        "64 bits");
		return -1;
	}
	if (len <= 0) {
		hmrpy_raise(-FI_EINVAL, "address: %s length (%lld)",
		            len ? "negative" : "zero", len);
		return -1;
	}
	return hmrpy_place(e, "address", addr, 0, 0, (uint64_t)len);
}

int hmrpy_export_get(PyObject *obj, struct hmrpy_export *e)
{
	int ret = -1;

	memset(e, 0, sizeof(*e));
	if (PyTuple_Check(obj))
		ret = from_address(obj, e);
	else if (!hmrpy_from_dlpack(obj, e, &ret) && !from_cai(obj, e, &ret)) {
		if (PyObject_CheckBuffer(obj))
			ret = from_buffer(obj, e);
		else
			PyErr_Format(PyExc_TypeError,
			             "%.200s exposes no "
			             "memory: hmr takes __dlpack__, "
			             "__cuda_array_interface__, the buffer "
			             "protocol or (address, length)",
			             Py_TYPE(obj)->tp_name);
	}
	if (ret)
		hmrpy_export_release(e);
	return ret;
}

/* Deleters and buffer releases may run Python code (a ctypes deleter, a
 * Python exporter): the exception being raised must survive them. */
void hmrpy_export_release(struct hmrpy_export *e)
{
	PyObject *type, *value, *tb;

	PyErr_Fetch(&type, &value, &tb);
	hmrpy_dlpack_free(e);
	if (e->has_view) {
		PyBuffer_Release(&e->view);
		e->has_view = false;
	}
	PyErr_Restore(type, value, tb);
}
