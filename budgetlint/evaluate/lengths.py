"""Workload lengths taken from a benchmark file (``prompt_tokens: {from_bench: FILE}``).

The model records the path as written (``("bench", path)``); this step of the
evaluation reads the file once per run through the run's
:class:`~budgetlint.evaluate.evidence.store.BenchStore` (the same size limits and
read roots as ``bench:`` entries), takes the successful requests' per-request
token counts of every measurement in it (vLLM/SGLang detailed results:
``input_lens``/``output_lens``; LLMPerf individual responses:
``number_input_tokens``/``number_output_tokens``) and hands the rest of the
evaluation a budget whose workload says ``("values", lengths)``: the
simulator draws from them (``Empirical``), the flat roofline uses their mean
(rounded to a whole token).

A file that cannot be read, is refused, or has no per-request lengths of the
kind asked for is a :class:`LengthsSource` with a ``problem`` (BL406 reports it
at the budget's key); the budget is then evaluated without physics, as any
budget with an input error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Optional

from budgetlint.findings import Location
from budgetlint.model.types import Budget
from budgetlint.text import numbers

_FIELDS = {"prompt_tokens": ("prompt_dist", "prompt_lengths", "input"),
           "output_tokens": ("output_dist", "output_lengths", "output")}
_WHERE = ("vLLM or SGLang detailed results (input_lens, output_lens; vllm bench serve --save-detailed) "
          "or LLMPerf individual responses (number_input_tokens, number_output_tokens)")


@dataclass(frozen=True)
class LengthsSource:
    """One ``from_bench`` length of a budget, as the evaluation found it."""

    key: str  # "prompt_tokens" | "output_tokens"
    pattern: str  # the path as the budget writes it
    where: Location  # the budget's `from_bench` key
    file: Any = None  # evidence.BenchFile, when read
    count: int = 0  # per-request lengths taken
    mean: Optional[float] = None
    problem: Optional[str] = None  # why no lengths came from the file (BL406)
    fix: str = ""


def _prefix(wl: Any, src: LengthsSource, changes: dict[str, Any]) -> LengthsSource:
    """The prefix-cache hit against the file's mean prompt (the model could not know it)."""
    prompt = changes["prompt_tokens"]
    if wl.prefix_cache_hit_share is not None:
        changes["cached_prompt_tokens"] = wl.prefix_cache_hit_share * prompt
    elif wl.cached_prompt_tokens > prompt:
        return replace(src, problem=f"workload.prefix_cache_hit ({numbers.stated(wl.cached_prompt_tokens)} tokens) is more than "
                                    f"the file's mean prompt of {prompt} tokens",
                       fix="give prefix_cache_hit as a share of the prompt (e.g. 0.5), or fewer tokens")
    return src


def _lengths_of(store: Any, bf: Any, attr: str) -> tuple[tuple, float, int]:
    """(lengths, mean, how many are impossible) of one file's field, computed once per run."""
    cache = getattr(store, "lengths", None)
    key = (id(bf), attr)
    if cache is not None and key in cache:
        return cache[key][1:]
    raw = [n for m in bf.measurements for n in getattr(m, attr)]
    bad = sum(1 for n in raw if not (isinstance(n, (int, float)) and math.isfinite(n) and 0 <= n <= 1e9
                                     and n == int(n)))
    values = tuple(int(n) for n in raw) if not bad else ()
    mean = math.fsum(values) / len(values) if values else 0.0
    if cache is not None:
        cache[key] = (bf, values, mean, bad)  # bf kept: the id stays its own for the run
    return values, mean, bad


def resolve_lengths(b: Budget, store: Any) -> tuple[Budget, tuple[LengthsSource, ...]]:
    """``b`` with its ``from_bench`` lengths read (unchanged when it has none), and what was read."""
    wl = b.workload
    if wl is None or not wl.reads_bench_lengths:
        return b, ()
    from budgetlint.files import fs
    from budgetlint.files.discovery import inside, outside_words

    base = Path(b.doc.file).parent
    changes: dict[str, Any] = {}
    sources: list[LengthsSource] = []
    for key, (dist_field, attr, word) in _FIELDS.items():
        dist = getattr(wl, dist_field)
        if not (isinstance(dist, tuple) and dist[0] == "bench"):
            continue
        pattern = dist[1]
        where = b.loc("workload", key, "from_bench")
        path = Path(pattern) if Path(pattern).is_absolute() else base / pattern
        src = LengthsSource(key, pattern, where)
        if store.roots is not None and not inside(path, store.roots):
            src = replace(src, problem=f"it resolves {outside_words(store.roots)}",
                          fix="keep benchmark files inside the repository, or allow the folder with "
                              "--allow-read DIR (config: allow-read)")
        elif not fs.exists(path):
            src = replace(src, problem=f"no such file (relative to {base.as_posix() or '.'}/)",
                          fix="fix the path, or commit the benchmark file")
        else:
            bf = store.read(path)
            values, mean, bad = _lengths_of(store, bf, attr)
            if bad:
                src = replace(src, file=bf, problem=f"{numbers.number(bad)} of its per-request {word} token counts are negative, "
                                                    f"not whole numbers or above 1e9, which no request has",
                              fix="link the benchmark's own output, unedited")
            elif values:
                src = replace(src, file=bf, count=len(values), mean=mean)
                changes[dist_field] = ("values", values)  # one tuple per file, shared
                changes[key] = max(1 if key == "output_tokens" else 0, int(round(mean)))
                if key == "prompt_tokens":
                    src = _prefix(wl, src, changes)
            else:
                why = ("; ".join(f"{p.message} [{p.code}]" for p in bf.problems[:3])
                       if not bf.measurements and bf.problems else
                       f"it has no per-request {word} token counts")
                src = replace(src, file=bf, problem=why,
                              fix=f"link a file with per-request lengths: {_WHERE}; or give the lengths "
                                  "as a distribution")
        sources.append(src)
    complete = b.complete and not any(s.problem for s in sources)  # a length unknown: no physics
    return replace(b, workload=replace(wl, **changes), complete=complete), tuple(sources)
