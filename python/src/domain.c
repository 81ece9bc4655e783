/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* domain.c: hmr.Domain over hmr_domain_open, raw keys and access views. */
#include "hmrpy.h"

#include <string.h>

/*
 * Python's default mr_mode for a software domain: hmr hands out the keys
 * (PROV_KEY: two registrations never collide on requested_key 0), peers
 * name virtual addresses, and a range of unmapped host memory is refused
 * (ALLOCATED: an (address, length) from Python can never produce a view
 * of unmapped memory).  Kept, not cleared, by EMULATE_MR_MODE.  A verbs
 * domain keeps what the NIC needs from C's default.
 */
#define HMRPY_SOFTWARE_MR_MODE                                                 \
	(FI_MR_PROV_KEY | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED)

static int domain_check(HmrDomain *d)
{
	if (!d->fid) {
		hmrpy_raise(-FI_EBADF, "the domain is closed");
		return -1;
	}
	return 0;
}

static int parse_kind(const char *kind, enum hmr_domain_kind *k)
{
	if (!strcmp(kind, "software"))
		*k = HMR_DOMAIN_SOFTWARE;
	else if (!strcmp(kind, "verbs"))
		*k = HMR_DOMAIN_VERBS;
	else {
		PyErr_Format(PyExc_ValueError,
		             "kind %s: \"software\" or "
		             "\"verbs\"",
		             kind);
		return -1;
	}
	return 0;
}

/* A u64 argument that may be None (then *v is left alone). */
static int u64_arg(PyObject *o, const char *name, uint64_t *v)
{
	if (!o || o == Py_None)
		return 0;
	*v = PyLong_AsUnsignedLongLong(o);
	if (*v == (uint64_t)-1 && PyErr_Occurred()) {
		PyErr_Format(PyExc_ValueError, "%s: an int in [0, 2**64)",
		             name);
		return -1;
	}
	return 0;
}

/* pd=: the caller's struct ibv_pd * as an int (verbs only; the caller
 * keeps the PD until the domain is closed, as hmr_domain_attr.pd says). */
static int pd_arg(PyObject *o, enum hmr_domain_kind kind, struct ibv_pd **pd)
{
	if (o == Py_None)
		return 0;
	if (kind != HMR_DOMAIN_VERBS) {
		PyErr_SetString(
		        PyExc_ValueError,
		        "pd: a protection domain is for kind=\"verbs\"");
		return -1;
	}
	if (!PyLong_Check(o)) {
		PyErr_Format(PyExc_TypeError,
		             "pd: a struct ibv_pd * as an int, not %.100s",
		             Py_TYPE(o)->tp_name);
		return -1;
	}
	*pd = PyLong_AsVoidPtr(o);
	if (!*pd && !PyErr_Occurred())
		PyErr_SetString(PyExc_ValueError, "pd: NULL");
	return *pd ? 0 : -1;
}

static int open_failed(enum hmr_domain_kind kind, int ret)
{
	char why[256] = "";

	if (hmr_domain_probe(kind, why, sizeof(why)) == 0)
		hmrpy_raise(ret, "hmr_domain_open(%s)",
		            hmr_domain_kind_name(kind));
	else
		hmrpy_raise(ret, "hmr_domain_open(%s): %s",
		            hmr_domain_kind_name(kind), why);
	return -1;
}

