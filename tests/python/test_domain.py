# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""Domains, keys, raw keys, (address, length), errors, info() and query()."""
import ctypes
import json
import os
import re
import subprocess

import numpy as np
import pytest

import hmr


def test_domain_defaults_give_keys_virtual_addresses_and_hmem():
    with hmr.Domain() as d:
        assert d.kind == "software" and not d.closed
        assert d.mr_mode == hmr.MR_PROV_KEY | hmr.MR_VIRT_ADDR | \
            hmr.MR_ALLOCATED
        assert d.caps == hmr.HMEM
        a, b = np.zeros(8), np.zeros(8)
        with d.register(a) as m1, d.register(b) as m2:
            assert m1.key != m2.key
    assert d.closed


def test_domain_with_c_defaults_takes_requested_keys():
    with hmr.Domain(mr_mode=hmr.MR_MODE_DEFAULT, caps=0) as d:
        assert d.mr_mode == 0  # the software domain needs no bit
        a = np.zeros(8)
        with d.register(a, requested_key=77) as mr:
            assert mr.key == 77
            with pytest.raises(hmr.Error) as e:
                d.register(a, requested_key=77)
            assert e.value.code == -hmr.FI_ENOKEY


def test_domain_close_raises_while_mrs_are_open():
    d = hmr.Domain()
    mr = d.register(np.zeros(8))
    with pytest.raises(hmr.Error, match="1 memory regions open") as e:
        d.close()
    assert e.value.code == -hmr.FI_EBUSY and not d.closed
    mr.close()
    d.close()
    d.close()  # a second close does nothing
    with pytest.raises(hmr.Error) as e:
        d.register(np.zeros(8))
    assert e.value.code == -hmr.FI_EBADF


def test_domain_arguments_are_checked():
    with pytest.raises(ValueError):
        hmr.Domain(kind="tcp")
    with pytest.raises(ValueError):
        hmr.Domain(caps=-1)
    with pytest.raises(hmr.Error) as e:
        hmr.Domain(caps=1 << 63)
    assert e.value.code == -hmr.FI_EINVAL
    with pytest.raises(hmr.Error) as e:
        hmr.Domain(mr_key_size=9)
    assert e.value.code == -hmr.FI_EINVAL
    with hmr.Domain(mr_key_size=2, auth_key=b"secret") as d:
        with d.register(np.zeros(8)) as mr:
            assert mr.key < 1 << 16


def test_verbs_domain_opens_or_says_why_not():
    why = hmr.info()["domains"]["verbs"]
    if why["available"]:
        with hmr.Domain(kind="verbs") as d, d.register(np.zeros(4096)) as mr:
            assert mr.key == mr.key & 0xffffffff
        return
    with pytest.raises(hmr.Error) as e:
        hmr.Domain(kind="verbs")
    assert why["reason"] in str(e.value) and e.value.code == why["code"]


def test_software_domain_has_no_lkey_or_cache_stats(domain):
    with domain.register(np.zeros(8)) as mr:
        assert mr.lkey is None and isinstance(mr.key, int)
    with pytest.raises(hmr.Error) as e:
        mr.lkey  # closed
    assert e.value.code == -hmr.FI_EBADF
    with pytest.raises(hmr.Error) as e:
        domain.cache_stats()
    assert e.value.code == -hmr.FI_ENOSYS


def test_pd_argument_is_checked_before_the_domain_opens():
    with pytest.raises(ValueError, match="kind=.verbs"):
        hmr.Domain(pd=0x1000)  # software domains have no PD
    for bad in ("x", object(), 1.5):
        with pytest.raises(TypeError, match="struct ibv_pd"):
            hmr.Domain(kind="verbs", pd=bad)
    with pytest.raises(ValueError, match="NULL"):
        hmr.Domain(kind="verbs", pd=0)


def test_raw_key_maps_back_to_the_key(domain):
    a = np.arange(64, dtype=np.uint8)
    with domain.register(a) as mr:
        raw, base = mr.raw_key(), mr.raw_base
        assert isinstance(raw, bytes) and base == mr.address
        key = domain.map_raw(base, raw)
        assert key == mr.key
        view = domain.access(key, mr.address + 3, 1, write=False)
        assert view[0] == 3
        view.release()
        with pytest.raises(hmr.Error) as e:
            domain.map_raw(base, raw[:-1])
        assert e.value.code == -hmr.FI_EINVAL
    with pytest.raises(hmr.Error, match="raw keys") as e:
        domain.close()
    assert e.value.code == -hmr.FI_EBUSY
    domain.unmap_key(key)
    with pytest.raises(hmr.Error) as e:
        domain.unmap_key(key)
    assert e.value.code == -hmr.FI_ENOKEY


