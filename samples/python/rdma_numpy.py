#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""rdma_numpy.py: RDMA WRITE and READ between NumPy arrays hmr registered.

hmr registers the arrays; rdma-core's own Python bindings (pyverbs, Debian's
python3-pyverbs) make the queue pairs.  Both share one protection domain:
hmr.Domain(kind="verbs", pd=...) registers into the pyverbs PD, so a QP of
that PD can use the keys hmr hands out:

    mr.address   the first byte, which a peer names under MR_VIRT_ADDR
    mr.key       the rkey, for the peer's RDMA WRITE and READ
    mr.lkey      the lkey, for this side's own ibv_sge

Here both QPs sit on one RDMA device (loopback): QP a writes array `src`
into array `dst` of QP b's side, then reads it back into `back`.  Two
processes connect the same way, once they have exchanged QP numbers, GIDs,
addresses and rkeys (tests/vm/python/two_hosts.py does it over a pipe).

    /usr/bin/python3 rdma_numpy.py [DEVICE]    (default: the first one)

Needs an RDMA device (tests/vm boots one: soft-RoCE) and memlock room.
"""
import sys

import numpy as np
from pyverbs import enums as e
from pyverbs.addr import GID, AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context, get_device_list
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, SendWR

import hmr

PORT = 1
GID_INDEX = 0  # the link-local GID: there as soon as the link is up
QP_ACCESS = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
             e.IBV_ACCESS_REMOTE_READ)


def rc_qp(pd, cq):
    """An RC QP in INIT, on `pd`, whose completions go to `cq`."""
    cap = QPCap(max_send_wr=4, max_recv_wr=1, max_send_sge=1,
                max_recv_sge=1)
    init = QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap)
    attr = QPAttr(port_num=PORT)
    attr.qp_access_flags = QP_ACCESS
    return QP(pd, init, attr)


def address(ctx, qp):
    """What a peer needs to connect to `qp`: a dict that JSON can carry."""
    return {"qpn": qp.qp_num, "gid": str(ctx.query_gid(PORT, GID_INDEX))}


def connect(qp, peer):
    """INIT -> RTR -> RTS, towards the peer's address()."""
    gr = GlobalRoute(dgid=GID(peer["gid"]), sgid_index=GID_INDEX)
    attr = QPAttr(port_num=PORT)
    attr.qp_access_flags = QP_ACCESS
    attr.path_mtu = e.IBV_MTU_1024
    attr.dest_qp_num = peer["qpn"]
    attr.rq_psn = attr.sq_psn = 0
    attr.max_dest_rd_atomic = attr.max_rd_atomic = 1
    attr.min_rnr_timer, attr.timeout = 12, 14
    attr.retry_cnt = attr.rnr_retry = 7
    attr.ah_attr = AHAttr(gr=gr, is_global=1, port_num=PORT)
    qp.to_rts(attr)


def rdma(qp, cq, opcode, addr, length, lkey, raddr, rkey):
    """One RDMA WRITE or READ between [addr, +length) (lkey) and the
    peer's raddr (rkey); the completion's status (0: IBV_WC_SUCCESS)."""
    wr = SendWR(opcode=opcode, num_sge=1, sg=[SGE(addr, length, lkey)],
                send_flags=e.IBV_SEND_SIGNALED)
    wr.set_wr_rdma(rkey, raddr)
    qp.post_send(wr)
    for _ in range(2_000_000):
        n, wcs = cq.poll()
        if n:
            return wcs[0].status
    raise TimeoutError("no completion")


def pd_address(pd):
    """The struct ibv_pd * of a pyverbs PD, as an int, for hmr.Domain(pd=).

    Newer pyverbs give it as an int (a new one at each read).  rdma-core
    44's (Debian 12) give the C pointer cast to a Python object, the same
    one at each read, which must not be used as an object (that crashes):
    only compared (is) and its id() taken, which is the pointer.
    """
    a, b = pd.pd, pd.pd
    return id(a) if a is b else a


def main():
    name = sys.argv[1] if len(sys.argv) > 1 else \
        get_device_list()[0].name.decode()
    n = 1 << 16
    with Context(name=name) as ctx, PD(ctx) as pd, \
            hmr.Domain(kind="verbs", pd=pd_address(pd)) as domain:
        src = np.arange(n, dtype=np.uint8)
        dst = np.zeros(n, dtype=np.uint8)
        back = np.zeros(n, dtype=np.uint8)
        cq = CQ(ctx, 8)
        a, b = rc_qp(pd, cq), rc_qp(pd, cq)
        connect(a, address(ctx, b))
        connect(b, address(ctx, a))
        # src is read and back written only through their lkeys; dst
        # only by the "peer", through its rkey.
        with domain.register(src, access=hmr.WRITE) as msrc, \
                domain.register(back, access=hmr.READ) as mback, \
                domain.register(dst) as mdst:
            print(f"dst: address {mdst.address:#x} rkey {mdst.key:#x} "
                  f"lkey {mdst.lkey:#x} on {name}")
            st = rdma(a, cq, e.IBV_WR_RDMA_WRITE, msrc.address, n,
                      msrc.lkey, mdst.address, mdst.key)
            print(f"RDMA WRITE src -> dst: status {st}, "
                  f"{'equal' if (dst == src).all() else 'DIFFERENT'}")
            st2 = rdma(a, cq, e.IBV_WR_RDMA_READ, mback.address, n,
                       mback.lkey, mdst.address, mdst.key)
            print(f"RDMA READ dst -> back: status {st2}, "
                  f"{'equal' if (back == src).all() else 'DIFFERENT'}")
        a.close()
        b.close()
        cq.close()
    ok = st == st2 == e.IBV_WC_SUCCESS and (dst == src).all() and \
        (back == src).all()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
