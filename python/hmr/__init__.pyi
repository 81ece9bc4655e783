# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""Type stubs for hmr (the C extension hmr._hmr, re-exported)."""
from types import TracebackType
from typing import Any, Dict, Optional, Protocol, Tuple, Type, Union

__version__: str

class _DLPack(Protocol):
    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any: ...
    def __dlpack_device__(self) -> Tuple[int, int]: ...

class _CUDAArray(Protocol):
    @property
    def __cuda_array_interface__(self) -> Dict[str, Any]: ...

# What Domain.register and query take: DLPack, __cuda_array_interface__,
# the buffer protocol (bytes, bytearray, memoryview, array.array, ...), or
# an (address, length) pair.
Registrable = Union[_DLPack, _CUDAArray, bytes, bytearray, memoryview,
                    Tuple[int, int], Any]
Iface = Union[str, int]

class Error(Exception):
    """An hmr call failed."""
    code: int
    strerror: str

class MemInfo(Tuple[str, int, int, int, int, int]):
    """What memory an address is (hmr_hmem_query)."""
    @property
    def iface(self) -> str: ...
    @property
    def device(self) -> int: ...
    @property
    def base(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def buffer_id(self) -> int: ...
    @property
    def flags(self) -> int: ...

class MR:
    """A registered memory region."""
    @property
    def key(self) -> int: ...
    @property
    def desc(self) -> int: ...
    @property
    def lkey(self) -> Optional[int]: ...
    @property
    def fid(self) -> int: ...
    @property
    def raw_base(self) -> int: ...
    @property
    def address(self) -> int: ...
    @property
    def length(self) -> int: ...
    @property
    def iface(self) -> str: ...
    @property
    def device(self) -> int: ...
    @property
    def access(self) -> int: ...
    @property
    def flags(self) -> int: ...
    @property
    def source(self) -> str: ...
    @property
    def obj(self) -> Any: ...
    @property
    def closed(self) -> bool: ...
    def raw_key(self) -> bytes: ...
    def close(self) -> None: ...
    def __enter__(self) -> "MR": ...
    def __exit__(self, t: Optional[Type[BaseException]],
                 v: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None: ...

class Domain:
    """An hmr domain."""
    def __init__(self, kind: str = "software", nic: Optional[str] = None,
                 mr_mode: Optional[int] = None, caps: Optional[int] = None,
                 flags: Optional[int] = 0, mr_key_size: int = 0,
                 mr_iov_limit: int = 0,
                 auth_key: Optional[bytes] = None,
                 pd: Optional[int] = None) -> None: ...
    @property
    def kind(self) -> str: ...
    @property
    def mr_mode(self) -> int: ...
    @property
    def caps(self) -> int: ...
    @property
    def closed(self) -> bool: ...
    @property
    def open_mrs(self) -> int: ...
    @property
    def fid(self) -> int: ...
    def register(self, obj: Registrable, access: Optional[int] = ...,
                 requested_key: Optional[int] = None,
                 iface: Optional[Iface] = None, device: Optional[int] = None,
                 flags: Optional[int] = 0) -> MR: ...
    def access(self, key: int, addr: int, length: int,
               write: bool = True) -> memoryview: ...
    def map_raw(self, base: int, raw: bytes) -> int: ...
    def unmap_key(self, key: int) -> None: ...
    def cache_stats(self) -> Dict[str, Any]: ...
    def close(self) -> None: ...
    def __enter__(self) -> "Domain": ...
    def __exit__(self, t: Optional[Type[BaseException]],
                 v: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None: ...

def query(obj: Union[Registrable, int]) -> MemInfo: ...
def info() -> Dict[str, Any]: ...

READ: int
WRITE: int
RECV: int
SEND: int
REMOTE_READ: int
REMOTE_WRITE: int
COLLECTIVE: int
MSG: int
RMA: int
TAGGED: int
ATOMIC: int
HMEM: int
RMA_EVENT: int
RMA_PMEM: int
MR_DMABUF: int
MR_SINGLE_USE: int
HMEM_HOST_ALLOC: int
HMEM_DEVICE_ONLY: int
MR_BASIC: int
MR_SCALABLE: int
MR_LOCAL: int
MR_RAW: int
MR_VIRT_ADDR: int
MR_ALLOCATED: int
MR_PROV_KEY: int
MR_MMU_NOTIFY: int
MR_RMA_EVENT: int
MR_ENDPOINT: int
MR_HMEM: int
MR_COLLECTIVE: int
MR_MODE_DEFAULT: int
DOMAIN_EMULATE_MR_MODE: int
DOMAIN_RELAXED_ORDERING: int
MEM_DEVICE_ONLY: int
MEM_HOST_ALLOC: int
MEM_MANAGED: int
IFACE_SYSTEM: int
IFACE_CUDA: int
IFACE_ROCR: int
IFACE_ZE: int
IFACE_NEURON: int
IFACE_SYNAPSEAI: int
KEY_NOTAVAIL: int
FI_EPERM: int
FI_EBADF: int
FI_ENOMEM: int
FI_EACCES: int
FI_EFAULT: int
FI_EBUSY: int
FI_ENODEV: int
FI_EINVAL: int
FI_ENOSYS: int
FI_ENODATA: int
FI_EOVERFLOW: int
FI_EOPNOTSUPP: int
FI_EKEYREJECTED: int
FI_ETOOSMALL: int
FI_EOPBADSTATE: int
FI_EBADFLAGS: int
FI_ENOKEY: int
