#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""two_hosts.py: pyverbs peers RDMA into NumPy arrays that hmr registered.

    two_hosts.py DEVICE PEER_DEVICE NETNS   the target, in this namespace
    two_hosts.py --peer DEVICE              the peer (started by the target)

The target opens hmr.Domain(kind="verbs", pd=<its pyverbs PD>), registers
NumPy arrays, and starts the peer in network namespace NETNS (ip netns
exec) with a pipe to it.  The peer is rdma-core's pyverbs alone, with
memory of its own: nothing of hmr.  They exchange QP numbers, GIDs,
addresses and rkeys as JSON lines over the pipe, then the peer RDMA WRITEs
into and READs from the hmr-registered arrays (through mr.address and
mr.key), the target WRITEs from one (through mr.lkey) into the peer's
memory, and last the peer tries the rkey of an MR hmr has closed.  Prints
one CASE line per check (tests/vm/README.md).
"""
import json
import os
import subprocess
import sys

from pyverbs import enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD

# The sample's QP helpers (samples/python/rdma_numpy.py, in the payload).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rdma_numpy as rn  # noqa: E402

N = 4096


def pattern(seed):
    return bytes((i * 31 + seed) & 0xFF for i in range(N))


def peer(device):
    """The peer: answers each request line with one reply line."""
    ctx = Context(name=device)
    pd = PD(ctx)
    cq = CQ(ctx, 8)
    qp = rn.rc_qp(pd, cq)
    mr = MR(pd, N, rn.QP_ACCESS)
    for line in sys.stdin:
        req = json.loads(line)
        op, reply = req["op"], {}
        if op == "connect":
            rn.connect(qp, req["qp"])
            reply = {"qp": rn.address(ctx, qp), "addr": mr.buf,
                     "rkey": mr.rkey}
        elif op in ("write", "read"):
            if op == "write":
                mr.write(pattern(req["seed"]), N, 0)
            opcode = e.IBV_WR_RDMA_WRITE if op == "write" else \
                e.IBV_WR_RDMA_READ
            reply = {"status": rn.rdma(qp, cq, opcode, mr.buf, N, mr.lkey,
                                       req["addr"], req["rkey"])}
        elif op == "show":
            pass
        elif op == "bye":
            break
        reply["bytes"] = mr.read(N, 0).hex()
        print(json.dumps(reply), flush=True)
    qp.close()
    mr.close()
    cq.close()
    pd.close()
    ctx.close()


class Target:
    """This side: hmr registers, the peer talks through a pipe."""

    def __init__(self, device, peer_device, netns):
        import hmr
        import numpy as np
        self.hmr, self.np = hmr, np
        self.ctx = Context(name=device)
        self.pd = PD(self.ctx)
        self.domain = hmr.Domain(kind="verbs", pd=rn.pd_address(self.pd))
        self.cq = CQ(self.ctx, 8)
        self.qp = rn.rc_qp(self.pd, self.cq)
        self.peer = subprocess.Popen(
            ["ip", "netns", "exec", netns, sys.executable,
             os.path.abspath(__file__), "--peer", peer_device],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        r = self.ask(op="connect", qp=rn.address(self.ctx, self.qp))
        rn.connect(self.qp, r["qp"])
        self.peer_addr, self.peer_rkey = r["addr"], r["rkey"]

    def ask(self, **req):
        self.peer.stdin.write(json.dumps(req) + "\n")
        self.peer.stdin.flush()
        line = self.peer.stdout.readline()
        if not line:
            raise RuntimeError(f"the peer exited on {req['op']}")
        return json.loads(line)

    def close(self):
        try:
            self.ask(op="bye")
        except (RuntimeError, OSError, ValueError):
            pass
        self.peer.stdin.close()
        self.peer.wait(timeout=30)
        self.qp.close()
        self.cq.close()
        self.domain.close()
        self.pd.close()
        self.ctx.close()


def check(name, fn):
    try:
        why = fn()
    except Exception as ex:  # a case's failure, never the next case's
        why = f"{type(ex).__name__}: {ex}"
    print(f"CASE FAIL {name}: {why}" if why else f"CASE PASS {name}",
          flush=True)


def target(device, peer_device, netns):
    t = Target(device, peer_device, netns)
    np, hmr = t.np, t.hmr
    arr = np.zeros(N, dtype=np.uint8)      # the peer writes it
    src = np.frombuffer(pattern(9), dtype=np.uint8).copy()  # it reads this
    mr = t.domain.register(arr)            # REMOTE_READ | REMOTE_WRITE
    msrc = t.domain.register(src, access=hmr.WRITE | hmr.REMOTE_READ)

    def registered():
        if t.domain.kind != "verbs" or mr.iface != "system":
            return f"domain {t.domain.kind}, memory {mr.iface}"
        if (mr.address, mr.length) != (arr.ctypes.data, N):
            return f"MR [{mr.address:#x}, +{mr.length}) is not the array's"
        for k in ("key", "lkey"):
            v = getattr(mr, k)
            if not isinstance(v, int) or not 0 <= v < 1 << 32:
                return f"{k} {v!r} is no 32-bit verbs key"
        print(f"numpy array: address {mr.address:#x} rkey (key) "
              f"{mr.key:#x} lkey {mr.lkey:#x} via {mr.source}")
        return None

    def peer_writes():
        r = t.ask(op="write", addr=mr.address, rkey=mr.key, seed=5)
        if r["status"] != e.IBV_WC_SUCCESS:
            return f"the peer's RDMA WRITE completed with {r['status']}"
        if arr.tobytes() != pattern(5):
            return "the array does not hold the bytes the peer wrote"
        return None

    def peer_reads():
        r = t.ask(op="read", addr=msrc.address, rkey=msrc.key)
        if r["status"] != e.IBV_WC_SUCCESS:
            return f"the peer's RDMA READ completed with {r['status']}"
        if bytes.fromhex(r["bytes"]) != src.tobytes():
            return "the peer read other bytes than the array holds"
        return None

    def lkey_writes():
        st = rn.rdma(t.qp, t.cq, e.IBV_WR_RDMA_WRITE, msrc.address, N,
                     msrc.lkey, t.peer_addr, t.peer_rkey)
        if st != e.IBV_WC_SUCCESS:
            return f"RDMA WRITE through mr.lkey completed with {st}"
        if bytes.fromhex(t.ask(op="show")["bytes"]) != src.tobytes():
            return "the peer's memory does not hold the array's bytes"
        return None

    def closed_refused():
        arr[:] = 0
        addr, rkey = mr.address, mr.key
        mr.close()  # remote rights: never cached, deregistered now
        r = t.ask(op="write", addr=addr, rkey=rkey, seed=77)
        if r["status"] != e.IBV_WC_REM_ACCESS_ERR:
            return (f"a closed MR's rkey: status {r['status']}, not "
                    f"IBV_WC_REM_ACCESS_ERR ({e.IBV_WC_REM_ACCESS_ERR})")
        if arr.any():
            return "bytes arrived through a closed MR's rkey"
        return None

    try:
        check("py_verbs_register_numpy_address_lkey_rkey", registered)
        check("py_pyverbs_peer_rdma_write_into_hmr_array", peer_writes)
        check("py_pyverbs_peer_rdma_read_from_hmr_array", peer_reads)
        check("py_hmr_lkey_rdma_write_to_pyverbs_peer", lkey_writes)
        check("py_closed_mr_rkey_refused_by_the_nic", closed_refused)
    finally:
        mr.close()
        msrc.close()
        t.close()
    return 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--peer":
        peer(sys.argv[2])
        return 0
    if len(sys.argv) != 4:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    return target(*sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
