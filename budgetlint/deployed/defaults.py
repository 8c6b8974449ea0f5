"""Engine defaults, pinned by engine and release, each value cited to the engine's source at that release.

Used where neither the budget nor the deployed configuration says. Each
:class:`Release` row holds what the engine does when a flag is not given,
read from the release's own source (the PyPI source distribution of that
version; the file and line are given so anyone can check them at the
release's tag). A version between two rows takes the earlier row (the rows
are the releases read, not every release); a version newer than the newest
row, or one that is not a version at all, takes the newest row and says so;
one older than the oldest row takes the oldest and says so.

GPU memory is compared in GiB (2**30 bytes), as the engines do
(``GiB_bytes`` in vLLM; MiB from ``torch.cuda.mem_get_info`` in SGLang).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

GIB = 2**30


@dataclass(frozen=True)
class Pinned:
    """One default: its value and where the engine's source says so."""

    value: object
    source: str  # "vllm/engine/arg_utils.py:88"

    def cite(self, engine: str, version: str) -> str:
        return f"{_NAMES.get(engine, engine)} {version} default, {self.source}"


@dataclass(frozen=True)
class Release:
    engine: str
    version: str
    memory_utilization: Callable[[float, int], Pinned | None]  # (device memory bytes, TP) -> fraction
    scheduler: Callable[[float, str, int | None], tuple[Pinned | None, Pinned | None]]  # -> seqs, tokens
    chunked_prefill: Pinned
    prefix_caching: Pinned
    block_size: Pinned
    url: str  # the release's source

    def key(self) -> tuple[int, ...]:
        return version_key(self.version) or ()


_NAMES = {"vllm": "vLLM", "sglang": "SGLang", "trtllm": "TensorRT-LLM", "tgi": "TGI"}


def version_key(text: str | None) -> tuple[int, ...] | None:
    """``"v0.11.0"`` -> (0, 11, 0); ``"0.8.5.post1"`` -> (0, 8, 5); not a version -> None."""
    if not isinstance(text, str):
        return None
    m = re.match(r"^\s*v?(\d+(?:\.\d+){0,3})", text)
    if not m:
        return None
    return tuple(int(p) for p in m.group(1).split("."))


def _const(value: object, source: str) -> Callable[..., Pinned]:
    p = Pinned(value, source)
    return lambda *_a: p


# ------------------------------------------------------------------ vLLM scheduler defaults (OpenAI API server)

def _v0_scheduler(seqs_src: str, tokens_src: str) -> Callable[[float, str, int | None], tuple]:
    def f(memory: float, name: str, max_model_len: int | None) -> tuple:
        tokens = max(max_model_len or 2048, 2048)
        return (Pinned(256, seqs_src),
                Pinned(tokens, tokens_src + " (no chunked prefill: max(max_model_len, 2048))"))
    return f


def _v080_scheduler(memory: float, name: str, max_model_len: int | None) -> tuple:
    big = "h100" in name or "h200" in name
    return (Pinned(1024, "vllm/engine/arg_utils.py:1715"),
            Pinned(8192 if big else 2048, "vllm/engine/arg_utils.py:1693-1703 (H100/H200 by device name: 8192, "
                                          "others 2048)"))


def _tiered(src: str, *, a100: bool, tier160: str | None = None) -> Callable[[float, str, int | None], tuple]:
    def f(memory: float, name: str, max_model_len: int | None) -> tuple:
        if tier160 is not None and memory >= 160 * GIB:
            return Pinned(1024, tier160), Pinned(16384, tier160 + " (>= 160 GiB)")
        large = memory >= 70 * GIB and not (a100 and "a100" in name)
        rule = ">= 70 GiB" + (" and not an A100" if a100 else "")
        if large:
            return Pinned(1024, f"{src} ({rule})"), Pinned(8192, f"{src} ({rule})")
        return Pinned(256, f"{src} (not {rule})"), Pinned(2048, f"{src} (not {rule})")
    return f


_BLOCK16_V0 = Pinned(16, "vllm/engine/arg_utils.py:82")

