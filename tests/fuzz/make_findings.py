#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# make_findings.py: write the hand-made corpus inputs for the findings.
#
# Each input is the model driver's choices in its fuzz encoding
# (tests/model/driver.h): drv_pick(n) is one byte for n <= 256, two
# (little endian) for n <= 65536; the value is taken modulo n.  The order
# of the choices is the order the driver makes them; README.md explains
# every byte.  Run from anywhere: python3 tests/fuzz/make_findings.py
import os

HERE = os.path.dirname(os.path.abspath(__file__))

# Operation indexes: the cumulative weights of drv_profile_reg and
# drv_profile_auth (tests/model/driver_episode.c).
OPS = {
    "reg": {"REG": 0, "SUB": 30, "ACCESS": 40},
    "auth": {"REG": 0, "SUB": 16, "ACCESS_AUTH": 30},
}


def domain(virt_allocated_bits):
    # sel=2 (mode from bits), bits, caps 0, clear ENDPOINT, EMULATE,
    # key size 8, iov limit 4, fi_version 2.1, no auth key.
    return [2, virt_allocated_bits, 0, 1, 1, 0, 0, 0, 0]


def u16(v):
    return [v & 0xFF, v >> 8]


def reg(ops, case_bytes, key):
    # op, iov count 1, top-of-space choices (8, 16), the gen_iov case and
    # its operands, access RR|RW, offset 0, key (small), flags 0, *mr.
    return [ops["REG"], 0, 0, 0] + case_bytes + [0, 1, 0, key, 0, 1]


def sub_of_first(ops, key):
    # op, base = MR 0, iov count 1, not NULL, sub iov: offset 0 in base
    # iov 0, case 4 (ends exactly at 2^64), access RR|RW masked by the
    # base's, offset 0, key, flags 0, *mr, hmem_data NULL, page_size 0,
    # auth key none, iface, device, sub_mr_cnt.
    return ([ops["SUB"], 1, 0, 0, 1] + u16(0) + [4, 0, 1, 1, 0, key, 0, 1] +
            [1, 0, 0, 0, 0, 0])


def access_far(ops, mr):
    # hmr_mr_access_auth of MR `mr`'s key at 2^40 bytes into the region,
    # 8 bytes, FI_REMOTE_WRITE, with the domain's auth key.
    return [ops["ACCESS_AUTH"], 1, mr, 0, 4, 1, 0, 7, 1, 0, 0]


def access_near(ops, mr, off):
    # ... at `off` bytes into a 4096-byte region, 8 bytes.
    return [ops["ACCESS_AUTH"], 1, mr, 0, 0] + u16(off) + [0, 7, 1, 0, 0]


VIRT, ALLOCATED = 0x04, 0x08
TOP_EXACT = [5]  # gen_iov case 5: {2^64 - 4096, 4096}
ARENA_TO_TOP = [7] + u16(0x100)  # case 7: {arena + 256, 2^64 - that}
ARENA_PAGE = [1, 0, 0]  # case 1: {arena, 4096}

FINDINGS = {
    "finding1_sub_mr_escapes_base": lambda ops, grant: (
        domain(VIRT) + reg(ops, ARENA_PAGE, 1) + sub_of_first(ops, 2) +
        (access_far(ops, 1) if grant else [])),
    "finding2_allocated_bypassed_by_2_64_end": lambda ops, grant: (
        domain(VIRT | ALLOCATED) + reg(ops, ARENA_TO_TOP, 5) +
        (access_far(ops, 0) if grant else [])),
    "finding3_iov_ending_at_2_64_accepted": lambda ops, grant: (
        domain(VIRT) + reg(ops, TOP_EXACT, 5) +
        (access_near(ops, 0, 16) if grant else [])),
}

# Found by the model: with FI_MR_PROV_KEY and 1-byte keys (256), a
# closed MR's key comes back after 16 registrations (the key space is
# split into 16 shards), although doc/software-domain.md promises it
# does not "until the key space wraps".  17 x (fi_mr_reg of the whole
# arena, fi_mr_close of the one live MR): the 17th key is a reissued one.
REG_ARENA_CLOSE = [OPS["reg"]["REG"], 0, 0, 0, 3, 0, 1, 0, 0, 0, 1,
                   52, 1, 0]
with open(os.path.join(HERE, "corpus", "mr_reg",
                       "finding7_prov_key_reissued_before_wrap"), "wb") as f:
    f.write(bytes([2, 0x10, 0, 1, 1, 1, 0, 0, 0] + REG_ARENA_CLOSE * 17))

for target, profile, grant in (("mr_reg", "reg", False),
                               ("access_auth", "auth", True)):
    for name, make in FINDINGS.items():
        path = os.path.join(HERE, "corpus", target, name)
        with open(path, "wb") as f:
            f.write(bytes(make(OPS[profile], grant)))
        print(path)
