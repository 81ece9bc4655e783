/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* module.c: the hmr._hmr module: errors, constants, query() and info(). */
#include "hmrpy.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define IFACES (FI_HMEM_SYNAPSEAI + 1)

PyObject *hmrpy_error;
static PyTypeObject *meminfo_type;

PyObject *hmrpy_raise(int code, const char *fmt, ...)
{
	PyObject *exc, *v;
	char what[512], msg[700];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(msg, sizeof(msg), "%s: %s (%d)", what, hmr_strerror(code),
	         code);
	/* "replace": a reason from the system (a dlerror path) may not be
	 * UTF-8, and must not turn into a UnicodeDecodeError. */
	v = PyUnicode_DecodeUTF8(msg, (Py_ssize_t)strlen(msg), "replace");
	exc = v ? PyObject_CallOneArg(hmrpy_error, v) : NULL;
	Py_XDECREF(v);
	if (!exc)
		return NULL;
	v = PyLong_FromLong(code);
	if (!v || PyObject_SetAttrString(exc, "code", v))
		goto fail;
	Py_DECREF(v);
	v = PyUnicode_FromString(hmr_strerror(code));
	if (!v || PyObject_SetAttrString(exc, "strerror", v))
		goto fail;
	Py_DECREF(v);
	PyErr_SetObject(hmrpy_error, exc);
	Py_DECREF(exc);
	return NULL;
fail:
	Py_XDECREF(v);
	Py_DECREF(exc);
	return NULL;
}

int hmrpy_iface_arg(PyObject *o, int *iface)
{
	long v;
	int i;

	*iface = -1;
	if (o == Py_None)
		return 0;
	if (PyUnicode_Check(o)) {
		const char *s = PyUnicode_AsUTF8(o);

		if (!s)
			return -1;
		for (i = 0; i < IFACES; i++) {
			if (!strcmp(s, hmr_hmem_iface_name(i))) {
				*iface = i;
				return 0;
			}
		}
		PyErr_Format(PyExc_ValueError, "unknown iface %R", o);
		return -1;
	}
	v = PyLong_AsLong(o);
	if (v == -1 && PyErr_Occurred())
		return -1;
	if (v < 0 || v >= IFACES) {
		PyErr_Format(PyExc_ValueError, "unknown iface %ld", v);
		return -1;
	}
	*iface = (int)v;
	return 0;
}

int hmrpy_mem_query(uint64_t addr, size_t len, struct hmr_hmem_info *info)
{
	PyThreadState *ts;
	int ret;

	/* The first query may load the backends (dlopen, driver init). */
	ts = PyEval_SaveThread();
	ret = hmr_hmem_query((const void *)(uintptr_t)addr, len, info);
	PyEval_RestoreThread(ts);
	return ret;
}

static PyObject *meminfo(const struct hmr_hmem_info *info)
{
	PyObject *r = PyStructSequence_New(meminfo_type);

	if (!r)
		return NULL;
	PyStructSequence_SET_ITEM(
	        r, 0, PyUnicode_FromString(hmr_hmem_iface_name(info->iface)));
	PyStructSequence_SET_ITEM(r, 1,
	                          PyLong_FromUnsignedLongLong(info->device));
	PyStructSequence_SET_ITEM(r, 2,
	                          PyLong_FromUnsignedLongLong(info->base));
	PyStructSequence_SET_ITEM(r, 3,
	                          PyLong_FromUnsignedLongLong(info->size));
	PyStructSequence_SET_ITEM(r, 4,
	                          PyLong_FromUnsignedLongLong(info->buffer_id));
	PyStructSequence_SET_ITEM(r, 5, PyLong_FromUnsignedLong(info->flags));
	if (PyErr_Occurred()) {
		Py_DECREF(r);
		return NULL;
	}
	return r;
}

PyObject *hmrpy_query(PyObject *self, PyObject *arg)
{
	struct hmrpy_export e;
	struct hmr_hmem_info info;
	uint64_t addr;
	size_t len = 1;
	int ret;

	(void)self;
	if (PyLong_Check(arg)) {
		addr = PyLong_AsUnsignedLongLong(arg);
		if (PyErr_Occurred())
			return NULL;
	} else {
		if (hmrpy_export_get(arg, &e))
			return NULL;
		addr = e.addr;
		len = e.len;
		hmrpy_export_release(&e);
	}
	ret = hmrpy_mem_query(addr, len, &info);
	if (ret)
		return hmrpy_raise(ret, "query [%#llx, +%zu)",
		                   (unsigned long long)addr, len);
	return meminfo(&info);
}

/* The mr_mode bits by name, as hmr_info prints them. */
static PyObject *mode_names(uint64_t mode)
{
	static const struct {
		uint64_t bit;
		const char *name;
	} bits[] = {
	        {FI_MR_LOCAL, "LOCAL"},
	        {FI_MR_RAW, "RAW"},
	        {FI_MR_VIRT_ADDR, "VIRT_ADDR"},
	        {FI_MR_ALLOCATED, "ALLOCATED"},
	        {FI_MR_PROV_KEY, "PROV_KEY"},
	        {FI_MR_MMU_NOTIFY, "MMU_NOTIFY"},
	        {FI_MR_RMA_EVENT, "RMA_EVENT"},
	        {FI_MR_ENDPOINT, "ENDPOINT"},
	        {FI_MR_HMEM, "HMEM"},
	        {FI_MR_COLLECTIVE, "COLLECTIVE"},
	};
	PyObject *l = PyList_New(0), *s;
	size_t i;

	if (!l)
		return NULL;
	for (i = 0; i < sizeof(bits) / sizeof(bits[0]); i++) {
		if (mode == FI_MR_BASIC ? i > 0 : !(mode & bits[i].bit))
			continue;
		s = PyUnicode_FromString(mode == FI_MR_BASIC ? "BASIC"
		                                             : bits[i].name);
		if (!s || PyList_Append(l, s)) {
			Py_XDECREF(s);
			Py_DECREF(l);
			return NULL;
		}
		Py_DECREF(s);
	}
	return l;
}

