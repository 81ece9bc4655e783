# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""simcuda.py: memory of the project's simulated CUDA driver, for Python.

hmr loads the simulator named by HMR_CUDA_LIBRARY (tests/sim/cuda); the
tests open the same library with ctypes to allocate memory as CuPy or
PyTorch would, and wrap it in objects that speak __cuda_array_interface__
and DLPack (kDLCUDA), as a GPU framework's arrays do.  Device memory is
not mapped for the CPU: only the driver's copies reach it.
"""
import ctypes
import os

import dlfake

u64 = ctypes.c_uint64


class Driver:
    def __init__(self):
        path = os.environ.get("HMR_CUDA_LIBRARY")
        if not path:
            raise RuntimeError("HMR_CUDA_LIBRARY is not set")
        lib = ctypes.CDLL(path)
        self.lib = lib
        self._check(lib.cuInit(0), "cuInit")
        self.ctx = {}
        self.use(0)

    @staticmethod
    def _check(ret, what):
        if ret:
            raise RuntimeError(f"{what}: CUresult {ret}")

    def use(self, device):
        """Make device's primary context current, as a framework would."""
        if device not in self.ctx:
            ctx = ctypes.c_void_p()
            self._check(self.lib.cuDevicePrimaryCtxRetain(
                ctypes.byref(ctx), device), "cuDevicePrimaryCtxRetain")
            self.ctx[device] = ctx
        self._check(self.lib.cuCtxSetCurrent(self.ctx[device]),
                    "cuCtxSetCurrent")

    def alloc(self, size, device=0):
        self.use(device)
        p = u64()
        self._check(self.lib.cuMemAlloc_v2(ctypes.byref(p),
                                           ctypes.c_size_t(size)),
                    "cuMemAlloc")
        return p.value

    def alloc_host(self, size):
        p = ctypes.c_void_p()
        self._check(self.lib.cuMemAllocHost_v2(ctypes.byref(p),
                                               ctypes.c_size_t(size)),
                    "cuMemAllocHost")
        return p.value

    def alloc_managed(self, size, device=0):
        self.use(device)
        p = u64()
        self._check(self.lib.cuMemAllocManaged(ctypes.byref(p),
                                               ctypes.c_size_t(size), 1),
                    "cuMemAllocManaged")
        return p.value

    def free(self, ptr):
        self._check(self.lib.cuMemFree_v2(u64(ptr)), "cuMemFree")

    def free_host(self, ptr):
        self._check(self.lib.cuMemFreeHost(ctypes.c_void_p(ptr)),
                    "cuMemFreeHost")

    def htod(self, ptr, data):
        self._check(self.lib.cuMemcpyHtoD_v2(u64(ptr), data,
                                             ctypes.c_size_t(len(data))),
                    "cuMemcpyHtoD")

    def dtoh(self, ptr, size):
        buf = ctypes.create_string_buffer(size)
        self._check(self.lib.cuMemcpyDtoH_v2(buf, u64(ptr),
                                             ctypes.c_size_t(size)),
                    "cuMemcpyDtoH")
        return buf.raw


class Memory:
    """Bytes of simulated CUDA memory, freed by free() (or at exit).

    kind: "device" (cuMemAlloc), "host" (cuMemAllocHost) or "managed"
    (cuMemAllocManaged).
    """

    def __init__(self, driver, size, device=0, kind="device"):
        self.driver, self.size, self.device, self.kind = \
            driver, size, device, kind
        if kind == "device":
            self.ptr = driver.alloc(size, device)
        elif kind == "host":
            self.ptr = driver.alloc_host(size)
        else:
            self.ptr = driver.alloc_managed(size, device)

    def write(self, data):
        self.driver.htod(self.ptr, data)

    def read(self, size=None):
        return self.driver.dtoh(self.ptr, self.size if size is None else size)

    def free(self):
        if self.ptr:
            if self.kind == "host":
                self.driver.free_host(self.ptr)
            else:
                self.driver.free(self.ptr)
            self.ptr = 0


class CAIArray(Memory):
    """Speaks __cuda_array_interface__ (version 2 or 3), as CuPy does."""

    def __init__(self, driver, size, device=0, kind="device", version=3,
                 readonly=False, extra=None):
        super().__init__(driver, size, device, kind)
        self.version, self.readonly, self.extra = version, readonly, extra

    @property
    def __cuda_array_interface__(self):
        cai = {"shape": (self.size,), "typestr": "|u1",
               "data": (self.ptr, self.readonly), "version": self.version,
               "strides": None}
        if self.version >= 3:
            cai["stream"] = 1
        cai.update(self.extra or {})
        return cai


class DLArray(Memory):
    """Speaks DLPack (kDLCUDA, kDLCUDAHost, kDLCUDAManaged), as PyTorch."""

    def __dlpack_device__(self):
        kind = {"device": dlfake.KDL_CUDA, "host": dlfake.KDL_CUDA_HOST,
                "managed": dlfake.KDL_CUDA_MANAGED}[self.kind]
        return (kind, 0 if self.kind == "host" else self.device)

    def __dlpack__(self, stream=None):
        self.last = dlfake.Tensor(self.ptr, [self.size],
                                  device=self.__dlpack_device__(), keep=self)
        return self.last.capsule()