def test_raw_keys_under_mr_raw_name_the_region():
    with hmr.Domain(mr_mode=hmr.MR_RAW | hmr.MR_PROV_KEY | hmr.MR_VIRT_ADDR,
                    flags=hmr.DOMAIN_EMULATE_MR_MODE) as d:
        a = np.arange(16, dtype=np.uint8)
        with d.register(a) as mr:
            assert mr.key == hmr.KEY_NOTAVAIL
            key = d.map_raw(mr.raw_base, mr.raw_key())
            view = d.access(key, mr.address + 5, 2, write=False)
            assert bytes(view) == bytes([5, 6])
            view.release()
            d.unmap_key(key)


def test_domain_collected_with_mapped_keys_unmaps_them():
    d = hmr.Domain()
    mr = d.register(np.zeros(8))
    d.map_raw(mr.raw_base, mr.raw_key())
    d.map_raw(mr.raw_base, mr.raw_key())
    mr.close()
    del d  # unmaps both, then closes: no leak (checked by ASan)


def test_address_and_length_register_with_iface_detected(domain):
    buf = ctypes.create_string_buffer(4096)
    with domain.register((ctypes.addressof(buf), 4096)) as mr:
        assert (mr.address, mr.length) == (ctypes.addressof(buf), 4096)
        assert mr.iface == "system" and mr.obj is None
        assert mr.source == "address"


def test_address_arguments_that_lie_are_refused(domain):
    buf = ctypes.create_string_buffer(64)
    addr = ctypes.addressof(buf)
    cases = [((addr, -5), "negative length"), ((addr, 0), "zero length"),
             ((-1, 8), "address"), ((2**64 - 8, 8), "wraps"),
             ((addr, 2**64), "64 bits"), ((4096, 4096), "not mapped")]
    for obj, msg in cases:
        with pytest.raises(hmr.Error, match=msg):
            domain.register(obj)
    with pytest.raises(TypeError):
        domain.register((addr,))
    with pytest.raises(TypeError):
        domain.register((addr, "8"))


def test_unmapped_address_is_refused_without_mr_allocated():
    with hmr.Domain(mr_mode=0) as d:
        with pytest.raises(hmr.Error, match="not mapped") as e:
            d.register((4096, 4096))
        assert e.value.code == -hmr.FI_EFAULT


def test_registration_arguments_are_checked(domain):
    a = np.zeros(8)
    with pytest.raises(TypeError, match="exposes no memory"):
        domain.register(object())
    with pytest.raises(TypeError):
        domain.register(42)
    with pytest.raises(ValueError, match="iface"):
        domain.register(a, iface="tpu")
    with pytest.raises(ValueError):
        domain.register(a, access=-1)
    with pytest.raises(TypeError):
        domain.register(a, bogus=1)
    with pytest.raises(TypeError):
        domain.register()
    with pytest.raises(hmr.Error) as e:
        domain.register(a, flags=1 << 62)
    assert e.value.code == -hmr.FI_EBADFLAGS
    assert "-260" in str(e.value) and e.value.strerror in str(e.value)


def test_error_carries_code_and_strerror(domain):
    with pytest.raises(hmr.Error) as e:
        domain.access(12345, 0, 8)
    assert e.value.code == -hmr.FI_ENOKEY
    assert isinstance(e.value.strerror, str) and e.value.strerror
    assert issubclass(hmr.Error, Exception)


def hmr_info_json():
    # A sanitizer build links its runtime into hmr_info itself: the one
    # preloaded into this interpreter must not be preloaded there too.
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    out = subprocess.run([os.environ["HMR_TEST_HMR_INFO"], "--json"],
                         capture_output=True, text=True, env=env).stdout
    return json.loads(out)


def test_info_matches_hmr_info():
    info = hmr.info()
    j = hmr_info_json()
    assert info["version"] == j["version"] == "hmr " + hmr.__version__
    domains = {d["kind"]: d for d in j["domains"]}
    assert set(info["domains"]) == set(domains)
    for name, d in info["domains"].items():
        assert d["available"] == domains[name]["available"]
        if d["available"]:
            modes = "|".join(d["mr_mode"]) or "0"
            assert modes == domains[name]["mr_mode"]
        else:
            assert d["reason"] == domains[name]["reason"]
    backends = {b["name"]: b for b in j["backends"]}
    assert set(info["interfaces"]) == set(backends) == {
        "system", "cuda", "rocr", "ze", "neuron", "synapseai"}
    for name, i in info["interfaces"].items():
        assert i["present"] == backends[name]["present"]
        if not i["present"]:
            assert i["reason"] == backends[name]["reason"]
    assert info["interfaces"]["cuda"]["present"] == \
        bool(os.environ.get("HMR_CUDA_LIBRARY"))


def test_query_says_host_memory_is_system(domain):
    a = np.zeros(100)
    for obj in (a, memoryview(a), a.ctypes.data, (a.ctypes.data, 800)):
        q = hmr.query(obj)
        assert q.iface == "system" and q.device == 0 and q.flags == 0
        assert q == hmr.MemInfo(("system", 0, 0, 0, 0, 0))