/* One domain kind: probed, then opened as hmr_info opens it. */
static PyObject *domain_info(enum hmr_domain_kind kind)
{
	PyThreadState *ts;
	struct hmr_domain_attr attr = HMR_DOMAIN_ATTR_INIT;
	struct fid_domain *d = NULL;
	uint64_t mode = 0;
	char why[256] = "";
	int probe, ret = 0;

	attr.kind = kind;
	ts = PyEval_SaveThread();
	probe = hmr_domain_probe(kind, why, sizeof(why));
	if (!probe)
		ret = hmr_domain_open(&attr, &d);
	if (d) {
		hmr_domain_mr_mode(d, &mode);
		fi_close(&d->fid);
	}
	PyEval_RestoreThread(ts);
	if (probe)
		return Py_BuildValue("{s:O,s:s,s:i}", "available", Py_False,
		                     "reason", why, "code", probe);
	if (ret)
		return Py_BuildValue("{s:O,s:s,s:i}", "available", Py_False,
		                     "reason", hmr_strerror(ret), "code", ret);
	return Py_BuildValue("{s:O,s:O,s:N}", "available", Py_True, "reason",
	                     Py_None, "mr_mode", mode_names(mode));
}

static int add_interfaces(PyObject *result)
{
	PyThreadState *ts;
	PyObject *all = PyDict_New(), *one;
	char why[256];
	int i, ret;

	if (!all || PyDict_SetItemString(result, "interfaces", all))
		goto fail;
	for (i = 0; i < IFACES; i++) {
		why[0] = '\0';
		ts = PyEval_SaveThread();
		ret = hmr_hmem_status((enum fi_hmem_iface)i, why, sizeof(why));
		PyEval_RestoreThread(ts);
		one = Py_BuildValue("{s:O,s:z,s:i}", "present",
		                    ret ? Py_False : Py_True, "reason",
		                    ret ? why : NULL, "code", ret);
		if (!one ||
		    PyDict_SetItemString(all, hmr_hmem_iface_name(i), one)) {
			Py_XDECREF(one);
			goto fail;
		}
		Py_DECREF(one);
	}
	Py_DECREF(all);
	return 0;
fail:
	Py_XDECREF(all);
	return -1;
}

PyObject *hmrpy_info(PyObject *self, PyObject *unused)
{
	static const enum hmr_domain_kind kinds[] = {HMR_DOMAIN_SOFTWARE,
	                                             HMR_DOMAIN_VERBS};
	unsigned v = hmr_version();
	PyObject *r, *domains, *one;
	size_t i;

	(void)self;
	(void)unused;
	r = Py_BuildValue("{s:s,s:(III),s:(III),s:{}}", "version",
	                  hmr_version_string(), "library_version", v >> 16,
	                  (v >> 8) & 0xff, v & 0xff, "header_version",
	                  HMR_VERSION_MAJOR, HMR_VERSION_MINOR,
	                  HMR_VERSION_PATCH, "domains");
	if (!r)
		return NULL;
	domains = PyDict_GetItemString(r, "domains");
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		one = domain_info(kinds[i]);
		if (!one ||
		    PyDict_SetItemString(domains,
		                         hmr_domain_kind_name(kinds[i]), one)) {
			Py_XDECREF(one);
			Py_DECREF(r);
			return NULL;
		}
		Py_DECREF(one);
	}
	if (add_interfaces(r)) {
		Py_DECREF(r);
		return NULL;
	}
	return r;
}

static PyStructSequence_Field meminfo_fields[] = {
        {"iface", "the memory interface: 'system', 'cuda', ..."},
        {"device", "the device (0 for host memory)"},
        {"base", "the allocation holding the address (0 if unknown)"},
        {"size", "the allocation's length"},
        {"buffer_id", "changes when the address is freed and reused"},
        {"flags", "MEM_DEVICE_ONLY | MEM_HOST_ALLOC | MEM_MANAGED"},
        {NULL, NULL},
};

static PyStructSequence_Desc meminfo_desc = {
        "hmr.MemInfo",
        "What memory an address is (hmr_hmem_query).",
        meminfo_fields,
        6,
};

/* hmr.Error and hmr.MemInfo. */
int hmrpy_module_types(PyObject *m)
{
	PyObject *dict = Py_BuildValue("{s:O,s:O}", "code", Py_None, "strerror",
	                               Py_None);

	if (!dict)
		return -1;
	hmrpy_error = PyErr_NewExceptionWithDoc(
	        "hmr.Error",
	        "An hmr call failed.  code: the negative -FI_E* value; "
	        "strerror: hmr_strerror's message for it.",
	        NULL, dict);
	Py_DECREF(dict);
	if (!hmrpy_error || PyModule_AddObjectRef(m, "Error", hmrpy_error))
		return -1;
	meminfo_type = PyStructSequence_NewType(&meminfo_desc);
	if (!meminfo_type ||
	    PyModule_AddObjectRef(m, "MemInfo", (PyObject *)meminfo_type))
		return -1;
	return 0;
}