VLLM: tuple[Release, ...] = (
    Release("vllm", "0.6.0",
            _const(0.90, "vllm/engine/arg_utils.py:88"),
            _v0_scheduler("vllm/engine/arg_utils.py:90", "vllm/config.py:973-981"),
            Pinned(False, "vllm/engine/arg_utils.py:843-869 (on only for max_model_len > 32768)"),
            Pinned(False, "vllm/engine/arg_utils.py:83"),
            _BLOCK16_V0, "https://github.com/vllm-project/vllm/tree/v0.6.0"),
    Release("vllm", "0.8.0",  # the V1 engine is the default from here (vllm/envs.py:523)
            _const(0.90, "vllm/engine/arg_utils.py:126"),
            _v080_scheduler,
            Pinned(True, "vllm/engine/arg_utils.py:1666 (V1 always chunks prefills)"),
            Pinned(True, "vllm/engine/arg_utils.py:1670 (V1 enables prefix caching)"),
            Pinned(16, "vllm/config.py (CacheConfig: block_size 16 on CUDA)"),
            "https://github.com/vllm-project/vllm/tree/v0.8.0"),
    Release("vllm", "0.8.5",
            _const(0.9, "vllm/config.py:1308"),
            _tiered("vllm/engine/arg_utils.py:1596-1607", a100=False),
            Pinned(True, "vllm/engine/arg_utils.py:1569"),
            Pinned(True, "vllm/engine/arg_utils.py:1573"),
            Pinned(16, "vllm/config.py (CacheConfig: block_size 16 on CUDA)"),
            "https://github.com/vllm-project/vllm/tree/v0.8.5"),
    Release("vllm", "0.9.0",
            _const(0.9, "vllm/config.py:1408"),
            _tiered("vllm/engine/arg_utils.py:1495", a100=True),
            Pinned(True, "vllm/engine/arg_utils.py (V1 always chunks prefills)"),
            Pinned(True, "vllm/engine/arg_utils.py (V1 enables prefix caching)"),
            Pinned(16, "vllm/config.py (CacheConfig: block_size 16 on CUDA)"),
            "https://github.com/vllm-project/vllm/tree/v0.9.0"),
    Release("vllm", "0.11.0",
            _const(0.9, "vllm/config/cache.py:43"),
            _tiered("vllm/engine/arg_utils.py:1605", a100=True),
            Pinned(True, "vllm/engine/arg_utils.py:1548"),
            Pinned(True, "vllm/engine/arg_utils.py:1561"),
            Pinned(16, "vllm/config/cache.py (block_size 16 on CUDA)"),
            "https://github.com/vllm-project/vllm/tree/v0.11.0"),
    Release("vllm", "0.14.0",
            _const(0.9, "vllm/config/cache.py:50"),
            _tiered("vllm/engine/arg_utils.py:1846", a100=True),
            Pinned(True, "vllm/engine/arg_utils.py (chunked prefill on)"),
            Pinned(True, "vllm/config/cache.py:77"),
            Pinned(16, "vllm/config/cache.py (block_size 16 on CUDA)"),
            "https://github.com/vllm-project/vllm/tree/v0.14.0"),
    Release("vllm", "0.20.0",
            _const(0.92, "vllm/config/cache.py:66"),
            _tiered("vllm/engine/arg_utils.py:2208", a100=True),
            Pinned(True, "vllm/engine/arg_utils.py (chunked prefill on)"),
            Pinned(True, "vllm/config/cache.py:91"),
            Pinned(16, "vllm/config/cache.py (block_size 16 on CUDA)"),
            "https://github.com/vllm-project/vllm/tree/v0.20.0"),
    Release("vllm", "0.28.0",
            _const(0.92, "vllm/config/cache.py:69"),
            _tiered("vllm/engine/arg_utils.py:2592", a100=True, tier160="vllm/engine/arg_utils.py:2582"),
            Pinned(True, "vllm/engine/arg_utils.py (chunked prefill on)"),
            Pinned(True, "vllm/config/cache.py:96"),
            Pinned(16, "vllm/config/cache.py (block_size 16 on CUDA)"),
            "https://github.com/vllm-project/vllm/tree/v0.28.0"),
    Release("vllm", "0.33.0",
            _const(0.92, "vllm/config/cache.py:215"),
            _tiered("vllm/engine/arg_utils.py:2984", a100=True, tier160="vllm/engine/arg_utils.py:2973"),
            Pinned(True, "vllm/engine/arg_utils.py (chunked prefill on)"),
            Pinned(True, "vllm/config/cache.py:257"),
            Pinned(16, "vllm/config/cache.py:185 (DEFAULT_BLOCK_SIZE)"),
            "https://github.com/vllm-project/vllm/tree/v0.33.0"),
)


# ------------------------------------------------------------------ SGLang

