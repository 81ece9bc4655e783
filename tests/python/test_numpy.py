# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""NumPy arrays through DLPack and the buffer protocol; read-only memory."""
import numpy as np
import pytest

import hmr


def span(a):
    """The bytes an array's elements touch: [lowest, highest + itemsize)."""
    lo = hi = 0
    for n, s in zip(a.shape, a.strides):
        (lo, hi) = (lo + (n - 1) * s, hi) if s < 0 else (lo, hi + (n - 1) * s)
    return a.ctypes.data + lo, hi - lo + a.itemsize


def test_numpy_array_registers_through_dlpack(domain):
    a = np.arange(1000, dtype=np.float32)
    with domain.register(a) as mr:
        assert mr.source == "DLPack"
        assert (mr.address, mr.length) == (a.ctypes.data, a.nbytes)
        assert (mr.iface, mr.device) == ("system", 0)
        assert mr.obj is a and mr.key != hmr.KEY_NOTAVAIL and mr.desc


def test_numpy_array_registers_through_buffer_protocol(domain):
    a = np.arange(1000, dtype=np.int64)
    with domain.register(memoryview(a)) as mr:
        assert mr.source == "buffer protocol"
        assert (mr.address, mr.length) == (a.ctypes.data, a.nbytes)


def test_numpy_strided_views_register_the_span_they_touch(domain):
    base = np.arange(4 * 6 * 5, dtype=np.float64).reshape(4, 6, 5)
    views = [base[::3], base[1:3, ::2, 1:4], base.T, base[:, 2, :],
             np.arange(100, dtype=np.int16)[7::9]]
    for v in views:
        for obj in (v, memoryview(v)):
            with domain.register(obj) as mr:
                assert (mr.address, mr.length) == span(v), v.strides


def test_numpy_negative_strides_register_from_the_lowest_byte(domain):
    a = np.arange(50, dtype=np.int32)
    for obj in (a[::-1], memoryview(a[::-2]), a.reshape(5, 10)[::-1, ::-1]):
        with domain.register(obj) as mr:
            v = obj.obj if isinstance(obj, memoryview) else obj
            assert (mr.address, mr.length) == span(v)
            assert mr.address >= a.ctypes.data
            assert mr.address + mr.length <= a.ctypes.data + a.nbytes


def test_numpy_zero_dimensional_array_registers_one_element(domain):
    a = np.array(3.5)
    with domain.register(a) as mr:
        assert (mr.address, mr.length) == (a.ctypes.data, 8)


def test_numpy_empty_array_is_refused(domain):
    for obj in (np.zeros(0), memoryview(np.zeros((3, 0)))):
        with pytest.raises(hmr.Error, match="empty") as e:
            domain.register(obj)
        assert e.value.code == -hmr.FI_EINVAL


def test_numpy_readonly_array_refuses_remote_write(domain):
    a = np.arange(100, dtype=np.uint8)
    a.setflags(write=False)
    # NumPy cannot say "read-only" through legacy DLPack: the buffer
    # protocol, which can, is used instead.
    with pytest.raises(hmr.Error, match="read-only") as e:
        domain.register(a)
    assert e.value.code == -hmr.FI_EACCES
    with domain.register(a, access=hmr.REMOTE_READ) as mr:
        assert mr.source == "buffer protocol"
        assert (mr.address, mr.length) == (a.ctypes.data, 100)


def test_bytes_are_read_only(domain):
    b = b"hmr" * 1000
    for access in (hmr.REMOTE_WRITE, hmr.READ, hmr.RECV,
                   hmr.REMOTE_READ | hmr.REMOTE_WRITE):
        with pytest.raises(hmr.Error) as e:
            domain.register(b, access=access)
        assert e.value.code == -hmr.FI_EACCES
    with domain.register(b, access=hmr.REMOTE_READ | hmr.WRITE) as mr:
        assert mr.length == len(b)
        view = domain.access(mr.key, mr.address, 3, write=False)
        assert bytes(view) == b"hmr" and view.readonly
        view.release()


def test_access_view_reads_and_writes_the_array(domain):
    a = np.zeros(256, dtype=np.uint8)
    with domain.register(a) as mr:
        view = domain.access(mr.key, mr.address + 16, 4)
        view[:] = b"\x01\x02\x03\x04"
        assert list(a[16:20]) == [1, 2, 3, 4]
        a[16] = 9
        assert view[0] == 9
        ro = domain.access(mr.key, mr.address, 8, write=False)
        assert ro.readonly
        with pytest.raises(TypeError):
            ro[0] = 1
        view.release()
        ro.release()


def test_access_outside_the_region_or_with_a_wrong_key_raises(domain):
    a = np.zeros(64, dtype=np.uint8)
    with domain.register(a, access=hmr.REMOTE_READ) as mr:
        key, addr = mr.key, mr.address
        cases = [((mr.key, mr.address + 60, 8), {}, hmr.FI_EFAULT),
                 ((mr.key ^ 1, mr.address, 8), {}, hmr.FI_ENOKEY),
                 ((mr.key, mr.address, 8), {"write": True}, hmr.FI_EACCES),
                 ((mr.key, mr.address, 0), {}, hmr.FI_EINVAL)]
        for args, kw, code in cases:
            kw.setdefault("write", False)
            with pytest.raises(hmr.Error) as e:
                domain.access(*args, **kw)
            assert e.value.code == -code, args
    with pytest.raises(hmr.Error) as e:  # closed: its key names nothing
        domain.access(key, addr, 8, write=False)
    assert e.value.code == -hmr.FI_ENOKEY
    with pytest.raises(hmr.Error) as e:
        mr.key
    assert e.value.code == -hmr.FI_EBADF


def test_mr_cannot_close_while_an_access_view_lives(domain):
    a = np.zeros(64, dtype=np.uint8)
    mr = domain.register(a)
    view = domain.access(mr.key, mr.address, 64)
    with pytest.raises(hmr.Error, match="memoryview") as e:
        mr.close()
    assert e.value.code == -hmr.FI_EBUSY and not mr.closed
    view.release()
    mr.close()
    assert mr.closed and mr.obj is None
