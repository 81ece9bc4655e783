/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* init.c: the hmr._hmr module's table, types and constants. */
#include "hmrpy.h"

static PyMethodDef module_methods[] = {
        {"query", hmrpy_query, METH_O,
         "query(obj_or_address) -> MemInfo\n\n"
         "What memory an object (any that Domain.register takes) or an "
         "address is: iface, device, base, size, buffer_id, flags "
         "(hmr_hmem_query)."},
        {"info", hmrpy_info, METH_NOARGS,
         "info() -> dict\n\n"
         "What hmr_info prints: the version, each domain kind (available, "
         "or why not, and its mr_mode) and each memory interface (present, "
         "or why not)."},
        {"_bench_c", hmrpy_bench_c, METH_VARARGS,
         "_bench_c(domain, address, length, access, count) -> (reg_ns, "
         "close_ns)\n\nThe same registrations from C, for the benchmark."},
        {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
        PyModuleDef_HEAD_INIT,
        .m_name = "hmr._hmr",
        .m_doc = "hmr's C extension; import hmr instead.",
        .m_size = -1,
        .m_methods = module_methods,
};

struct constant {
	const char *name;
	unsigned long long value;
};

/* The fi_mr(3) values Python callers pass, by their libfabric names less
 * the FI_ prefix; error codes keep theirs (e.code == -hmr.FI_EBUSY). */
static const struct constant constants[] = {
        {"READ", FI_READ},
        {"WRITE", FI_WRITE},
        {"RECV", FI_RECV},
        {"SEND", FI_SEND},
        {"REMOTE_READ", FI_REMOTE_READ},
        {"REMOTE_WRITE", FI_REMOTE_WRITE},
        {"COLLECTIVE", FI_COLLECTIVE},
        {"MSG", FI_MSG},
        {"RMA", FI_RMA},
        {"TAGGED", FI_TAGGED},
        {"ATOMIC", FI_ATOMIC},
        {"HMEM", FI_HMEM},
        {"RMA_EVENT", FI_RMA_EVENT},
        {"RMA_PMEM", FI_RMA_PMEM},
        {"MR_DMABUF", FI_MR_DMABUF},
        {"MR_SINGLE_USE", FI_MR_SINGLE_USE},
        {"HMEM_HOST_ALLOC", FI_HMEM_HOST_ALLOC},
        {"HMEM_DEVICE_ONLY", FI_HMEM_DEVICE_ONLY},
        {"MR_BASIC", FI_MR_BASIC},
        {"MR_SCALABLE", FI_MR_SCALABLE},
        {"MR_LOCAL", FI_MR_LOCAL},
        {"MR_RAW", FI_MR_RAW},
        {"MR_VIRT_ADDR", FI_MR_VIRT_ADDR},
        {"MR_ALLOCATED", FI_MR_ALLOCATED},
        {"MR_PROV_KEY", FI_MR_PROV_KEY},
        {"MR_MMU_NOTIFY", FI_MR_MMU_NOTIFY},
        {"MR_RMA_EVENT", FI_MR_RMA_EVENT},
        {"MR_ENDPOINT", FI_MR_ENDPOINT},
        {"MR_HMEM", FI_MR_HMEM},
        {"MR_COLLECTIVE", FI_MR_COLLECTIVE},
        {"MR_MODE_DEFAULT", HMR_MR_MODE_DEFAULT},
        {"DOMAIN_EMULATE_MR_MODE", HMR_DOMAIN_EMULATE_MR_MODE},
        {"DOMAIN_RELAXED_ORDERING", HMR_DOMAIN_RELAXED_ORDERING},
        {"MEM_DEVICE_ONLY", HMR_HMEM_DEVICE_ONLY},
        {"MEM_HOST_ALLOC", HMR_HMEM_HOST_ALLOC},
        {"MEM_MANAGED", HMR_HMEM_MANAGED},
        {"IFACE_SYSTEM", FI_HMEM_SYSTEM},
        {"IFACE_CUDA", FI_HMEM_CUDA},
        {"IFACE_ROCR", FI_HMEM_ROCR},
        {"IFACE_ZE", FI_HMEM_ZE},
        {"IFACE_NEURON", FI_HMEM_NEURON},
        {"IFACE_SYNAPSEAI", FI_HMEM_SYNAPSEAI},
        {"KEY_NOTAVAIL", FI_KEY_NOTAVAIL},
        {"FI_EPERM", FI_EPERM},
        {"FI_EBADF", FI_EBADF},
        {"FI_ENOMEM", FI_ENOMEM},
        {"FI_EACCES", FI_EACCES},
        {"FI_EFAULT", FI_EFAULT},
        {"FI_EBUSY", FI_EBUSY},
        {"FI_ENODEV", FI_ENODEV},
        {"FI_EINVAL", FI_EINVAL},
        {"FI_ENOSYS", FI_ENOSYS},
        {"FI_ENODATA", FI_ENODATA},
        {"FI_EOVERFLOW", FI_EOVERFLOW},
        {"FI_EOPNOTSUPP", FI_EOPNOTSUPP},
        {"FI_EKEYREJECTED", FI_EKEYREJECTED},
        {"FI_ETOOSMALL", FI_ETOOSMALL},
        {"FI_EOPBADSTATE", FI_EOPBADSTATE},
        {"FI_EBADFLAGS", FI_EBADFLAGS},
        {"FI_ENOKEY", FI_ENOKEY},
};

static int add_constants(PyObject *m)
{
	size_t i;

	for (i = 0; i < sizeof(constants) / sizeof(constants[0]); i++) {
		PyObject *v = PyLong_FromUnsignedLongLong(constants[i].value);

		if (!v || PyModule_AddObject(m, constants[i].name, v)) {
			Py_XDECREF(v);
			return -1;
		}
	}
	return PyModule_AddStringConstant(m, "__version__", HMR_VERSION_STRING);
}

PyMODINIT_FUNC PyInit__hmr(void)
{
	PyObject *m;

	if (PyType_Ready(&HmrDomain_Type) || PyType_Ready(&HmrMR_Type) ||
	    PyType_Ready(&HmrView_Type) || hmrpy_export_init())
		return NULL;
	m = PyModule_Create(&module_def);
	if (!m)
		return NULL;
	if (hmrpy_module_types(m) ||
	    PyModule_AddObjectRef(m, "Domain", (PyObject *)&HmrDomain_Type) ||
	    PyModule_AddObjectRef(m, "MR", (PyObject *)&HmrMR_Type) ||
	    add_constants(m)) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
