# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""PyTorch (Debian's python3-torch, CPU) tensors through DLPack."""
import pytest
import torch

import hmr


def span(t):
    """[lowest, highest + itemsize) of a tensor's elements, in bytes."""
    size = t.element_size()
    hi = sum((n - 1) * s for n, s in zip(t.shape, t.stride())) * size
    return t.data_ptr(), hi + size


def test_torch_tensor_registers_through_dlpack(domain):
    t = torch.arange(1000, dtype=torch.float32)
    with domain.register(t) as mr:
        assert mr.source == "DLPack" and mr.obj is t
        assert (mr.address, mr.length) == (t.data_ptr(), 4000)
        assert (mr.iface, mr.device) == ("system", 0)


def test_torch_slice_with_storage_offset_registers_its_own_bytes(domain):
    t = torch.arange(100, dtype=torch.float64)
    s = t[10:20]
    assert s.storage_offset() == 10
    with domain.register(s) as mr:
        assert mr.address == t.data_ptr() + 80 == s.data_ptr()
        assert mr.length == 80


def test_torch_strided_views_register_the_span_they_touch(domain):
    m = torch.arange(600, dtype=torch.float32).reshape(6, 10, 10)
    views = [m[::2], m[1:4, 2:5, ::3], m.transpose(0, 2), m[:, 3],
             m[2:, :, 7], torch.arange(40, dtype=torch.int16)[3::7],
             torch.arange(4.0).expand(5, 4)]
    for v in views:
        with domain.register(v) as mr:
            assert (mr.address, mr.length) == span(v), (v.shape, v.stride())


def test_torch_dtypes_register_whole_elements(domain):
    # (torch 1.13 exports no bool tensor through DLPack.)
    for dtype in (torch.int8, torch.float16, torch.bfloat16,
                  torch.int64, torch.complex64, torch.complex128):
        t = torch.zeros(7, dtype=dtype)
        with domain.register(t) as mr:
            assert mr.length == 7 * t.element_size(), dtype


def test_torch_empty_tensor_is_refused(domain):
    with pytest.raises(hmr.Error, match="empty"):
        domain.register(torch.zeros(4, 0))


def test_torch_tensor_access_view_sees_the_tensor(domain):
    t = torch.zeros(16, dtype=torch.int32)
    with domain.register(t[4:]) as mr:
        view = domain.access(mr.key, mr.address, 8).cast("i")
        view[1] = 42
        assert t[5].item() == 42
        view.release()


def test_torch_device_hint_must_match(domain):
    t = torch.zeros(16)
    for kw in ({"iface": "cuda"}, {"device": 1}, {"iface": hmr.IFACE_ZE}):
        with pytest.raises(hmr.Error, match="given, but") as e:
            domain.register(t, **kw)
        assert e.value.code == -hmr.FI_EINVAL
    with domain.register(t, iface="system", device=0) as mr:
        assert mr.iface == "system"
