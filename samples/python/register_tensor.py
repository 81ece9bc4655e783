#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""register_tensor.py: register a PyTorch tensor and a NumPy array with hmr.

Each object says what its memory is (DLPack's __dlpack_device__ here; a
CUDA tensor would say kDLCUDA and register as cuda memory of its device),
hmr checks it, and the MR keeps the object alive until it is closed.  Run
with Debian's interpreter: /usr/bin/python3 register_tensor.py
"""
import numpy as np
import torch

import hmr

with hmr.Domain() as domain:  # the software domain; kind="verbs" for a NIC
    tensor = torch.arange(1 << 16, dtype=torch.float32)
    array = np.zeros((256, 256), dtype=np.uint8)
    for name, obj in (("torch tensor", tensor), ("numpy array", array)):
        with domain.register(obj) as mr:
            print(f"{name}: key {mr.key:#x} memory {mr.iface} device "
                  f"{mr.device} [{mr.address:#x}, +{mr.length}) via "
                  f"{mr.source}")
