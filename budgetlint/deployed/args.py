"""Engine command lines: shell-like tokens with their positions, and the flags each engine takes.

:func:`shell_tokens` splits shell text the way ``sh`` would for our purpose
(quotes, backslash-newline continuations, comments, ``;``/``&&``/``|``
ending a command), keeping each token's line and column. :func:`find_invocations`
finds engine launches in a token stream (``vllm serve``, ``python -m
vllm.entrypoints.openai.api_server``, ``python -m sglang.launch_server``,
``python -m dynamo.vllm``/``dynamo.sglang``, ``trtllm-serve``), and
:func:`apply_args` reads each engine's flags into canonical fields. Unknown
flags are skipped; a value left to a variable (``$TP``) is recorded as
unresolved, and ``${TP:-2}`` reads its default.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from budgetlint.deployed import Deployed, ConfigProblem, Setting

#: at most this many tokens are read from one file (a hostile file cannot make us slow)
MAX_TOKENS = 200_000


@dataclass(frozen=True)
class Token:
    text: str
    line: int
    column: int
    end: bool = False  # a command separator (; && || | newline outside a continuation)


def shell_tokens(text: str, line0: int = 1, col0: int = 1) -> list[Token]:
    """Shell words of ``text`` with positions (line0/col0: where ``text`` starts in its file)."""
    out: list[Token] = []
    i, n = 0, len(text)
    line, col = line0, col0
    buf: list[str] = []
    start: tuple[int, int] | None = None

    def flush() -> None:
        nonlocal buf, start
        if start is not None:
            out.append(Token("".join(buf), start[0], start[1]))
        buf, start = [], None

    while i < n and len(out) < MAX_TOKENS:
        c = text[i]
        if c == "\\" and i + 1 < n and text[i + 1] == "\n":  # continuation
            i += 2
            line, col = line + 1, 1
            continue
        if c == "\r":
            i += 1
            continue
        if c == "\n":
            flush()
            out.append(Token("\n", line, col, end=True))
            i += 1
            line, col = line + 1, 1
            continue
        if c in " \t":
            flush()
            i += 1
            col += 1
            continue
        if c == "#" and start is None:  # a comment to the end of the line
            while i < n and text[i] != "\n":
                i += 1
            continue
        if c in ";|&" and start is None or c in ";|&" and not buf:
            flush()
            out.append(Token(c, line, col, end=True))
            i += 1
            col += 1
            continue
        if c in "'\"":
            if start is None:
                start = (line, col)
            q = c
            i += 1
            col += 1
            while i < n and text[i] != q:
                if q == '"' and text[i] == "\\" and i + 1 < n:
                    if text[i + 1] == "\n":
                        i += 2
                        line, col = line + 1, 1
                        continue
                    buf.append(text[i + 1])
                    i += 2
                    col += 2
                    continue
                if text[i] == "\n":
                    line, col = line + 1, 0
                buf.append(text[i])
                i += 1
                col += 1
            i += 1  # the closing quote (or the end)
            col += 1
            continue
        if c == "\\" and i + 1 < n:
            if start is None:
                start = (line, col)
            buf.append(text[i + 1])
            i += 2
            col += 2
            continue
        if start is None:
            start = (line, col)
        buf.append(c)
        i += 1
        col += 1
    flush()
    return out


# --------------------------------------------------------------------------- values

_DEFAULTED = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*:?[-=]([^}]*)\}$")
_VARIABLE = re.compile(r"\$\{?[A-Za-z_][A-Za-z0-9_]*|\{\{|\$\(")

Conv = Callable[[str], Any]


def _int(s: str) -> int:
    v = int(s)
    if not -(2**31) <= v <= 2**31:
        raise ValueError("out of range")
    return v


def _float(s: str) -> float:
    v = float(s)
    if not math.isfinite(v):
        raise ValueError("not a finite number")
    return v


def _bool(s: str) -> bool:
    t = s.strip().lower()
    if t in ("true", "1", "yes", "on"):
        return True
    if t in ("false", "0", "no", "off"):
        return False
    raise ValueError("not true or false")


def _str(s: str) -> str:
    return s


@dataclass(frozen=True)
class Flag:
    field: str
    conv: Conv | None  # None: a switch (no value; ``value`` is what it sets)
    value: Any = None
    optional_bool: bool = False  # a switch that may take an explicit True/False (vLLM's StoreBoolean)


def _switch(field: str, value: Any) -> Flag:
    return Flag(field, None, value, optional_bool=True)


VLLM_FLAGS: dict[str, Flag] = {
    "--model": Flag("model", _str),
    "--tensor-parallel-size": Flag("tensor_parallel", _int), "-tp": Flag("tensor_parallel", _int),
    "--pipeline-parallel-size": Flag("pipeline_parallel", _int), "-pp": Flag("pipeline_parallel", _int),
    "--data-parallel-size": Flag("data_parallel", _int), "-dp": Flag("data_parallel", _int),
    "--enable-expert-parallel": _switch("expert_parallel", True), "-ep": _switch("expert_parallel", True),
    "--no-enable-expert-parallel": _switch("expert_parallel", False),
    "--max-num-seqs": Flag("max_num_seqs", _int),
    "--max-num-batched-tokens": Flag("max_num_batched_tokens", _int),
    "--enable-chunked-prefill": _switch("chunked_prefill", True),
    "--no-enable-chunked-prefill": _switch("chunked_prefill", False),
    "--gpu-memory-utilization": Flag("gpu_memory_utilization", _float),
    "--kv-cache-dtype": Flag("kv_cache_dtype", _str),
    "--dtype": Flag("dtype", _str),
    "--quantization": Flag("quantization", _str), "-q": Flag("quantization", _str),
    "--enable-prefix-caching": _switch("prefix_caching", True),
    "--no-enable-prefix-caching": _switch("prefix_caching", False),
    "--speculative-config": Flag("speculative_config", _str),
    "--speculative-model": Flag("speculative", _str),
    "--num-speculative-tokens": Flag("num_speculative_tokens", _int),
    "--block-size": Flag("block_size", _int),
    "--config": Flag("config", _str),
    "--enforce-eager": _switch("cuda_graphs", False),
    "--no-enforce-eager": _switch("cuda_graphs", True),
    "--num-scheduler-steps": Flag("scheduler_steps", _int),
}

SGLANG_FLAGS: dict[str, Flag] = {
    "--model-path": Flag("model", _str), "--model": Flag("model", _str),
    "--tp-size": Flag("tensor_parallel", _int), "--tp": Flag("tensor_parallel", _int),
    "--tensor-parallel-size": Flag("tensor_parallel", _int),
    "--pp-size": Flag("pipeline_parallel", _int), "--pipeline-parallel-size": Flag("pipeline_parallel", _int),
    "--dp-size": Flag("data_parallel", _int), "--dp": Flag("data_parallel", _int),
    "--data-parallel-size": Flag("data_parallel", _int),
    "--ep-size": Flag("expert_parallel_size", _int), "--ep": Flag("expert_parallel_size", _int),
    "--expert-parallel-size": Flag("expert_parallel_size", _int),
    "--max-running-requests": Flag("max_num_seqs", _int),
    "--chunked-prefill-size": Flag("chunked_prefill_size", _int),
    "--mem-fraction-static": Flag("gpu_memory_utilization", _float),
    "--kv-cache-dtype": Flag("kv_cache_dtype", _str),
    "--dtype": Flag("dtype", _str),
    "--quantization": Flag("quantization", _str),
    "--disable-radix-cache": _switch("prefix_caching", False),
    "--speculative-algorithm": Flag("speculative", _str),
    "--speculative-num-draft-tokens": Flag("num_speculative_tokens", _int),
    "--page-size": Flag("block_size", _int),
    "--disable-cuda-graph": _switch("cuda_graphs", False),
}

TRTLLM_FLAGS: dict[str, Flag] = {
    "--tp_size": Flag("tensor_parallel", _int), "--pp_size": Flag("pipeline_parallel", _int),
    "--ep_size": Flag("expert_parallel_size", _int),
    "--max_batch_size": Flag("max_num_seqs", _int), "--max_num_tokens": Flag("max_num_batched_tokens", _int),
    "--kv_cache_free_gpu_memory_fraction": Flag("gpu_memory_utilization", _float),
}

FLAGS = {"vllm": VLLM_FLAGS, "sglang": SGLANG_FLAGS, "trtllm": TRTLLM_FLAGS}


# --------------------------------------------------------------------------- invocations

@dataclass
class Invocation:
    engine: str
    start: Token  # the command's first token
    args: list[Token]  # the tokens after the launcher, up to the end of the command
    positional_model: bool  # `vllm serve MODEL` / `trtllm-serve MODEL`: the first positional is the model
    launcher: str


_PY = re.compile(r"^(?:.*/)?python(?:3(?:\.\d+)?)?$")
_MODULES = {
    "vllm.entrypoints.openai.api_server": ("vllm", False),
    "vllm.entrypoints.api_server": ("vllm", False),
    "vllm.entrypoints.cli.main": ("vllm", False),
    "sglang.launch_server": ("sglang", False),
    "dynamo.vllm": ("vllm", False),
    "dynamo.sglang": ("sglang", False),
    "dynamo.trtllm": ("trtllm", False),
}


def _launcher(tokens: list[Token], i: int) -> tuple[str, bool, int, str] | None:
    """(engine, positional model, index of the first argument, launcher) when tokens[i] starts a launch."""
    t = tokens[i].text
    base = t.rsplit("/", 1)[-1]
    nxt = tokens[i + 1].text if i + 1 < len(tokens) else ""
    if base == "vllm" and nxt == "serve":
        return "vllm", True, i + 2, "vllm serve"
    if base == "sglang" and nxt == "serve":
        return "sglang", False, i + 2, "sglang serve"
    if base == "trtllm-serve":
        j = i + 1 if nxt != "serve" else i + 2
        return "trtllm", True, j, "trtllm-serve"
    if _PY.match(base) and nxt == "-m" and i + 2 < len(tokens):
        mod = tokens[i + 2].text
        if mod in _MODULES:
            eng, pos = _MODULES[mod]
            return eng, pos, i + 3, f"python -m {mod}"
    if t.startswith("-m") and False:
        return None
    return None


def find_invocations(tokens: list[Token]) -> list[Invocation]:
    out: list[Invocation] = []
    i = 0
    while i < len(tokens):
        found = None if tokens[i].end else _launcher(tokens, i)
        if found is None:
            i += 1
            continue
        engine, positional, j, launcher = found
        k = j
        while k < len(tokens) and not tokens[k].end:
            k += 1
        out.append(Invocation(engine, tokens[i], tokens[j:k], positional, launcher))
        i = k
    return out


def _value(raw: str) -> tuple[str | None, bool]:
    """(the value, whether it was left to a variable); ``${X:-2}`` reads its default."""
    m = _DEFAULTED.match(raw)
    if m:
        inner = m.group(1)
        return (None, True) if _VARIABLE.search(inner) else (inner, False)
    if _VARIABLE.search(raw):
        return None, True
    return raw, False


def apply_args(dep: Deployed, engine: str, args: list[Token], problems: list[ConfigProblem], *,
               positional_model: bool = False, override: bool = True) -> None:
    """Read ``args`` (one engine's flags) into ``dep``'s settings."""
    flags = FLAGS.get(engine, {})
    i = 0
    n = len(args)
    while i < n:
        tok = args[i]
        text = tok.text
        if not text.startswith("-"):
            if positional_model and "model" not in dep.settings and i == 0 or \
                    positional_model and i == 0:
                val, unresolved = _value(text)
                s = Setting(val if val is not None else text, dep.file, tok.line, tok.column, text)
                if unresolved:
                    dep.unresolved.append(Setting(text, dep.file, tok.line, tok.column, f"model {text}"))
                else:
                    dep.set("model", s, override=override)
            i += 1
            continue
        name, eq, inline = text.partition("=")
        if engine == "vllm" and name.startswith("--") and "_" in name:  # vLLM accepts --max_num_seqs too
            name = name.replace("_", "-")
        flag = flags.get(name)
        if flag is None:
            # an unknown flag: skip its value too, when one follows
            if not eq and i + 1 < n and not args[i + 1].text.startswith("-"):
                i += 2
            else:
                i += 1
            continue
        if flag.conv is None:  # a switch, maybe with an explicit true/false
            value: Any = flag.value
            shown = text
            consumed = 1
            raw = inline if eq else None
            if raw is None and flag.optional_bool and i + 1 < n and args[i + 1].text.lower() in ("true", "false"):
                raw = args[i + 1].text
                shown = f"{text} {raw}"
                consumed = 2
            if raw is not None:
                try:
                    b = _bool(raw)
                except ValueError:
                    problems.append(ConfigProblem(dep.file, tok.line, tok.column,
                                            f"{name}: expected true or false, found {raw!r}"))
                    i += consumed
                    continue
                value = flag.value if b else (not flag.value)
            dep.set(flag.field, Setting(value, dep.file, tok.line, tok.column, shown), override=override)
            i += consumed
            continue
        vtok = tok  # where the value is written (problems point at it)
        if eq:
            raw, shown, consumed = inline, text, 1
        elif i + 1 < n:
            raw, shown, consumed = args[i + 1].text, f"{text} {args[i + 1].text}", 2
            vtok = args[i + 1]
        else:
            problems.append(ConfigProblem(dep.file, tok.line, tok.column, f"{name}: expected a value after it, found none"))
            i += 1
            continue
        val, unresolved = _value(raw)
        if unresolved or val is None:
            dep.unresolved.append(Setting(raw, dep.file, tok.line, tok.column, shown))
            i += consumed
            continue
        try:
            value = flag.conv(val)
        except (ValueError, OverflowError):
            kind = {_int: "an integer", _float: "a number"}.get(flag.conv, "a value")
            problems.append(ConfigProblem(dep.file, vtok.line, vtok.column, f"{name}: expected {kind}, found {val!r}"))
            i += consumed
            continue
        dep.set(flag.field, Setting(value, dep.file, tok.line, tok.column, shown), override=override)
        i += consumed
    normalise(dep, problems)


def normalise(dep: Deployed, problems: list[ConfigProblem]) -> None:
    """Engine-specific raw fields -> canonical ones; values outside their range are problems."""
    s = dep.settings
    if "expert_parallel_size" in s:
        e = s.pop("expert_parallel_size")
        dep.set("expert_parallel", Setting(e.value > 1, e.file, e.line, e.column, e.text), override=False)
    if "chunked_prefill_size" in s:  # SGLang: -1 turns chunked prefill off
        c = s.pop("chunked_prefill_size")
        if isinstance(c.value, int) and c.value <= 0:
            dep.set("chunked_prefill", Setting(False, c.file, c.line, c.column, c.text))
        else:
            dep.set("max_num_batched_tokens", c)
            dep.set("chunked_prefill", Setting(True, c.file, c.line, c.column, c.text), override=False)
    if "speculative_config" in s:
        c = s.pop("speculative_config")
        try:
            spec = json.loads(c.value) if isinstance(c.value, str) else c.value
        except ValueError as exc:
            problems.append(ConfigProblem(c.file, c.line, c.column, f"--speculative-config: expected JSON, found "
                                    f"{str(c.value)[:60]!r} ({exc.args[0] if exc.args else exc})"))
            spec = None
        if isinstance(spec, dict):
            method = spec.get("method") or spec.get("model")
            if isinstance(method, str):
                dep.set("speculative", Setting(method, c.file, c.line, c.column, c.text))
            k = spec.get("num_speculative_tokens")
            if isinstance(k, int) and not isinstance(k, bool):
                dep.set("num_speculative_tokens", Setting(k, c.file, c.line, c.column, c.text))
    for key in ("tensor_parallel", "pipeline_parallel", "data_parallel", "replicas", "max_num_seqs",
                "max_num_batched_tokens", "num_speculative_tokens", "block_size", "scheduler_steps"):
        v = s.get(key)
        if v is not None and (not isinstance(v.value, int) or isinstance(v.value, bool) or v.value < 1):
            problems.append(ConfigProblem(v.file, v.line, v.column, f"{v.text or key}: expected a whole number >= 1, "
                                    f"found {v.value!r}"))
            s.pop(key)
    g = s.get("gpu_memory_utilization")
    if g is not None and not (isinstance(g.value, (int, float)) and 0 < g.value <= 1):
        problems.append(ConfigProblem(g.file, g.line, g.column, f"{g.text}: expected a fraction in (0, 1], found {g.value!r}"))
        s.pop("gpu_memory_utilization")


def tokens_from_items(items: Iterable[tuple[str, int, int]]) -> list[Token]:
    """YAML list items (one argument each) as tokens; an item holding a whole command is split."""
    out: list[Token] = []
    for text, line, col in items:
        if any(ch in text for ch in " \n\t") and not text.startswith("{"):
            out.extend(t for t in shell_tokens(text, line, col))
        else:
            out.append(Token(text, line, col))
    return out
