# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""Objects that lie, or DLPack that hmr cannot use: refused, never a crash,
and the deleter of every capsule hmr took runs exactly once."""
import ctypes
import random
import re

import numpy as np
import pytest

import dlfake
import hmr


def host(n=256):
    a = np.zeros(n, dtype=np.uint8)
    return a, a.ctypes.data


def refused(domain, obj, msg, code=hmr.FI_EINVAL):
    with pytest.raises(hmr.Error, match=msg) as e:
        domain.register(obj)
    assert e.value.code == -code


def test_dlpack_negative_shape_is_refused(domain):
    a, p = host()
    t = dlfake.Tensor(p, [4, -3], keep=a)
    refused(domain, t, "negative length")
    assert t.deleted == 1


def test_dlpack_device_that_disagrees_with_the_capsule_is_refused(domain):
    a, p = host()
    t = dlfake.Tensor(p, [16], device=(dlfake.KDL_CPU, 0),
                      declared=(dlfake.KDL_CUDA, 0), keep=a)
    refused(domain, t, r"__dlpack_device__ says \(2, 0\)")
    assert t.deleted == 1


def test_dlpack_capsule_already_consumed_is_refused(domain):
    import torch  # pylint: disable=import-outside-toplevel
    import torch.utils.dlpack  # pylint: disable=import-outside-toplevel
    t = torch.arange(10.0)
    cap = t.__dlpack__()
    torch.utils.dlpack.from_dlpack(cap)  # consumes it
    refused(domain, dlfake.Returns(cap), "already consumed")


def test_dlpack_capsule_of_another_kind_is_refused(domain):
    new = ctypes.pythonapi.PyCapsule_New
    new.restype = ctypes.py_object
    new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    name = ctypes.create_string_buffer(b"not_a_tensor")
    refused(domain, dlfake.Returns(new(8, name, None)), "not a DLPack")

    class NotCapsule(dlfake.Returns):
        def __dlpack__(self, stream=None):
            return 42
    with pytest.raises(TypeError, match="capsule"):
        domain.register(NotCapsule(None))

    class BadDevice(dlfake.Returns):
        def __dlpack_device__(self):
            return "cpu"
    with pytest.raises(TypeError, match="device_type"):
        domain.register(BadDevice(None))


def test_dlpack_shapes_that_overflow_are_refused(domain):
    a, p = host()
    for shape, strides, msg in (([2**40, 2**40], None, "overflow"),
                                ([3, 2**62], [1, 2**62], "overflow"),
                                ([8], [2**61], "overflow")):
        t = dlfake.Tensor(p, shape, strides, bits=32, keep=a)
        refused(domain, t, msg, hmr.FI_EOVERFLOW)
        assert t.deleted == 1


def test_dlpack_range_that_wraps_or_is_null_is_refused(domain):
    t = dlfake.Tensor(2**64 - 16, [16], bits=16)
    refused(domain, t, "wraps")
    t = dlfake.Tensor(0, [16])
    refused(domain, t, "NULL")
    a, p = host()
    t = dlfake.Tensor(p, [4], byte_offset=2**64 - p + 8, keep=a)
    refused(domain, t, "wraps")
    assert t.deleted == 1


def test_dlpack_unknown_device_type_is_refused(domain):
    a, p = host()
    t = dlfake.Tensor(p, [8], device=(dlfake.KDL_VULKAN, 0), keep=a)
    refused(domain, t, "device type 7", hmr.FI_EOPNOTSUPP)
    t = dlfake.Tensor(p, [8], device=(dlfake.KDL_CPU, -1), keep=a)
    refused(domain, t, "device id -1")
    assert t.deleted == 1


def test_dlpack_future_major_version_is_refused(domain):
    a, p = host()
    t = dlfake.Tensor(p, [8], versioned=True, major=2, keep=a)
    refused(domain, t, "DLPack 2.0", hmr.FI_EOPNOTSUPP)
    assert t.deleted == 1


def test_dlpack_versioned_capsule_says_read_only(domain):
    a, p = host()
    t = dlfake.Tensor(p, [8, 4], versioned=True, flags=dlfake.READ_ONLY,
                      keep=a)
    refused(domain, t, "read-only", hmr.FI_EACCES)
    assert t.deleted == 1
    with domain.register(t, access=hmr.REMOTE_READ) as mr:
        assert (mr.address, mr.length) == (p, 32)
        assert t.deleted == 1
    assert t.deleted == 2


def test_dlpack_legacy_and_versioned_producers_both_register(domain):
    a, p = host()
    for t in (dlfake.Legacy(p, [16], keep=a),
              dlfake.Tensor(p, [16], versioned=True, keep=a)):
        for _ in range(3):  # the legacy type is remembered after one try
            with domain.register(t) as mr:
                assert mr.length == 16
        assert t.deleted == 3


def test_dlpack_packed_elements_register_whole_bytes(domain):
    a, p = host()
    t = dlfake.Tensor(p, [3, 5], bits=4, keep=a)  # 60 bits: 8 bytes
    with domain.register(t) as mr:
        assert mr.length == 8
    t = dlfake.Tensor(p, [3, 5], strides=[10, 2], bits=4, keep=a)
    refused(domain, t, "strided view of 4-bit")


def test_dlpack_byte_offset_moves_the_range(domain):
    a, p = host()
    t = dlfake.Tensor(p, [4], bits=32, byte_offset=64, keep=a)
    with domain.register(t) as mr:
        assert (mr.address, mr.length) == (p + 64, 16)
    t = dlfake.Tensor(p + 64, [4], strides=[-2], bits=32, keep=a)
    with domain.register(t) as mr:  # reaches 24 bytes below data
        assert (mr.address, mr.length) == (p + 40, 28)


def test_dlpack_producer_errors_propagate(domain):
    import torch  # pylint: disable=import-outside-toplevel
    t = torch.zeros(4, requires_grad=True)
    with pytest.raises(RuntimeError, match="gradient"):
        domain.register(t)
    with domain.register(t.detach()) as mr:
        assert mr.length == 16


def test_buffer_with_a_negative_length_is_refused(domain):
    class Lies:
        __cuda_array_interface__ = {"shape": (-4,), "typestr": "|u1",
                                    "data": (4096, False), "version": 3}
    refused(domain, Lies(), "negative length")


def test_device_claim_without_its_backend_says_why(domain):
    a, p = host()
    for device, iface in ((dlfake.KDL_ROCM, "rocr"), (dlfake.KDL_ROCM_HOST,
                          "rocr"), (dlfake.KDL_ONEAPI, "ze")):
        t = dlfake.Tensor(p, [64], device=(device, 1), keep=a)
        # Absent here: Debian's real ROCr finds no /dev/kfd, and no
        # Level Zero driver finds a GPU (the reason is the backend's).
        why = hmr.info()["interfaces"][iface]["reason"]
        refused(domain, t, f"says {iface} memory, but hmr's {iface} "
                f"backend is absent: {re.escape(why)}", hmr.FI_ENOSYS)
        assert t.deleted == 1


def expected_span(shape, strides, bits):
    """The byte range DLPack's rules give, relative to data + byte_offset:
    (lo, length), or None when the tensor must be refused."""
    if bits == 0 or any(n <= 0 for n in shape):
        return None
    count = 1
    for n in shape:
        count *= n
    if bits % 8:  # packed: only a compact tensor has a byte range
        expect = 1
        for n, s in reversed(list(zip(shape, strides or []))):
            if n != 1 and s != expect:
                return None
            expect *= n
        return 0, (count * bits + 7) // 8
    size = bits // 8
    if strides is None:
        return 0, count * size
    lo = sum(min(0, (n - 1) * s) for n, s in zip(shape, strides))
    hi = sum(max(0, (n - 1) * s) for n, s in zip(shape, strides))
    return lo * size, (hi - lo) * size + size


def test_random_dlpack_tensors_register_their_span_or_are_refused(domain):
    """Any shape, strides, offset and element size: the span, or hmr.Error."""
    rng = random.Random(12345)
    a, p = host(1 << 16)
    data = p + 32768
    for _ in range(3000):
        ndim = rng.randrange(0, 5)
        shape = [rng.choice([0, 1, 2, 3, 7, -1, 2**31, 2**62])
                 if rng.random() < 0.1 else rng.randrange(1, 6)
                 for _ in range(ndim)]
        strides = None if rng.random() < 0.3 else [
            rng.randrange(-40, 41) if rng.random() < 0.95
            else rng.choice([2**40, -2**62]) for _ in range(ndim)]
        bits = rng.choice([8, 16, 32, 64, 4, 1, 0, 128])
        offset = rng.choice([0, 0, 64, 4096, 2**64 - 1])
        t = dlfake.Tensor(data, shape, strides, bits=bits,
                          byte_offset=offset, keep=a)
        want = expected_span(shape, strides, bits)
        try:
            mr = domain.register(t, access=hmr.REMOTE_READ)
        except hmr.Error as e:
            start = data + offset + want[0] if want else 0
            sane = want and 0 < start and start + want[1] < 2**64 and \
                want[1] < 2**62
            # Refused: it lies, or its range cannot exist or be mapped.
            assert not sane or e.code in (-hmr.FI_EFAULT,
                                          -hmr.FI_EOVERFLOW), (e, want)
        else:
            assert want, (shape, strides, bits)
            assert (mr.address, mr.length) == (data + offset + want[0],
                                               want[1]), (shape, strides)
            mr.close()
        assert t.deleted == 1