static int domain_init(HmrDomain *self, PyObject *args, PyObject *kw)
{
	PyThreadState *ts;
	static char *kwlist[] = {
	        "kind",        "nic",          "mr_mode",  "caps", "flags",
	        "mr_key_size", "mr_iov_limit", "auth_key", "pd",   NULL};
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	const char *kind = "software", *nic = NULL;
	PyObject *mode_o = Py_None, *caps_o = Py_None, *flags_o = Py_None;
	PyObject *pd_o = Py_None;
	Py_buffer auth = {0};
	struct fid_domain *fid = NULL;
	int ret;

	if (self->fid) {
		PyErr_SetString(PyExc_RuntimeError, "the domain is open");
		return -1;
	}
	if (!PyArg_ParseTupleAndKeywords(args, kw, "|szOOOnnz*O", kwlist, &kind,
	                                 &nic, &mode_o, &caps_o, &flags_o,
	                                 &attr.mr_key_size, &attr.mr_iov_limit,
	                                 &auth, &pd_o))
		return -1;
	attr.caps = FI_HMEM; /* Any tensor, wherever it lives. */
	attr.nic_name = nic;
	attr.auth_key = auth.buf;
	attr.auth_key_size = auth.buf ? (size_t)auth.len : 0;
	ret = parse_kind(kind, &attr.kind) ||
	      u64_arg(caps_o, "caps", &attr.caps) ||
	      u64_arg(flags_o, "flags", &attr.flags) ||
	      pd_arg(pd_o, attr.kind, &attr.pd);
	if (!ret && mode_o == Py_None && attr.kind == HMR_DOMAIN_SOFTWARE) {
		attr.mr_mode = HMRPY_SOFTWARE_MR_MODE;
		attr.flags |= HMR_DOMAIN_EMULATE_MR_MODE;
	}
	if (!ret)
		ret = u64_arg(mode_o, "mr_mode", &attr.mr_mode);
	if (!ret) {
		ts = PyEval_SaveThread();
		ret = hmr_domain_open(&attr, &fid);
		PyEval_RestoreThread(ts);
		if (ret)
			ret = open_failed(attr.kind, ret);
	}
	if (auth.obj)
		PyBuffer_Release(&auth);
	if (ret)
		return -1;
	self->fid = fid;
	self->kind = attr.kind;
	hmr_domain_mr_mode(fid, &self->mr_mode);
	hmr_domain_caps(fid, &self->caps);
	return 0;
}

