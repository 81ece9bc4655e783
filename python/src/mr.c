/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* mr.c: hmr.MR: keys, raw keys, close, and the exporter's lifetime. */
#include "hmrpy.h"

#include <stdio.h>

void hmrpy_mr_link(HmrMR *mr)
{
	HmrDomain *d = mr->domain;

	mr->prev = NULL;
	mr->next = d->mrs;
	if (d->mrs)
		d->mrs->prev = mr;
	d->mrs = mr;
	d->live++;
}

static void mr_unlink(HmrMR *mr)
{
	HmrDomain *d = mr->domain;

	if (mr->prev)
		mr->prev->next = mr->next;
	else
		d->mrs = mr->next;
	if (mr->next)
		mr->next->prev = mr->prev;
	mr->prev = mr->next = NULL;
	d->live--;
}

HmrMR *hmrpy_mr_find(HmrDomain *d, uint64_t key, uintptr_t ptr, size_t len)
{
	HmrMR *mr;

	for (mr = d->mrs; mr; mr = mr->next) {
		if (key != FI_KEY_NOTAVAIL) {
			if (mr->key == key)
				return mr;
			continue;
		}
		/* A dma-buf MR's bytes are hmr's mapping, not exp.addr. */
		if (!(mr->flags & FI_MR_DMABUF) && ptr >= mr->exp.addr &&
		    len <= mr->exp.len &&
		    ptr - mr->exp.addr <= mr->exp.len - len)
			return mr;
	}
	return NULL;
}

/* After fi_close succeeded: let go of the object and the domain. */
static void mr_release(HmrMR *mr)
{
	mr->fid = NULL;
	mr_unlink(mr);
	if (mr->exported) {
		mr->exported = false;
		hmrpy_export_release(&mr->exp); /* DLPack's deleter here. */
	}
	Py_CLEAR(mr->obj);
	Py_CLEAR(mr->domain);
}

static int mr_check(HmrMR *mr)
{
	if (!mr->fid || mr->closing) {
		hmrpy_raise(-FI_EBADF, "the MR is %s",
		            mr->fid ? "being closed" : "closed");
		return -1;
	}
	return 0;
}

static PyObject *mr_close(HmrMR *mr, PyObject *unused)
{
	PyThreadState *ts;
	int ret;

	(void)unused;
	if (!mr->fid || mr->closing)
		Py_RETURN_NONE;
	if (mr->views)
		return hmrpy_raise(-FI_EBUSY,
		                   "close the MR: %zd memoryviews "
		                   "from Domain.access still use it",
		                   mr->views);
	mr->closing = true;
	ts = PyEval_SaveThread();
	ret = fi_close(&mr->fid->fid);
	PyEval_RestoreThread(ts);
	mr->closing = false;
	if (ret)
		return hmrpy_raise(ret, "close the MR");
	mr_release(mr);
	Py_RETURN_NONE;
}

/* Collection (and tp_clear): deregister before the memory can go.  -1
 * if hmr refused: the MR stays registered and keeps what it holds. */
static int mr_close_quietly(HmrMR *mr)
{
	if (!mr->fid)
		return 0;
	if (fi_close(&mr->fid->fid)) {
		PyErr_WarnEx(PyExc_ResourceWarning,
		             "hmr: an MR could not be "
		             "closed; its memory is kept",
		             1);
		PyErr_Clear();
		return -1;
	}
	mr_release(mr);
	return 0;
}

static int mr_traverse(HmrMR *mr, visitproc visit, void *arg)
{
	Py_VISIT(mr->obj);
	if (mr->exported && mr->exp.has_view)
		Py_VISIT(mr->exp.view.obj);
	return 0;
}

static int mr_clear(HmrMR *mr)
{
	mr_close_quietly(mr);
	return 0;
}

static void mr_dealloc(HmrMR *mr)
{
	PyObject_GC_UnTrack(mr);
	if (mr_close_quietly(mr)) {
		/* Leak the object, the export and the domain with the
		 * registration: freeing them would free registered memory. */
		mr_unlink(mr);
		PyObject_GC_Del(mr);
		return;
	}
	/* Never registered, or closed: nothing hmr uses remains. */
	if (mr->exported)
		hmrpy_export_release(&mr->exp);
	Py_CLEAR(mr->obj);
	Py_CLEAR(mr->domain);
	PyObject_GC_Del(mr);
}

static PyObject *mr_raw(HmrMR *mr, uint64_t *base)
{
	size_t size = 0;
	PyObject *raw;
	int ret;

	if (mr_check(mr))
		return NULL;
	ret = fi_mr_raw_attr(mr->fid, base, NULL, &size, 0);
	if (ret != -FI_ETOOSMALL)
		return hmrpy_raise(ret ? ret : -FI_EOTHER, "fi_mr_raw_attr");
	raw = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)size);
	if (!raw)
		return NULL;
	ret = fi_mr_raw_attr(mr->fid, base, (uint8_t *)PyBytes_AS_STRING(raw),
	                     &size, 0);
	if (ret) {
		Py_DECREF(raw);
		return hmrpy_raise(ret, "fi_mr_raw_attr");
	}
	return raw;
}

static PyObject *mr_raw_key(HmrMR *mr, PyObject *unused)
{
	uint64_t base;

	(void)unused;
	return mr_raw(mr, &base);
}

static PyObject *get_raw_base(HmrMR *mr, void *unused)
{
	uint64_t base;
	PyObject *raw = mr_raw(mr, &base);

	(void)unused;
	if (!raw)
		return NULL;
	Py_DECREF(raw);
	return PyLong_FromUnsignedLongLong(base);
}

static PyObject *get_key(HmrMR *mr, void *unused)
{
	(void)unused;
	return mr_check(mr) ? NULL : PyLong_FromUnsignedLongLong(mr->key);
}