def _sglang_046_memory(memory: float, tp: int) -> Pinned:
    mib = memory / 2**20
    src = "python/sglang/srt/server_args.py:224-238"
    if mib <= 81920:
        frac = 0.79 if tp >= 16 else 0.81 if tp >= 8 else 0.85 if tp >= 4 else 0.87 if tp >= 2 else 0.88
        return Pinned(frac, f"{src} (<= 80 GiB, TP {tp})")
    return Pinned(round((mib - 1024 * 13) / mib, 4), f"{src} ((memory - 13 GiB) / memory)")


def _sglang_046_scheduler(memory: float, name: str, max_model_len: int | None) -> tuple:
    mib = memory / 2**20
    return None, Pinned(2048 if mib < 25_000 else 8192, "python/sglang/srt/server_args.py:241-245 "
                                                        "(< 25,000 MiB: 2048, else 8192)")


def _sglang_0523_scheduler(memory: float, name: str, max_model_len: int | None) -> tuple:
    gib = memory / GIB
    size = 2048 if gib < 20 else 4096 if gib < 60 else 8192 if gib < 160 else 16384
    return None, Pinned(size, "python/sglang/srt/arg_groups/memory_hook.py:90-160 (< 20 GiB 2048, < 60 GiB 4096, "
                              "< 160 GiB 8192, else 16384)")


SGLANG: tuple[Release, ...] = (
    Release("sglang", "0.4.6", _sglang_046_memory, _sglang_046_scheduler,
            Pinned(True, "python/sglang/srt/server_args.py:241-245 (a chunk size is always set)"),
            Pinned(True, "python/sglang/srt/server_args.py:150 (disable_radix_cache False)"),
            Pinned(1, "python/sglang/srt/server_args.py:77 (page_size 1)"),
            "https://github.com/sgl-project/sglang/tree/v0.4.6"),
    Release("sglang", "0.5.23", lambda memory, tp: None, _sglang_0523_scheduler,
            Pinned(True, "python/sglang/srt/arg_groups/memory_hook.py:90-160 (a chunk size is always set)"),
            Pinned(True, "radix cache on unless --disable-radix-cache"),
            Pinned(1, "page_size 1 unless the attention backend needs more"),
            "https://github.com/sgl-project/sglang/tree/v0.5.23"),
)

TABLES: dict[str, tuple[Release, ...]] = {"vllm": VLLM, "sglang": SGLANG}


#: vLLM V0 (0.6.0's row) turns chunked prefill on by itself above this max_model_len (OpenAI API
#: server; vllm/engine/arg_utils.py:843-869 at v0.6.0): its row's False holds below it
V0_CHUNKED_ABOVE_MODEL_LEN = 32768


def chunked_prefill_at(rel: Release, max_model_len: int | None) -> Pinned:
    """The release's chunked-prefill default for a model of ``max_model_len`` tokens of context."""
    p = rel.chunked_prefill
    if (p.value is False and rel.engine == "vllm" and rel.key() < (0, 8) and max_model_len is not None
            and max_model_len > V0_CHUNKED_ABOVE_MODEL_LEN):
        return Pinned(True, f"{p.source.split(' (')[0]} (on: max_model_len {max_model_len} > "
                            f"{V0_CHUNKED_ABOVE_MODEL_LEN})")
    return p


@dataclass(frozen=True)
class Chosen:
    release: Release
    note: str  # "" when the version is in the table's range; else why this row was taken
    asked: str | None
    unknown: bool = False  # no version, not a version, or outside the releases read


def release_for(engine: str | None, version: str | None) -> Chosen | None:
    """The table row for ``engine`` at ``version`` (None: no table for this engine)."""
    rows = TABLES.get((engine or "").lower())
    if not rows:
        return None
    newest = rows[-1]
    key = version_key(version)
    name = _NAMES.get(engine or "", engine)
    if version is None:
        return Chosen(newest, f"no {name} version given: the defaults of {name} {newest.version} "
                              f"(the newest release read) are used", None, True)
    if key is None:
        return Chosen(newest, f"{name} version {version!r} is not a release number: the defaults of "
                              f"{name} {newest.version} (the newest release read) are used", version, True)
    if key > newest.key() and key[:3] != newest.key()[:3]:
        return Chosen(newest, f"{name} {version} is newer than the newest release read ({newest.version}): "
                              f"its defaults are used", version, True)
    if key < rows[0].key():
        return Chosen(rows[0], f"{name} {version} is older than the oldest release read ({rows[0].version}): "
                               f"its defaults are used", version, True)
    chosen = rows[0]
    for r in rows:
        if r.key() <= key:
            chosen = r
    note = "" if chosen.key() == key[:len(chosen.key())] else \
        f"{name} {version} takes the defaults read at {chosen.version} (the nearest earlier release read)"
    return Chosen(chosen, note, version)
