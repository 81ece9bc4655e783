/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* view.c: Domain.access: a memoryview of the bytes a key reaches. */
#include "hmrpy.h"

/*
 * The memoryview's exporter is an HmrView that holds the MR: while any
 * view of its bytes exists, MR.close() raises (-FI_EBUSY), so the bytes
 * cannot be deregistered or freed under the view, the way a bytearray
 * refuses to resize while exported.  Only memory the CPU can address is
 * handed out: a view of device memory would fault in the interpreter.
 */
typedef struct {
	PyObject_HEAD HmrMR *mr;
	void *buf;
	Py_ssize_t len;
	int readonly;
} HmrView;

static int view_getbuffer(HmrView *v, Py_buffer *view, int flags)
{
	if (PyBuffer_FillInfo(view, (PyObject *)v, v->buf, v->len, v->readonly,
	                      flags))
		return -1;
	v->mr->views++;
	return 0;
}

static void view_releasebuffer(HmrView *v, Py_buffer *view)
{
	(void)view;
	v->mr->views--;
}

static void view_dealloc(HmrView *v)
{
	Py_XDECREF(v->mr);
	PyObject_Free(v);
}

static PyBufferProcs view_as_buffer = {
        .bf_getbuffer = (getbufferproc)view_getbuffer,
        .bf_releasebuffer = (releasebufferproc)view_releasebuffer,
};

PyTypeObject HmrView_Type = {
        PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hmr._View",
        .tp_basicsize = sizeof(HmrView),
        .tp_flags = Py_TPFLAGS_DEFAULT,
        .tp_doc = "The exporter behind a memoryview from Domain.access.",
        .tp_dealloc = (destructor)view_dealloc,
        .tp_as_buffer = &view_as_buffer,
};

/* Can the CPU touch this MR's bytes?  Host memory, pinned or managed
 * memory, and a software domain's mapping of a dma-buf. */
static int host_addressable(HmrMR *mr)
{
	struct hmr_hmem_info info;

	if (mr->iface == FI_HMEM_SYSTEM || (mr->flags & FI_MR_DMABUF))
		return 1;
	if (hmrpy_mem_query(mr->exp.addr, mr->exp.len, &info))
		return 0;
	return info.iface == FI_HMEM_SYSTEM ||
	       (info.flags & (HMR_HMEM_HOST_ALLOC | HMR_HMEM_MANAGED));
}

static PyObject *not_addressable(HmrMR *mr)
{
	return hmrpy_raise(-FI_EOPNOTSUPP,
	                   "access: the key names %s memory "
	                   "of device %llu, which the CPU cannot address",
	                   hmr_hmem_iface_name(mr->iface),
	                   (unsigned long long)mr->device);
}

PyObject *hmrpy_access(HmrDomain *d, PyObject *args, PyObject *kw)
{
	static char *kwlist[] = {"key", "addr", "length", "write", NULL};
	unsigned long long key, addr;
	Py_ssize_t len;
	int write = 1, ret;
	HmrMR *mr;
	HmrView *v;
	void *ptr;
	PyObject *mv;

	if (!PyArg_ParseTupleAndKeywords(args, kw, "KKn|p", kwlist, &key, &addr,
	                                 &len, &write))
		return NULL;
	if (len <= 0)
		return hmrpy_raise(-FI_EINVAL, "access: length %zd", len);
	/* Before hmr_mr_access, which uses up a single-use key. */
	mr = key == FI_KEY_NOTAVAIL ? NULL : hmrpy_mr_find(d, key, 0, 0);
	if (mr && !host_addressable(mr))
		return not_addressable(mr);
	ret = hmr_mr_access(d->fid, key, addr, (size_t)len,
	                    write ? FI_REMOTE_WRITE : FI_REMOTE_READ, &ptr);
	if (ret)
		return hmrpy_raise(ret, "access key %#llx [%#llx, +%zd) for %s",
		                   key, addr, len, write ? "write" : "read");
	if (!mr) {
		/* A key only hmr knows (MR_RAW): the MR holding the bytes. */
		mr = hmrpy_mr_find(d, FI_KEY_NOTAVAIL, (uintptr_t)ptr,
		                   (size_t)len);
		if (!mr)
			return hmrpy_raise(
			        -FI_EOPNOTSUPP,
			        "access key %#llx: "
			        "no open MR of this domain holds the "
			        "bytes, so no view can keep them",
			        key);
		if (!host_addressable(mr))
			return not_addressable(mr);
	}
	if (mr->closing)
		return hmrpy_raise(-FI_EBADF, "access: the MR is being closed");
	v = PyObject_New(HmrView, &HmrView_Type);
	if (!v)
		return NULL;
	v->mr = (HmrMR *)Py_NewRef(mr);
	v->buf = ptr;
	v->len = len;
	v->readonly = !write;
	mv = PyMemoryView_FromObject((PyObject *)v);
	Py_DECREF(v);
	return mv;
}