static PyObject *get_desc(HmrMR *mr, void *unused)
{
	(void)unused;
	return mr_check(mr) ? NULL : PyLong_FromVoidPtr(fi_mr_desc(mr->fid));
}

/* Verbs domains: the lkey for a local ibv_sge (hmr.h: struct
 * hmr_verbs_desc); None on other domains, whose desc is no lkey. */
static PyObject *get_lkey(HmrMR *mr, void *unused)
{
	const struct hmr_verbs_desc *vd;

	(void)unused;
	if (mr_check(mr))
		return NULL;
	if (mr->domain->kind != HMR_DOMAIN_VERBS)
		Py_RETURN_NONE;
	vd = fi_mr_desc(mr->fid);
	return PyLong_FromUnsignedLong(vd->lkey);
}

static PyObject *get_fid(HmrMR *mr, void *unused)
{
	(void)unused;
	return mr_check(mr) ? NULL : PyLong_FromVoidPtr(mr->fid);
}

static PyObject *get_address(HmrMR *mr, void *unused)
{
	(void)unused;
	return PyLong_FromUnsignedLongLong(mr->exp.addr);
}

static PyObject *get_length(HmrMR *mr, void *unused)
{
	(void)unused;
	return PyLong_FromSize_t(mr->exp.len);
}

static PyObject *get_iface(HmrMR *mr, void *unused)
{
	(void)unused;
	return PyUnicode_FromString(hmr_hmem_iface_name(mr->iface));
}

static PyObject *get_device(HmrMR *mr, void *unused)
{
	(void)unused;
	return PyLong_FromUnsignedLongLong(mr->device);
}

static PyObject *get_access(HmrMR *mr, void *unused)
{
	(void)unused;
	return PyLong_FromUnsignedLongLong(mr->access);
}

static PyObject *get_flags(HmrMR *mr, void *unused)
{
	(void)unused;
	return PyLong_FromUnsignedLongLong(mr->flags);
}

static PyObject *get_source(HmrMR *mr, void *unused)
{
	(void)unused;
	return PyUnicode_FromString(hmrpy_source_name(mr->exp.source));
}

static PyObject *get_obj(HmrMR *mr, void *unused)
{
	(void)unused;
	return Py_NewRef(mr->obj ? mr->obj : Py_None);
}

static PyObject *get_closed(HmrMR *mr, void *unused)
{
	(void)unused;
	return PyBool_FromLong(!mr->fid);
}

static PyObject *mr_enter(PyObject *self, PyObject *unused)
{
	(void)unused;
	return Py_NewRef(self);
}

static PyObject *mr_exit(HmrMR *mr, PyObject *args)
{
	(void)args;
	return mr_close(mr, NULL);
}

static PyObject *mr_repr(HmrMR *mr)
{
	char s[200];

	if (!mr->fid)
		return PyUnicode_FromString("<hmr.MR closed>");
	snprintf(s, sizeof(s),
	         "<hmr.MR key %#llx: %s device %llu [%#llx, +%zu) "
	         "from %s>",
	         (unsigned long long)mr->key, hmr_hmem_iface_name(mr->iface),
	         (unsigned long long)mr->device,
	         (unsigned long long)mr->exp.addr, mr->exp.len,
	         hmrpy_source_name(mr->exp.source));
	return PyUnicode_FromString(s);
}

static PyMethodDef mr_methods[] = {
        {"close", (PyCFunction)mr_close, METH_NOARGS,
         "close()\n\nDeregister (fi_close) and let go of the object.  A "
         "second close does nothing."},
        {"raw_key", (PyCFunction)mr_raw_key, METH_NOARGS,
         "raw_key() -> bytes\n\nThe raw key (fi_mr_raw_attr), for a "
         "peer's Domain.map_raw(mr.raw_base, raw)."},
        {"__enter__", mr_enter, METH_NOARGS, NULL},
        {"__exit__", (PyCFunction)mr_exit, METH_VARARGS, NULL},
        {NULL, NULL, 0, NULL},
};

#define GETTER(name, doc)                                                      \
	{                                                                      \
#name, (getter)get_##name, NULL, doc, NULL                     \
	}
static PyGetSetDef mr_getset[] = {
        GETTER(key, "fi_mr_key (KEY_NOTAVAIL under MR_RAW)"),
        GETTER(desc, "fi_mr_desc as an int, for ctypes and cffi"),
        GETTER(lkey, "verbs: the lkey for a local ibv_sge (key is the "
                     "rkey); None on other domains"),
        GETTER(fid, "the struct fid_mr * as an int"),
        GETTER(raw_base, "the base address fi_mr_raw_attr returns"),
        GETTER(address, "the first byte registered"),
        GETTER(length, "how many bytes are registered"),
        GETTER(iface, "the memory interface: 'system', 'cuda', ..."),
        GETTER(device, "the device of that interface"),
        GETTER(access, "the access bits registered"),
        GETTER(flags, "the registration flags"),
        GETTER(source, "how the object gave its memory: 'DLPack', ..."),
        GETTER(obj, "the object registered (None once closed)"),
        GETTER(closed, "True once closed"),
        {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject HmrMR_Type = {
        PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hmr.MR",
        .tp_basicsize = sizeof(HmrMR),
        .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
        .tp_doc = "A registered memory region (Domain.register).  A "
                  "context manager; holds the registered object until "
                  "closed.",
        .tp_dealloc = (destructor)mr_dealloc,
        .tp_traverse = (traverseproc)mr_traverse,
        .tp_clear = (inquiry)mr_clear,
        .tp_repr = (reprfunc)mr_repr,
        .tp_methods = mr_methods,
        .tp_getset = mr_getset,
};
