"""The catalog of device links: bandwidth per direction per device, and the source of each figure.

A deployment names one for its expert-parallel all-to-all (``deployment.interconnect``) or
for the KV transfer between a disaggregated deployment's pools (``disaggregated.kv_link``);
a quantity (``alltoall_bandwidth: 400 GB/s``, ``kv_link: {bandwidth: 50 GB/s}``) overrides
it. Vendors quote NVLink as the bidirectional aggregate per GPU (900 GB/s on H100/H200,
1.8 TB/s on Blackwell): the figures here are per direction, half of that (shared/reference
specs.md, note 5). Network links are quoted in Gb/s per port, one port (NIC) per GPU: 400 Gb/s
is 50 GB/s. No latency is listed: the sources give none that holds end to end; a deployment
declares it (``alltoall_latency``, ``kv_link.latency``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class DeviceLink:
    name: str
    bandwidth_bytes_per_s: float  # per direction, per device
    description: str
    source: str
    aliases: tuple[str, ...] = ()


_LIST = (
    DeviceLink("nvlink-3", 300e9, "NVLink 3 (A100 SXM): 600 GB/s bidirectional, 300 GB/s per direction",
         "https://www.nvidia.com/en-us/data-center/a100/ (NVLink 600 GB/s)", ("nvlink3",)),
    DeviceLink("nvlink-4", 450e9, "NVLink 4 (H100/H200 SXM): 900 GB/s bidirectional, 450 GB/s per direction",
         "https://www.nvidia.com/en-us/data-center/h100/ (NVLink 900 GB/s); shared/reference/hardware.csv",
         ("nvlink4",)),
    DeviceLink("nvlink-5", 900e9, "NVLink 5 (B200, GB200 NVL72): 1.8 TB/s bidirectional, 900 GB/s per direction",
         "https://www.nvidia.com/en-us/data-center/gb200-nvl72/ (fifth-generation NVLink 1.8 TB/s per GPU)",
         ("nvlink5",)),
    DeviceLink("infiniband-hdr", 25e9, "InfiniBand HDR, 200 Gb/s per port (ConnectX-6): 25 GB/s per direction",
         "https://www.nvidia.com/en-us/networking/infiniband-adapters/ (ConnectX-6 HDR 200 Gb/s)", ("ib-hdr",)),
    DeviceLink("infiniband-ndr", 50e9, "InfiniBand NDR, 400 Gb/s per port (ConnectX-7): 50 GB/s per direction",
         "https://github.com/deepseek-ai/DeepEP README (\"CX7 InfiniBand 400 Gb/s RDMA network card "
         "(~50 GB/s maximum bandwidth)\")", ("ib-ndr",)),
    DeviceLink("infiniband-xdr", 100e9, "InfiniBand XDR, 800 Gb/s per port (ConnectX-8): 100 GB/s per direction",
         "https://www.nvidia.com/en-us/networking/products/infiniband/ (Quantum-X800, ConnectX-8 800 Gb/s)",
         ("ib-xdr",)),
    DeviceLink("roce-200g", 25e9, "RoCE over 200 GbE: 25 GB/s per direction",
         "IEEE 802.3 200GBASE (200 Gb/s line rate)", ("roce-200",)),
    DeviceLink("roce-400g", 50e9, "RoCE over 400 GbE (Spectrum-X, ConnectX-7): 50 GB/s per direction",
         "https://www.nvidia.com/en-us/networking/spectrumx/ (400 Gb/s RoCE per GPU)", ("roce-400",)),
    DeviceLink("pcie-gen5-x16", 64e9, "PCIe 5.0 x16: 32 GT/s x 16 lanes, about 64 GB/s per direction",
         "PCI-SIG PCIe 5.0 (32 GT/s); shared/reference/hardware.csv (\"PCIe Gen5 128 GB/s\" bidirectional)",
         ("pcie5",)),
)

#: name -> Link
LINKS: dict[str, DeviceLink] = {link.name: link for link in _LIST}
_ALIASES = {alias: link for link in _LIST for alias in (link.name, *link.aliases)}


def _key(text: str) -> str:
    return re.sub(r"[\s_]+", "-", text.strip().lower())


def link_named(text: str) -> Optional[DeviceLink]:
    """The link ``text`` names (case, spaces and underscores aside), or None."""
    key = _key(text)
    return _ALIASES.get(key) or _ALIASES.get(key.replace("-", ""))
