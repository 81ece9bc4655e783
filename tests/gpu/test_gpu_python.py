# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""The Python package with torch, CuPy and JAX on a real GPU (lab/gpu.md):
pinned tensors, NumPy over pinned memory, CUDA tensors, and expandable
segments.  Run by scripts/gpu-check.sh with the GPU machine's Python; a
framework that is not installed there fails its case (the machine of
lab/gpu.md has all three)."""
import os
import subprocess
import sys
import textwrap

import numpy as np

import hmr

MIB = 1 << 20


def test_gpu_torch_pinned_tensor_registers_as_cuda_host_alloc():
    import torch
    t = torch.zeros(MIB, dtype=torch.uint8, pin_memory=True)
    with hmr.Domain() as d, d.register(t) as mr:
        assert (mr.iface, mr.address, mr.length) == ("cuda", t.data_ptr(),
                                                     MIB)
        assert mr.flags & hmr.HMEM_HOST_ALLOC


def test_gpu_numpy_over_cupy_pinned_memory_registers():
    import cupy
    mem = cupy.cuda.alloc_pinned_memory(MIB)
    arr = np.frombuffer(mem, dtype=np.uint8, count=MIB)
    with hmr.Domain() as d, d.register(arr) as mr:
        assert (mr.iface, mr.address) == ("cuda", arr.ctypes.data)
        assert mr.flags & hmr.HMEM_HOST_ALLOC


def test_gpu_torch_cuda_tensor_registers_with_its_device():
    import torch
    t = torch.arange(MIB, dtype=torch.uint8, device="cuda")
    with hmr.Domain() as d, d.register(t[4096:]) as mr:
        assert (mr.iface, mr.device) == ("cuda", t.device.index)
        assert (mr.address, mr.length) == (t.data_ptr() + 4096, MIB - 4096)


def test_gpu_cupy_and_jax_arrays_register():
    import cupy
    import jax.numpy as jnp
    c = cupy.zeros(MIB, dtype=cupy.uint8)
    j = jnp.zeros(MIB, dtype=jnp.uint8)
    with hmr.Domain() as d:
        for obj in (c, j):
            with d.register(obj) as mr:
                assert mr.iface == "cuda"
        

# In a child: PYTORCH_CUDA_ALLOC_CONF is read when torch starts.
EXPANDABLE = textwrap.dedent("""
    import hmr, torch
    a = torch.empty(12 << 20, dtype=torch.uint8, device="cuda")
    b = torch.empty(12 << 20, dtype=torch.uint8, device="cuda")
    for t in (a, b):
        q = hmr.query((t.data_ptr(), 4096))
        assert q.iface == "cuda", q
        # The chunk, not the 157 GiB reservation.
        assert q.size <= 1 << 30, q
        assert q.base <= t.data_ptr() < q.base + q.size, q
    with hmr.Domain() as d, d.register(b) as mr:
        assert mr.iface == "cuda"
    print("ok")
""")


def test_gpu_expandable_segment_tensors_are_their_chunks():
    env = dict(os.environ, PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True")
    out = subprocess.run([sys.executable, "-c", EXPANDABLE], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr


def test_gpu_query_of_device_memory_has_a_buffer_id():
    import torch
    t = torch.zeros(4096, dtype=torch.uint8, device="cuda")
    q = hmr.query((t.data_ptr(), 4096))
    assert q.iface == "cuda" and q.buffer_id != 0
