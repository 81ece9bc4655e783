#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""bench_python.py: a registration from Python against the same one from C.

Both sides register the same host memory on the same software domain
(Python's default: PROV_KEY | VIRT_ADDR | ALLOCATED, caps HMEM): C with
fi_mr_regattr in a loop (hmr._bench_c, compiled into the extension, so it
runs in this process with the same libhmr), Python with Domain.register
through each way an object hands over memory.  Each round times a batch of
registrations, then the batch's closes, in the thread's CPU time (on a
shared machine, preemption swamps wall time); rounds of the cases
interleave, so cache effects hit them alike.  Prints the median per call, the ratio
to C and what Python adds in nanoseconds (the goal: under 1000).

From a build tree (nothing installed):
  PYTHONPATH=build/tests/python/lib LD_LIBRARY_PATH=build \\
      /usr/bin/python3 tools/bench_python.py [--rounds 31] [--batch 2000]

--kind verbs [--nic rxe0] --access local: the same on a verbs domain with
local rights only (FI_READ | FI_WRITE | FI_SEND | FI_RECV), which its
registration cache serves (doc/cache.md): after the first registration
every one is a cache hit, from C and from Python alike.  It fails (exit 1)
if the cache served none, as the figures would then be ibv_reg_mr's.  The
VM suite vm_python_verbs runs it on soft-RoCE (tests/vm/python/run.sh).
"""
import argparse
import ctypes
import statistics
import sys
import time

import numpy as np

import hmr
from hmr import _hmr

try:
    import torch
except ImportError:  # the other cases still run
    torch = None


def python_round(domain, objs, kw):
    register = domain.register
    t0 = time.thread_time_ns()
    mrs = [register(o, **kw) for o in objs]
    t1 = time.thread_time_ns()
    for mr in mrs:
        mr.close()
    t2 = time.thread_time_ns()
    return (t1 - t0) / len(objs), (t2 - t1) / len(objs)


def producer_round(objs):
    """What the producer alone costs: __dlpack_device__ and __dlpack__
    (and the capsule's deleter), as any DLPack consumer pays it."""
    t0 = time.thread_time_ns()
    caps = [(o.__dlpack_device__(), o.__dlpack__()) for o in objs]
    t1 = time.thread_time_ns()
    del caps
    t2 = time.thread_time_ns()
    return (t1 - t0) / len(objs), (t2 - t1) / len(objs)


def c_round(domain, addr, size, access, n):
    reg, close = _hmr._bench_c(domain, addr, size, access, n)
    return reg / n, close / n


def cases(size):
    """(name, objects-to-register factory, register kwargs, C address)."""
    buf = np.zeros(size, dtype=np.uint8)
    addr = buf.ctypes.data
    view = memoryview(buf)
    ctbuf = (ctypes.c_char * size).from_address(addr)
    out = [("(address, length)", lambda n: [(addr, size)] * n,
            {"iface": "system", "device": 0}),
           ("(address, length), detected", lambda n: [(addr, size)] * n, {}),
           ("buffer protocol (memoryview)", lambda n: [view] * n, {}),
           ("buffer protocol (ctypes)", lambda n: [ctbuf] * n, {}),
           ("numpy DLPack", lambda n: [buf] * n, {})]
    if torch is not None:
        t = torch.from_numpy(buf)
        out.append(("torch DLPack", lambda n: [t] * n, {}))
    return buf, addr, out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=31)
    p.add_argument("--batch", type=int, default=2000)
    p.add_argument("--size", type=int, default=4096)
    p.add_argument("--kind", choices=("software", "verbs"),
                   default="software")
    p.add_argument("--nic", help="verbs: the RDMA device (default: first)")
    p.add_argument("--access", choices=("remote", "local"),
                   default="remote")
    args = p.parse_args()
    access = hmr.REMOTE_READ | hmr.REMOTE_WRITE
    if args.access == "local":
        access = hmr.READ | hmr.WRITE | hmr.SEND | hmr.RECV
    stats = None
    with hmr.Domain(kind=args.kind, nic=args.nic) as domain:
        _buf, addr, todo = cases(args.size)
        times = {"C fi_mr_regattr": []}
        times.update({name: [] for name, _, _ in todo})
        producers = {name: [] for name, _, _ in todo if "DLPack" in name}
        for r in range(args.rounds + 1):  # round 0 warms up
            c = c_round(domain, addr, args.size, access, args.batch)
            if r:
                times["C fi_mr_regattr"].append(c)
            for name, make, kw in todo:
                t = python_round(domain, make(args.batch),
                                 dict(kw, access=access))
                if r:
                    times[name].append(t)
                if r and name in producers:
                    producers[name].append(producer_round(make(args.batch)))
        if args.kind == "verbs":
            stats = domain.cache_stats()
    med = {k: (statistics.median(v[0] for v in vs),
               statistics.median(v[1] for v in vs)) for k, vs in times.items()}
    prod = {k: statistics.median(v[0] + v[1] for v in vs)
            for k, vs in producers.items()}
    c_reg, c_close = med["C fi_mr_regattr"]
    print(f"hmr {hmr.__version__}: {args.size}-byte host buffer, "
          f"{args.kind} domain, {args.access} access, {args.rounds} rounds "
          f"of {args.batch}; median CPU ns per call")
    print(f"{'':30} {'register':>8} {'/C':>5} {'+ns':>6} {'close':>6} "
          f"{'/C':>5} {'+ns':>5} {'pair/C':>6} {'+ns':>6} {'producer':>8} "
          f"{'hmr +ns':>7}")
    for name, (reg, close) in med.items():
        pair = (reg + close) / (c_reg + c_close)
        added = reg + close - c_reg - c_close
        p = prod.get(name, 0)
        print(f"{name:30} {reg:8.0f} {reg / c_reg:5.2f} {reg - c_reg:6.0f} "
              f"{close:6.0f} {close / c_close:5.2f} {close - c_close:5.0f} "
              f"{pair:6.2f} {added:6.0f} {p:8.0f} {added - p:7.0f}")
    print("+ns: what Python adds to C; producer: __dlpack_device__ and "
          "__dlpack__ alone\n(and the deleter); hmr +ns: register + close "
          "added, less the producer's share.")
    if stats is not None:
        print(f"verbs cache: {stats['hits']} hits, {stats['misses']} "
              f"misses, {stats['uncached']} uncached, monitor "
              f"{stats['monitor']}{'' if stats['active'] else ', inactive: '}"
              f"{'' if stats['active'] else stats['why']}")
        if not stats["active"] or stats["hits"] == 0:
            print("the cache served no registration: these are "
                  "ibv_reg_mr's figures, not a cache hit's")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
