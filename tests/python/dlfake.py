# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""dlfake.py: DLPack capsules made with ctypes, saying whatever a test wants.

A real producer (NumPy, PyTorch) only ever tells the truth; these let the
tests hand hmr a capsule that lies (a negative shape, a device that
__dlpack_device__ contradicts, a DLPack version from the future) and count
how often hmr calls the deleter.
"""
import ctypes

KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_VULKAN = 1, 2, 3, 7
KDL_ROCM, KDL_ROCM_HOST, KDL_CUDA_MANAGED, KDL_ONEAPI = 10, 11, 13, 14
READ_ONLY = 1


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice),
                ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", DELETER)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", DELETER), ("flags", ctypes.c_uint64),
                ("dl_tensor", DLTensor)]


_new_capsule = ctypes.pythonapi.PyCapsule_New
_new_capsule.restype = ctypes.py_object
_new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
# PyCapsule keeps the name's pointer: these live as long as the module.
_NAMES = {False: ctypes.create_string_buffer(b"dltensor"),
          True: ctypes.create_string_buffer(b"dltensor_versioned")}


class Tensor:
    """One capsule's worth of DLPack, and the count of deleter calls.

    data: an address; shape and strides (in elements) as lists; bits per
    element; device (type, id) in the capsule, and `declared`, what
    __dlpack_device__ says (the same unless a test wants a liar).
    """

    def __init__(self, data, shape, strides=None, bits=8, device=(KDL_CPU, 0),
                 declared=None, byte_offset=0, versioned=False, flags=0,
                 major=1, keep=None):
        self.keep = keep  # whatever owns the memory at `data`
        self.declared = tuple(declared or device)
        self.deleted = 0
        self.versioned = versioned
        n = len(shape)
        self._shape = (ctypes.c_int64 * max(n, 1))(*shape)
        self._strides = (ctypes.c_int64 * max(n, 1))(*strides) \
            if strides is not None else None
        t = DLTensor()
        t.data = data
        t.device = DLDevice(*device)
        t.ndim = n
        t.dtype = DLDataType(1, bits, 1)
        t.shape = self._shape
        t.strides = self._strides
        t.byte_offset = byte_offset
        self._deleter = DELETER(self._delete)
        if versioned:
            m = DLManagedTensorVersioned()
            m.version = DLPackVersion(major, 0)
            m.flags = flags
        else:
            m = DLManagedTensor()
        m.dl_tensor = t
        m.deleter = self._deleter
        self._managed = m

    def _delete(self, _ptr):
        self.deleted += 1

    def capsule(self):
        return _new_capsule(ctypes.addressof(self._managed),
                            _NAMES[self.versioned], None)

    def __dlpack_device__(self):
        return self.declared

    def __dlpack__(self, stream=None, max_version=None):
        if self.versioned and max_version is None:
            raise BufferError("this producer speaks DLPack 1.x only")
        return self.capsule()


class Legacy(Tensor):
    """A producer from before DLPack 1.0: __dlpack__ takes no max_version."""

    def __dlpack__(self, stream=None):  # pylint: disable=arguments-differ
        return self.capsule()


class Returns:
    """An object whose __dlpack__ returns a given capsule (a used one)."""

    def __init__(self, capsule, device=(KDL_CPU, 0)):
        self.cap = capsule
        self.device = device

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None):
        return self.cap