/* Undo what map_raw left mapped, then close: at exit or collection. */
static void domain_dealloc(HmrDomain *self)
{
	PyObject *key, *count;
	Py_ssize_t pos = 0;
	long n;

	if (self->fid) {
		while (self->mapped &&
		       PyDict_Next(self->mapped, &pos, &key, &count)) {
			for (n = PyLong_AsLong(count); n > 0; n--)
				fi_mr_unmap_key(self->fid,
				                PyLong_AsUnsignedLongLong(key));
		}
		PyErr_Clear();
		fi_close(&self->fid->fid);
	}
	Py_XDECREF(self->mapped);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *domain_close(HmrDomain *self, PyObject *unused)
{
	PyThreadState *ts;
	struct fid_domain *fid = self->fid;
	int ret;

	(void)unused;
	if (!fid)
		Py_RETURN_NONE;
	if (self->inflight || self->live)
		return hmrpy_raise(-FI_EBUSY,
		                   "close the domain: %zd memory "
		                   "regions open, %zd calls running",
		                   self->live, self->inflight);
	self->fid = NULL; /* Other threads now see it closed. */
	ts = PyEval_SaveThread();
	ret = fi_close(&fid->fid);
	PyEval_RestoreThread(ts);
	if (ret) {
		self->fid = fid;
		return hmrpy_raise(ret, "close the domain (raw keys mapped "
		                        "with map_raw remain until unmap_key)");
	}
	Py_CLEAR(self->mapped);
	Py_RETURN_NONE;
}

static PyObject *domain_enter(PyObject *self, PyObject *unused)
{
	(void)unused;
	return Py_NewRef(self);
}

static PyObject *domain_exit(HmrDomain *self, PyObject *args)
{
	(void)args;
	return domain_close(self, NULL);
}

static PyObject *domain_register(HmrDomain *self, PyObject *const *args,
                                 Py_ssize_t nargs, PyObject *kwnames)
{
	return hmrpy_register(self, args, nargs, kwnames);
}

static PyObject *domain_map_raw(HmrDomain *self, PyObject *args)
{
	unsigned long long base;
	PyObject *n, *count;
	Py_buffer raw;
	uint64_t key;
	int ret;

	if (!PyArg_ParseTuple(args, "Ky*", &base, &raw))
		return NULL;
	ret = domain_check(self) ? 1
	                         : fi_mr_map_raw(self->fid, base, raw.buf,
	                                         (size_t)raw.len, &key, 0);
	PyBuffer_Release(&raw);
	if (ret)
		return ret == 1 ? NULL : hmrpy_raise(ret, "map_raw");
	if (!self->mapped && !(self->mapped = PyDict_New()))
		goto undo;
	n = PyLong_FromUnsignedLongLong(key);
	count = n ? PyDict_GetItemWithError(self->mapped, n) : NULL;
	if (!n || PyErr_Occurred())
		goto undo_n;
	count = PyLong_FromLong(count ? PyLong_AsLong(count) + 1 : 1);
	if (!count || PyDict_SetItem(self->mapped, n, count)) {
		Py_XDECREF(count);
		goto undo_n;
	}
	Py_DECREF(count);
	return n;
undo_n:
	Py_XDECREF(n);
undo:
	fi_mr_unmap_key(self->fid, key);
	return NULL;
}

static PyObject *domain_unmap_key(HmrDomain *self, PyObject *arg)
{
	PyObject *count;
	uint64_t key = 0;
	long left;
	int ret;

	if (u64_arg(arg, "key", &key) || domain_check(self))
		return NULL;
	ret = fi_mr_unmap_key(self->fid, key);
	if (ret)
		return hmrpy_raise(ret, "unmap_key %#llx",
		                   (unsigned long long)key);
	count = self->mapped ? PyDict_GetItemWithError(self->mapped, arg)
	                     : NULL;
	if (!count)
		Py_RETURN_NONE;
	left = PyLong_AsLong(count) - 1;
	if (left > 0) {
		count = PyLong_FromLong(left);
		ret = count ? PyDict_SetItem(self->mapped, arg, count) : -1;
		Py_XDECREF(count);
	} else {
		ret = PyDict_DelItem(self->mapped, arg);
	}
	if (ret)
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *domain_access(HmrDomain *self, PyObject *args, PyObject *kw)
{
	return domain_check(self) ? NULL : hmrpy_access(self, args, kw);
}

/* The verbs registration cache's counters (hmr_mr_cache_stats). */
static PyObject *domain_cache_stats(HmrDomain *self, PyObject *unused)
{
	struct hmr_mr_cache_stats st = HMR_MR_CACHE_STATS_INIT;
	int ret;

	(void)unused;
	if (domain_check(self))
		return NULL;
	ret = hmr_mr_cache_stats(self->fid, &st);
	if (ret)
		return hmrpy_raise(ret, "hmr_mr_cache_stats");
	return Py_BuildValue("{sKsKsKsKsKsKsnsnsnsOssss}", "hits",
	                     (unsigned long long)st.hits, "misses",
	                     (unsigned long long)st.misses, "evictions",
	                     (unsigned long long)st.evictions, "invalidations",
	                     (unsigned long long)st.invalidations, "merges",
	                     (unsigned long long)st.merges, "uncached",
	                     (unsigned long long)st.uncached, "entries",
	                     (Py_ssize_t)st.entries, "idle",
	                     (Py_ssize_t)st.idle, "bytes", (Py_ssize_t)st.bytes,
	                     "active", st.active ? Py_True : Py_False, "why",
	                     st.why, "monitor", st.monitor);
}

static PyObject *get_kind(HmrDomain *self, void *unused)
{
	(void)unused;
	return PyUnicode_FromString(hmr_domain_kind_name(self->kind));
}

static PyObject *get_mr_mode(HmrDomain *self, void *unused)
{
	(void)unused;
	return PyLong_FromUnsignedLongLong(self->mr_mode);
}

static PyObject *get_caps(HmrDomain *self, void *unused)
{
	(void)unused;
	return PyLong_FromUnsignedLongLong(self->caps);
}

static PyObject *get_closed(HmrDomain *self, void *unused)
{
	(void)unused;
	return PyBool_FromLong(!self->fid);
}

static PyObject *get_open_mrs(HmrDomain *self, void *unused)
{
	(void)unused;
	return PyLong_FromSsize_t(self->live);
}

static PyObject *get_fid(HmrDomain *self, void *unused)
{
	(void)unused;
	return PyLong_FromVoidPtr(self->fid);
}

static PyMethodDef domain_methods[] = {
        {"register", (PyCFunction)(void (*)(void))domain_register,
         METH_FASTCALL | METH_KEYWORDS,
         "register(obj, access=REMOTE_READ | REMOTE_WRITE, "
         "requested_key=None, iface=None, device=None, flags=0) -> MR\n\n"
         "Register an object's memory: DLPack (__dlpack__), "
         "__cuda_array_interface__, the buffer protocol, or an (address, "
         "length) tuple.  The memory type comes from the object and is "
         "checked against what hmr finds; iface= and device= must agree "
         "with it.  The MR keeps the object alive until it is closed."},
        {"access", (PyCFunction)(void (*)(void))domain_access,
         METH_VARARGS | METH_KEYWORDS,
         "access(key, addr, length, write=True) -> memoryview\n\n"
         "The target side of a software RMA (hmr_mr_access): the bytes a "
         "peer may reach through key, or hmr.Error.  The MR cannot be "
         "closed while the view is alive."},
        {"map_raw", (PyCFunction)domain_map_raw, METH_VARARGS,
         "map_raw(base, raw) -> int\n\nThe key for a peer's raw key "
         "(fi_mr_map_raw); give it back with unmap_key."},
        {"unmap_key", (PyCFunction)domain_unmap_key, METH_O,
         "unmap_key(key)\n\nForget a key from map_raw (fi_mr_unmap_key)."},
        {"cache_stats", (PyCFunction)domain_cache_stats, METH_NOARGS,
         "cache_stats() -> dict\n\nThe registration cache's counters "
         "(hmr_mr_cache_stats): hits, misses, evictions, invalidations, "
         "merges, uncached, entries, idle, bytes, active, why, monitor.  "
         "hmr.Error (-FI_ENOSYS) on a domain without a cache (software)."},
        {"close", (PyCFunction)domain_close, METH_NOARGS,
         "close()\n\nClose the domain; hmr.Error (-FI_EBUSY) while MRs "
         "or mapped raw keys remain."},
        {"__enter__", domain_enter, METH_NOARGS, NULL},
        {"__exit__", (PyCFunction)domain_exit, METH_VARARGS, NULL},
        {NULL, NULL, 0, NULL},
};

static PyGetSetDef domain_getset[] = {
        {"kind", (getter)get_kind, NULL, "\"software\" or \"verbs\"", NULL},
        {"mr_mode", (getter)get_mr_mode, NULL, "the effective mr_mode", NULL},
        {"caps", (getter)get_caps, NULL, "the domain's capabilities", NULL},
        {"closed", (getter)get_closed, NULL, "True once closed", NULL},
        {"open_mrs", (getter)get_open_mrs, NULL,
         "how many MRs of this domain are open", NULL},
        {"fid", (getter)get_fid, NULL,
         "the struct fid_domain * as an int, for ctypes and cffi", NULL},
        {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject HmrDomain_Type = {
        PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hmr.Domain",
        .tp_basicsize = sizeof(HmrDomain),
        .tp_flags = Py_TPFLAGS_DEFAULT,
        .tp_doc = "Domain(kind=\"software\", nic=None, mr_mode=None, "
                  "caps=None, flags=0, mr_key_size=0, mr_iov_limit=0, "
                  "auth_key=None, pd=None)\n\n"
                  "An hmr domain (hmr_domain_open).  caps defaults to "
                  "HMEM, so memory of any interface registers.  mr_mode "
                  "None: a software domain hands out keys, takes virtual "
                  "addresses and refuses unmapped memory (PROV_KEY | "
                  "VIRT_ADDR | ALLOCATED); a verbs domain takes C's "
                  "default.  A context manager; close() raises while MRs "
                  "are open, as fi_close returns -FI_EBUSY.  pd: a "
                  "verbs domain in the caller's protection domain (a "
                  "struct ibv_pd * as an int), so the caller's QPs can "
                  "use its keys.",
        .tp_new = PyType_GenericNew,
        .tp_init = (initproc)domain_init,
        .tp_dealloc = (destructor)domain_dealloc,
        .tp_methods = domain_methods,
        .tp_getset = domain_getset,
};
