# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""hmr: register any framework's tensor for RDMA.

One call registers a PyTorch, JAX, CuPy or NumPy array, a bytearray or an
(address, length) from an allocator, on whatever device it lives::

    import hmr, torch
    with hmr.Domain() as domain:            # the software domain
        with domain.register(torch.zeros(1024)) as mr:
            print(mr.key, mr.iface, mr.device)

The memory type comes from the object itself (DLPack's __dlpack_device__,
__cuda_array_interface__, the buffer protocol) and is checked against what
hmr's backends find; the MR keeps the object alive until it is closed.
Errors raise hmr.Error, whose .code is the -FI_E* value.  The C library's
API is fi_mr(3); this package is a thin layer over it (libhmr).
"""
from hmr._hmr import *  # noqa: F401,F403  (every public name)
from hmr._hmr import Domain, Error, MemInfo, MR, info, query  # noqa: F401
from hmr._hmr import __version__  # noqa: F401
