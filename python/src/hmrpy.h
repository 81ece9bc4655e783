/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* hmrpy.h: what the extension's files share: objects, exports, errors. */
#ifndef HMRPY_H
#define HMRPY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdbool.h>
#include <stdint.h>

#include <hmr/hmr.h>

/*
 * Threads: every field below is read and written with the GIL held.  The
 * GIL is dropped only around hmr calls that may block (registration,
 * close, domain open, backend loading); before dropping it a caller marks
 * what it is using (HmrDomain.inflight, HmrMR.closing), so another thread
 * cannot close those objects underneath the call.
 */

/* How an object handed over its memory. */
enum hmrpy_source {
	HMRPY_SRC_DLPACK,
	HMRPY_SRC_CAI, /* __cuda_array_interface__ */
	HMRPY_SRC_BUFFER,
	HMRPY_SRC_ADDRESS, /* An (address, length) tuple. */
};

/*
 * An object's memory, and what holds it while hmr uses it: the DLPack
 * managed tensor (its deleter runs at release) or the buffer view.  Filled
 * in place by hmrpy_export_get and never moved: a Py_buffer belongs where
 * it was filled.
 */
struct hmrpy_export {
	enum hmrpy_source source;
	uint64_t addr;
	size_t len;
	/* What the object says the memory is.  iface_known 0: it does not
	 * say (an address without iface=); device_known 0: it names the
	 * interface only (__cuda_array_interface__). */
	bool iface_known;
	bool device_known;
	enum fi_hmem_iface iface;
	uint64_t device;
	uint64_t reg_flags; /* FI_HMEM_HOST_ALLOC for pinned host memory. */
	bool readonly;
	void *dl; /* struct hmrpy_dl_managed(_versioned) we own. */
	bool dl_versioned;
	bool has_view;
	Py_buffer view;
};

/* export.c: one object's memory; 0, or -1 with an exception set. */
int hmrpy_export_init(void);
int hmrpy_export_get(PyObject *obj, struct hmrpy_export *e);
void hmrpy_export_release(struct hmrpy_export *e);
const char *hmrpy_source_name(enum hmrpy_source s);
/* An attribute, or NULL without an exception when there is none. */
PyObject *hmrpy_optional_attr(PyObject *obj, PyObject *name);
/* [lo, lo + len) from the first element, from shape and strides (in
 * `unit` bytes; NULL: compact); hmr.Error on a lie or an overflow. */
int hmrpy_span(const char *what, int ndim, const int64_t *shape,
               const int64_t *strides, int64_t unit, int64_t itemsize,
               int64_t *lo, uint64_t *len);
/* e->addr and e->len from base + offset + lo, checked. */
int hmrpy_place(struct hmrpy_export *e, const char *what, uint64_t base,
                uint64_t offset, int64_t lo, uint64_t len);

/* dlpack.c: 1 when obj speaks DLPack (result in *ret), 0 if not. */
int hmrpy_dlpack_init(void);
int hmrpy_from_dlpack(PyObject *obj, struct hmrpy_export *e, int *ret);
void hmrpy_dlpack_free(struct hmrpy_export *e);

struct HmrMR;

/* A domain (python/src/domain.c). */
typedef struct {
	PyObject_HEAD struct fid_domain *fid; /* NULL once closed. */
	struct HmrMR *mrs; /* Its open MRs, newest first (hmrpy_mr_find). */
	enum hmr_domain_kind kind;
	uint64_t caps;
	uint64_t mr_mode;    /* The effective one. */
	Py_ssize_t live;     /* Python MRs open on it. */
	Py_ssize_t inflight; /* Calls running without the GIL. */
	PyObject *mapped;    /* set of keys from map_raw, unmapped at exit. */
} HmrDomain;

/* A memory region (python/src/mr.c). */
typedef struct HmrMR {
	PyObject_HEAD HmrDomain *domain; /* NULL once closed. */
	struct fid_mr *fid;
	PyObject *obj; /* The exporter, kept alive until close. */
	uint64_t key;
	uint64_t access;
	uint64_t flags;
	enum fi_hmem_iface iface;
	uint64_t device;
	bool closing;              /* fi_close is running without the GIL. */
	bool exported;             /* exp holds something to release. */
	Py_ssize_t views;          /* Live memoryviews from Domain.access. */
	struct HmrMR *prev, *next; /* The domain's list of open MRs. */
	struct hmrpy_export exp;
} HmrMR;

extern PyTypeObject HmrDomain_Type;
extern PyTypeObject HmrMR_Type;
extern PyTypeObject HmrView_Type;

/* mr.c */
PyObject *hmrpy_register(HmrDomain *d, PyObject *const *args, Py_ssize_t nargs,
                         PyObject *kwnames);
void hmrpy_mr_link(HmrMR *mr); /* Into its domain's list, once open. */
/* The domain's open MR with this key, or (key FI_KEY_NOTAVAIL) whose
 * host range holds [ptr, ptr + len); NULL if none. */
HmrMR *hmrpy_mr_find(HmrDomain *d, uint64_t key, uintptr_t ptr, size_t len);
PyObject *hmrpy_bench_c(PyObject *self, PyObject *args);

/* view.c */
PyObject *hmrpy_access(HmrDomain *d, PyObject *args, PyObject *kw);

/* module.c */
extern PyObject *hmrpy_error;
/* Raise hmr.Error(code) with "<what>: <hmr_strerror> (code)"; NULL. */
PyObject *hmrpy_raise(int code, const char *fmt, ...);
/* An iface argument: None (-1), a name ("cuda") or a number. */
int hmrpy_iface_arg(PyObject *o, int *iface);
PyObject *hmrpy_query(PyObject *self, PyObject *arg);
PyObject *hmrpy_info(PyObject *self, PyObject *unused);
int hmrpy_module_types(PyObject *m);
/* hmr_hmem_query without the GIL; fills why on failure. */
int hmrpy_mem_query(uint64_t addr, size_t len, struct hmr_hmem_info *info);

#endif /* HMRPY_H */
