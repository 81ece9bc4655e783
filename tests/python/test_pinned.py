# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""Page-locked host memory of the CUDA runtime (cuMemAllocHost, what torch's
pin_memory=True and CuPy's pinned allocator give), from DLPack producers
that name it either way round and from NumPy: it registers as cuda memory
with HMEM_HOST_ALLOC (python/README.md says why), and plain host memory
that claims to be pinned is still refused."""
import ctypes

import numpy as np
import pytest

import dlfake
import hmr
from simcuda import Memory

MIB = 1 << 20
PINNED = (dlfake.KDL_CUDA_HOST, 0)
CPU = (dlfake.KDL_CPU, 0)


def assert_pinned(mr, memory, length=MIB):
    assert (mr.iface, mr.address, mr.length) == ("cuda", memory.ptr, length)
    assert mr.flags & hmr.HMEM_HOST_ALLOC


def test_dlpack_device_pinned_capsule_cpu_registers_as_pinned(domain, cuda):
    # torch 2.11's pinned tensor: __dlpack_device__ (3, 0), capsule kDLCPU.
    memory = Memory(cuda, MIB, kind="host")
    t = dlfake.Tensor(memory.ptr, [MIB], device=CPU, declared=PINNED,
                      keep=memory)
    with domain.register(t) as mr:
        assert mr.source == "DLPack"
        assert_pinned(mr, memory)
    memory.free()


def test_dlpack_capsule_pinned_device_cpu_registers_as_pinned(domain, cuda):
    memory = Memory(cuda, MIB, kind="host")
    t = dlfake.Tensor(memory.ptr, [MIB], device=PINNED, declared=CPU,
                      keep=memory, versioned=True)
    with domain.register(t) as mr:
        assert_pinned(mr, memory)
    memory.free()


def test_dlpack_pinned_both_ways_registers_as_pinned(domain, cuda):
    memory = Memory(cuda, MIB, kind="host")
    t = dlfake.Tensor(memory.ptr + 4096, [4096], device=PINNED, keep=memory)
    with domain.register(t) as mr:
        assert (mr.iface, mr.address) == ("cuda", memory.ptr + 4096)
        assert mr.flags & hmr.HMEM_HOST_ALLOC
        view = domain.access(mr.key, mr.address, 4)
        view[:] = b"pin!"
        view.release()
    assert ctypes.string_at(memory.ptr + 4096, 4) == b"pin!"
    memory.free()


def test_dlpack_pinned_claim_over_malloc_memory_is_refused(domain, cuda):
    # The claim is checked: plain host memory is not the runtime's.
    buf = np.zeros(MIB, dtype=np.uint8)
    t = dlfake.Tensor(buf.ctypes.data, [MIB], device=CPU, declared=PINNED,
                      keep=buf)
    with pytest.raises(hmr.Error, match="hmr finds system memory"):
        domain.register(t)


def test_dlpack_pinned_pair_with_device_memory_is_refused(domain, cuda):
    # Only host kinds pair with kDLCPU: kDLCUDA against kDLCPU still lies.
    memory = Memory(cuda, MIB)
    t = dlfake.Tensor(memory.ptr, [MIB], device=CPU,
                      declared=(dlfake.KDL_CUDA, 0), keep=memory)
    with pytest.raises(hmr.Error, match="__dlpack_device__ says"):
        domain.register(t)
    memory.free()


def numpy_over(memory, size):
    raw = (ctypes.c_uint8 * size).from_address(memory.ptr)
    return np.frombuffer(raw, dtype=np.uint8)


def test_numpy_over_cumemallochost_registers_as_pinned(domain, cuda):
    memory = Memory(cuda, MIB, kind="host")
    arr = numpy_over(memory, MIB)
    with domain.register(arr) as mr:
        assert mr.source == "DLPack" or mr.source == "buffer"
        assert_pinned(mr, memory)
    with domain.register(memoryview(arr)[4096:8192]) as mr:
        assert (mr.iface, mr.address) == ("cuda", memory.ptr + 4096)
        assert mr.flags & hmr.HMEM_HOST_ALLOC
    del arr
    memory.free()


def test_numpy_over_device_or_managed_memory_stays_refused(domain, cuda):
    # Managed memory is host-reachable here, but it is not a host
    # allocation: an object calling it system memory still lies.
    memory = Memory(cuda, MIB, device=1, kind="managed")
    arr = numpy_over(memory, MIB)
    with pytest.raises(hmr.Error, match="says system memory, but hmr finds"
                       " cuda memory"):
        domain.register(arr)
    del arr
    memory.free()


def test_pinned_address_tuple_registers_with_iface_system_hint(domain, cuda):
    memory = Memory(cuda, MIB, kind="host")
    with domain.register((memory.ptr, MIB), iface="system") as mr:
        assert_pinned(mr, memory)
    memory.free()
