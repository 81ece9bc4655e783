# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""Simulated CUDA memory (tests/sim/cuda) through __cuda_array_interface__
and DLPack: iface and device detected, hints checked, the dma-buf path."""
import numpy as np
import pytest

import dlfake
import hmr
from conftest import fds
from test_lifetime import CYCLES, heap
from simcuda import CAIArray, DLArray, Memory

MIB = 1 << 20


def test_cai_object_registers_with_iface_and_device_detected(domain, cuda):
    for device, version in ((0, 3), (1, 3), (1, 2)):
        arr = CAIArray(cuda, MIB, device=device, version=version)
        with domain.register(arr) as mr:
            assert mr.source == "__cuda_array_interface__"
            assert (mr.iface, mr.device) == ("cuda", device)
            assert (mr.address, mr.length) == (arr.ptr, MIB)
            assert mr.obj is arr
        arr.free()


def test_dlpack_kdlcuda_object_registers_as_cuda(domain, cuda):
    arr = DLArray(cuda, 4 * MIB, device=1)
    with domain.register(arr) as mr:
        assert (mr.source, mr.iface, mr.device) == ("DLPack", "cuda", 1)
        assert arr.last.deleted == 0
    assert arr.last.deleted == 1
    arr.free()


def test_wrong_device_hint_is_refused(domain, cuda):
    arr = CAIArray(cuda, MIB, device=0)
    # The object names no device: hmr's CUDA backend refuses the hint.
    with pytest.raises(hmr.Error, match="hmr finds cuda memory of device 0"
                       ) as e:
        domain.register(arr, device=1)
    assert e.value.code == -hmr.FI_EINVAL
    with domain.register(arr, device=0) as mr:
        assert mr.device == 0
    dl = DLArray(cuda, MIB, device=0)
    with pytest.raises(hmr.Error, match="device=1 given, but"):
        domain.register(dl, device=1)
    assert dl.last.deleted == 1
    for obj in (arr, dl):
        with pytest.raises(hmr.Error, match="iface=system given"):
            domain.register(obj, iface="system")
    arr.free()
    dl.free()


def test_dmabuf_registration_reaches_the_device_bytes(domain, cuda):
    arr = CAIArray(cuda, 2 * MIB, device=0)
    pattern = bytes(range(256)) * 16
    arr.write(pattern)
    before = fds()
    with domain.register(arr, flags=hmr.MR_DMABUF) as mr:
        assert mr.flags & hmr.MR_DMABUF and mr.iface == "cuda"
        # The software domain maps the dma-buf: a peer reads the device
        # memory through the key, and writes land in it.
        view = domain.access(mr.key, mr.address, len(pattern), write=False)
        assert bytes(view) == pattern
        view.release()
        view = domain.access(mr.key, mr.address + 100, 4)
        view[:] = b"HMR!"
        view.release()
        assert arr.read(104)[100:] == b"HMR!"
    assert fds() == before
    arr.free()


def test_dmabuf_refused_where_the_device_cannot_export(domain, cuda):
    # HMR_SIM_CUDA_DMABUF=1,0 (CTest): device 1 has no dma-buf.
    arr = CAIArray(cuda, MIB, device=1)
    with pytest.raises(hmr.Error, match="dma-buf export") as e:
        domain.register(arr, flags=hmr.MR_DMABUF)
    assert e.value.code == -hmr.FI_EOPNOTSUPP
    arr.free()


def test_device_memory_gives_no_host_view(domain, cuda):
    arr = CAIArray(cuda, MIB)
    with domain.register(arr) as mr:
        with pytest.raises(hmr.Error, match="cannot address") as e:
            domain.access(mr.key, mr.address, 8, write=False)
        assert e.value.code == -hmr.FI_EOPNOTSUPP
    arr.free()


def test_pinned_and_managed_memory_register_and_give_views(domain, cuda):
    pinned = DLArray(cuda, MIB, kind="host")
    managed = DLArray(cuda, MIB, device=1, kind="managed")
    with domain.register(pinned) as mr:
        assert mr.iface == "cuda" and mr.flags & hmr.HMEM_HOST_ALLOC
        view = domain.access(mr.key, mr.address, 4)
        view[:] = b"pin!"
        view.release()
    with domain.register(managed) as mr:
        assert (mr.iface, mr.device) == ("cuda", 1)
        view = domain.access(mr.key, mr.address, 4, write=False)
        assert bytes(view) == bytes(4)
        view.release()
    pinned.free()
    managed.free()


def test_query_tells_cuda_memory_and_its_buffer_id(cuda):
    arr = CAIArray(cuda, 3 * MIB, device=1)
    q = hmr.query(arr)
    assert (q.iface, q.device, q.base, q.size) == ("cuda", 1, arr.ptr,
                                                   3 * MIB)
    assert q.flags == hmr.MEM_DEVICE_ONLY and q.buffer_id
    assert hmr.query(arr.ptr + 5) == q
    ptr, first = arr.ptr, q.buffer_id
    arr.free()
    again = CAIArray(cuda, 3 * MIB, device=1)
    assert again.ptr == ptr and hmr.query(again).buffer_id != first
    again.free()


def test_domain_without_hmem_refuses_device_memory(cuda):
    arr = CAIArray(cuda, MIB)
    with hmr.Domain(caps=0) as d:
        with pytest.raises(hmr.Error, match="HMEM capability") as e:
            d.register(arr)
        assert e.value.code == -hmr.FI_EOPNOTSUPP
        with d.register(np.zeros(8)) as mr:
            assert mr.iface == "system"
    arr.free()


def test_host_memory_claiming_cuda_is_refused(domain, cuda):
    a = np.zeros(4096, dtype=np.uint8)
    t = dlfake.Tensor(a.ctypes.data, [4096], device=(dlfake.KDL_CUDA, 0),
                      keep=a)
    with pytest.raises(hmr.Error, match="hmr finds system memory") as e:
        domain.register(t)
    assert e.value.code == -hmr.FI_EINVAL and t.deleted == 1
    with pytest.raises(hmr.Error, match="hmr finds system"):
        domain.register((a.ctypes.data, 4096), iface="cuda")


def test_device_memory_claiming_cpu_is_refused(domain, cuda):
    mem = Memory(cuda, MIB)
    t = dlfake.Tensor(mem.ptr, [MIB], device=(dlfake.KDL_CPU, 0), keep=mem)
    with pytest.raises(hmr.Error, match="says system memory, but hmr finds "
                       "cuda memory of device 0") as e:
        domain.register(t)
    assert e.value.code == -hmr.FI_EINVAL and t.deleted == 1
    mem.free()


def test_device_address_and_length_register_as_cuda(domain, cuda):
    mem = Memory(cuda, MIB, device=1)
    with domain.register((mem.ptr + 4096, 8192)) as mr:
        assert (mr.iface, mr.device, mr.obj) == ("cuda", 1, None)
    mem.free()


def test_cai_that_hmr_cannot_use_is_refused(domain, cuda):
    cases = [({"mask": (0, False)}, "masked", hmr.FI_EOPNOTSUPP),
             ({"version": 4}, "version 4", hmr.FI_EOPNOTSUPP),
             ({"typestr": "<f"}, "typestr", hmr.FI_EINVAL),
             ({"strides": (1, 1)}, "2 strides for 1", hmr.FI_EINVAL),
             ({"data": (-8, False)}, "negative", hmr.FI_EINVAL)]
    for extra, msg, code in cases:
        arr = CAIArray(cuda, 4096, extra=extra)
        with pytest.raises(hmr.Error, match=msg) as e:
            domain.register(arr)
        assert e.value.code == -code
        arr.free()
    arr = CAIArray(cuda, 4096, readonly=True)
    with pytest.raises(hmr.Error, match="read-only"):
        domain.register(arr)
    with domain.register(arr, access=hmr.REMOTE_READ) as mr:
        assert mr.iface == "cuda"
    arr.free()


def test_dmabuf_cycles_leave_fds_and_memory_flat(domain, cuda):
    arr = CAIArray(cuda, 64 * 1024)
    for _ in range(1000):
        domain.register(arr, flags=hmr.MR_DMABUF).close()
    mem, nfd = heap(), fds()
    for _ in range(CYCLES):
        domain.register(arr, flags=hmr.MR_DMABUF).close()
    grown = heap() - mem
    assert fds() == nfd
    assert grown < 1 << 20, f"{grown} bytes after {CYCLES} cycles"
    arr.free()
