"""Benchmark evidence: link measurements to budgets and hold them against each promise.

Files come from two places:

* a budget's own ``bench:`` entries (paths or globs, relative to the budget
  file's directory): they are evidence for that budget;
* the run's ``--bench PATH`` files (``Options.bench``, relative to the working
  directory): they apply to the single budget of the run, or, with several
  budgets, to each budget whose deployment and workload the measurement
  matches.

Each file is read once per run (:class:`BenchStore`). Run conditions
the file lacks are filled from the budget's link (its workload and
deployment) and reported as *inferred from the budget*.

Per (budget, measurement) a :class:`Link` records whether the measurement
speaks for the budget (model, hardware, device count when known; concurrency
at least the budget's; prompt and output lengths within
:data:`LENGTH_TOLERANCE`; client edge for a client-edge promise) and, per
promise, the measured value at the budget's percentile in budgetlint's own
definitions (TPOT over all N output tokens). ``excludes_first_token`` TPOT
(vLLM style, over N - 1) converts exactly given N: ``x (N - 1) / N``;
``includes_ttft`` TPOT (LLMPerf) is refused, never mixed.

The evaluation stage calls :func:`link_budget` once per budget; the rules
BL401..BL411 read its :class:`BudgetEvidence` through ``rules/_evidence.py`` (one
iterator) and never read a file; their words are in ``rules/_messages.py``.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from budgetlint.files import fs
from budgetlint.files.discovery import display_path, inside, outside_words
from budgetlint.findings import Location
from budgetlint.model.types import Budget
from budgetlint.text import numbers

if TYPE_CHECKING:  # the readers load when a budget has evidence (a run without any skips ~5 ms of imports)
    from budgetlint.bench import Measurement, Problem

#: relative tolerance on mean prompt and output lengths (0.25 = within ±25 %)
LENGTH_TOLERANCE = 0.25
PROMISE_NAMES = ("ttft", "tpot", "e2e")
#: a measurement this many times faster than the bound is a unit error, not a config one
UNIT_ERROR_RATIO = 50.0


# --------------------------------------------------------------------------- data


@dataclass
class BenchFile:
    """One benchmark file as read (once per run)."""

    path: str  # as reports show it
    measurements: list[Measurement]
    problems: list[Problem]


@dataclass
class Reading:
    """One promise held against one measurement."""

    promise: str  # ttft | tpot | e2e
    percentile: str  # the label compared at ("p95")
    status: str  # compared | not-measured | refused
    measured_s: float | None = None  # in budgetlint's definition (tpot over N tokens)
    promised_s: float | None = None
    how: str = ""  # conversion note
    reason: str = ""  # why not measured / refused

    @property
    def margin(self) -> float | None:
        """(promise - measured) / promise on the time scale: < 0 is a miss."""
        if self.measured_s is None or not self.promised_s:
            return None
        return (self.promised_s - self.measured_s) / self.promised_s


@dataclass
class Faster:
    """A measured value faster than the pure roofline of the budget's deployment."""

    promise: str  # ttft | tpot | e2e | throughput (then the *_s fields are seconds per token)
    measured_s: float
    bound_s: float
    statistic: str  # the label(s) the value was read at: "p50" or "p50 (also mean, p90)"
    explanation: str
    concurrency: float = 1.0  # the concurrency the bound was computed at


@dataclass
class Link:
    """One measurement linked to one budget."""

    budget: Budget
    measurement: Measurement
    file: str
    via: str  # "bench: 'runs/*.json'" or "--bench runs/x.json"
    where: Location  # the budget's `bench:` entry, or the bench file
    conditions: dict[str, tuple[Any, str]] = field(default_factory=dict)  # field -> (value, origin)
    mismatches: list[tuple[str, str]] = field(default_factory=list)  # (workload/deployment key, reason)
    readings: dict[str, Reading] = field(default_factory=dict)
    faster: list[Faster] = field(default_factory=list)
    bound: Any = None  # physics Analysis at the pure roofline, measurement's conditions
    bound_concurrency_one: Any = None  # the same at concurrency 1 (the fastest per sequence)
    sufficiency: dict[str, Any] = field(default_factory=dict)  # promise -> sufficiency.Sufficiency
    quality: list[Any] = field(default_factory=list)  # run_quality.QualityProblem
    age_days: int | None = None  # today - the file's date
    stale: list[Any] = field(default_factory=list)  # freshness.Stale
    expires: str | None = None  # the `bench:` entry's expires (YYYY-MM-DD)
    expired_days: int | None = None  # days past it (> 0: the file no longer counts)

    @property
    def name(self) -> str:
        label = self.measurement.label
        return f"{self.file} ({label})" if label else self.file

    @property
    def counts(self) -> bool:
        """Does the measurement speak for the budget's promises? (not when its entry expired)"""
        return not self.mismatches and not self.expired

    @property
    def expired(self) -> bool:
        return self.expired_days is not None and self.expired_days > 0

    def shown(self, promise: str) -> bool:
        """Does the evidence show the reading at 95 % (see evaluate.sufficiency)?"""
        s = self.sufficiency.get(promise)
        return s is None or s.shown

    @property
    def inferred(self) -> list[str]:
        """Conditions taken from the budget because the file lacks them."""
        return [k for k, (_, origin) in self.conditions.items() if origin == "budget"]


@dataclass(frozen=True)
class BudgetEvidence:
    """One budget's evidence, as the evaluation stage found it."""

    links: tuple[Link, ...] = ()
    files: tuple[BenchFile, ...] = ()  # the budget's own `bench:` files, as read
    unmatched_globs: tuple[tuple[int, str], ...] = ()  # (index in `bench:`, pattern)
    declined: tuple[tuple[str, int, str], ...] = ()  # --bench (file, measurement index, why not this budget)
    capped_globs: tuple[tuple[int, str, int], ...] = ()  # (index in `bench:`, pattern, files kept) cut by the limit
    #: (index in `bench:`, pattern, why): entries refused, outside the run's roots (errors)
    refused: tuple[tuple[int, str, str], ...] = ()
    #: (index in `bench:`, pattern, why): globs whose walk an entry or time limit cut (warnings)
    cut: tuple[tuple[int, str, str], ...] = ()
    #: links to production evidence (the engine's Prometheus histograms, bench/prometheus.py): judged
    #: by evaluate/production.py, never as a benchmark run (the BL4xx rules do not see them)
    production: tuple[Link, ...] = ()


#: measurement formats that are production evidence rather than a benchmark run
PRODUCTION_FORMATS = ("prometheus",)


# --------------------------------------------------------------------------- reading


class BenchStore:
    """The run's benchmark files, each read once; ``bench_format`` forces the format."""

    def __init__(self, bench_format: str | None = None, *, max_bytes: int | None = None,
                 roots: list[str] | None = None) -> None:
        self.bench_format = bench_format
        self.max_bytes = max_bytes  # files larger are refused unread (None: bench.MAX_BENCH_BYTES)
        self.roots = roots  # `bench:` entries are read inside these folders only (None: anywhere)
        self._files: dict[str, BenchFile] = {}
        #: per-request lengths by (file, field): read once per file, shared by every budget naming
        #: it (20 budgets on one 54 MB file held 20 copies: 2.25 GB; issue 24), and the simulator's
        #: Empirical distribution of each, by the identity of its values
        self.lengths: dict[tuple[int, str], Any] = {}
        self.empirical: dict[int, Any] = {}

    def read(self, path: Path, display: str | None = None) -> BenchFile:
        key = str(path.resolve()) if fs.exists(path) else str(path)
        if key not in self._files:
            from budgetlint.bench import read_benchmark

            measurements, problems = read_benchmark(path, self.bench_format, max_bytes=self.max_bytes)
            self._files[key] = BenchFile(display or display_path(path), measurements, problems)
        return self._files[key]


#: at most this many files per `bench:` entry (a glob like "/**" must not walk a disk)
MAX_GLOB_FILES = 1000


@dataclass
class Globbed:
    """What one `bench:` entry (or ``--bench`` glob) names."""

    files: list[Path]
    capped: bool = False  # more than the file limit matched: the first ones in sorted order are kept
    refused: str | None = None  # why the entry was not walked at all (its folder is outside the roots)
    cut: str | None = None  # why the walk stopped early (entries looked at, time)


def _glob(base: Path, pattern: str, limit: int | None = None, roots: list[str] | None = None) -> Globbed:
    """The files ``pattern`` (relative to ``base``) matches.

    A plain path is itself (when it exists). A glob is walked by
    :func:`budgetlint.files.globwalk.walk`: depth first in sorted name order at
    every level (the first ``limit`` matches are the same files whatever order
    the file system lists them in), each real folder once (symbolic link
    loops end), and within an entry and a time limit. A glob whose fixed
    folder lies outside ``roots`` is refused before any walk (``/**`` never
    walks the disk).
    """
    from budgetlint.files import globwalk

    limit = MAX_GLOB_FILES if limit is None else limit
    full = pattern if Path(pattern).is_absolute() else str(base / pattern)
    if globwalk.has_magic(pattern):
        start = globwalk.split(full)[0]
        if roots is not None and not inside(start, roots):
            return Globbed([], refused=f"its folder {start!r} is " + outside_words(roots))
        found = globwalk.walk(full, max_files=limit)
        return Globbed(found.files, capped=found.capped, cut=found.limit)
    p = Path(full)
    return Globbed([p] if fs.exists(p) else [])


# --------------------------------------------------------------------------- matching


def _norm(name: str) -> str:
    text = name.strip().lower()
    text = text.rsplit("/", 1)[-1]  # org prefix or path
    text = re.sub(r"^(nvidia|amd|google|meta)[ _-]+", "", text)
    return re.sub(r"[^a-z0-9.]+", "", text)


def _names(entry: Any) -> set[str]:
    return {_norm(n) for n in (entry.name, *entry.aliases)}


def _same_entry(measured: str, ours: Any, table: dict[str, Any]) -> bool | None:
    """True/False when the measured name resolves; None when it cannot be told."""
    found = table.get(measured.strip().lower())
    if found is None:
        key = _norm(measured)
        for entry in {id(e): e for e in table.values()}.values():
            if key in _names(entry):
                found = entry
                break
    if found is not None:
        return found is ours or found.name == ours.name
    key = _norm(measured)
    ours_names = _names(ours)
    if key in ours_names or any(n and (n in key or key in n) for n in ours_names if len(n) >= 4):
        return True
    return False


def effective_conditions(m: Measurement, b: Budget) -> dict[str, tuple[Any, str]]:
    """Conditions of a run: (value, origin) where origin is read | inferred | budget."""
    c = m.conditions
    out: dict[str, tuple[Any, str]] = {}
    for name in ("model", "hardware", "devices", "concurrency", "request_rate", "prompt_tokens",
                 "output_tokens", "measured_at"):
        value = getattr(c, name)
        if value is not None:
            out[name] = (value, c.status(name))
    wl, dep = b.workload, b.deployment
    fill: dict[str, Any] = {}
    if wl is not None:
        try:
            fill.update(concurrency=float(wl.concurrency), prompt_tokens=float(wl.prompt_tokens),
                        output_tokens=float(wl.output_tokens))
        except OverflowError:  # absurd counts: nothing to fill from
            pass
        fill["measured_at"] = wl.measured_at
    if dep is not None:
        if dep.model is not None:
            fill["model"] = dep.model.name
        if dep.hardware is not None:
            fill["hardware"] = dep.hardware.name
        fill["devices"] = dep.devices
    for name, value in fill.items():
        if name == "concurrency" and "request_rate" in out and "concurrency" not in out:
            rate = out["request_rate"][0]
            if isinstance(rate, float) and math.isfinite(rate):
                continue  # an open-loop run: its concurrency is not the budget's to assume
        out.setdefault(name, (value, "budget"))
    return out


def mismatches(m: Measurement, b: Budget, catalog: Any) -> list[tuple[str, str]]:
    """Why a measurement does not speak for a budget's promises (empty: it does)."""
    c = m.conditions
    wl, dep = b.workload, b.deployment
    out: list[tuple[str, str]] = []
    if dep is not None and dep.model is not None and c.model:
        if _same_entry(c.model, dep.model, catalog.models) is False:
            out.append(("deployment.model", f"model {c.model!r}, the budget's is {dep.model.name}"))
    if dep is not None and dep.hardware is not None and c.hardware:
        if _same_entry(c.hardware, dep.hardware, catalog.hardware) is False:
            out.append(("deployment.hardware", f"hardware {c.hardware!r}, the budget's is {dep.hardware.name}"))
    if dep is not None and c.devices is not None and c.devices != dep.devices:
        out.append(("deployment.devices", f"{numbers.count(c.devices, 'device')}, the budget's deployment has {dep.devices}"))
    if wl is not None:
        if c.concurrency is not None and c.concurrency < wl.concurrency:
            out.append(("workload.concurrency",
                        f"concurrency {c.concurrency:g}, lower than the budget's {wl.concurrency}"))
        for key, mine, word in (("prompt_tokens", c.prompt_tokens, "prompts"),
                                ("output_tokens", c.output_tokens, "outputs")):
            try:
                ours = float(getattr(wl, key))
            except OverflowError:
                continue
            if mine is None or ours <= 0 or not math.isfinite(ours):
                continue
            if abs(mine - ours) > LENGTH_TOLERANCE * ours:
                rel = "shorter" if mine < ours else "longer"
                out.append((f"workload.{key}",
                            f"{mine:g}-token {word}, {numbers.percent(abs(mine / ours - 1))} {rel} than the budget's "
                            f"{ours:g} (tolerance ±{numbers.percent(LENGTH_TOLERANCE)})"))
        if wl.measured_at == "client" and c.measured_at == "server":
            out.append(("workload.measured_at",
                        "measured at the server, the promise is at the client edge (network, "
                        "connection setup and proxies are not in it)"))
    return out


# --------------------------------------------------------------------------- readings


def _metric_value(metric: Any, label: str) -> float | None:
    value = metric.get(label) if metric is not None else None
    if value is None or not math.isfinite(value):
        return None
    return value


def _reported(metric: Any) -> str:
    labels = list(metric.percentiles)
    if metric.mean is not None:
        labels.append("mean")
    return ", ".join(labels) if labels else "nothing"


def tpot_in_our_definition(value: float, definition: str, n: float | None,
                           n_origin: str = "read") -> tuple[float | None, str]:
    """A TPOT value in budgetlint's definition (over all N tokens), and how; None if refused."""
    if definition == "budgetlint":
        return value, ""
    if definition == "excludes_first_token":
        if n is None or n <= 1:
            return None, ("TPOT over N - 1 tokens cannot be converted without the output length N "
                          "(more than 1)")
        where = "from the budget" if n_origin == "budget" else "from the file"
        from budgetlint.physics.latency import tpot_from_vllm

        return tpot_from_vllm(value, n), (f"converted from TPOT over N - 1 tokens: x (N - 1) / N, "
                                     f"N = {n:g} ({where})")
    if definition == "includes_ttft":
        return None, ("its TPOT includes the time to first token (e2e / N, LLMPerf's inter-token "
                      "latency): not comparable with a TPOT promise; give per-request data or a "
                      "tool that reports TPOT after the first token")
    return None, f"unknown TPOT definition {definition!r}: not compared"


def readings_for(link: Link) -> dict[str, Reading]:
    b, m = link.budget, link.measurement
    label = b.percentile or "p50"
    out: dict[str, Reading] = {}
    p = b.promise
    promised = {"ttft": p.ttft_s, "tpot": p.tpot_s, "e2e": p.e2e_s}
    for name in PROMISE_NAMES:
        if promised[name] is None:
            continue
        r = Reading(name, label, "not-measured", promised_s=promised[name])
        metric = m.metrics.get(name)
        if metric is None:
            r.reason = f"the file has no {_title(name)} metric"
        else:
            value = _metric_value(metric, label)
            if value is None:
                r.reason = (f"the file reports {_title(name)} {_reported(metric)}, not {label} "
                            "(never interpolated or taken from a mean)")
            elif name == "tpot":
                n, origin = link.conditions.get("output_tokens", (None, ""))
                converted, how = tpot_in_our_definition(value, metric.definition, n, origin)
                if converted is None:
                    r.status, r.reason = "refused", how
                else:
                    r.status, r.measured_s, r.how = "compared", converted, how
            else:
                r.status, r.measured_s = "compared", value
        out[name] = r
    return out


def _title(name: str) -> str:
    return {"ttft": "TTFT", "tpot": "TPOT", "e2e": "E2E"}.get(name, name)


# --------------------------------------------------------------------------- trust


def policy_for(b: Budget, defaults: Any = None) -> Any:
    """The budget's evidence policy, the config's evidence-* keys (``defaults``) filling the rest."""
    from budgetlint.evaluate.freshness import Policy

    own = b.evidence
    values: dict[str, Any] = {}
    for key, who in (("max_age_days", "max_age_from"), ("engine", "engine_from"),
                     ("engine_version", "version_from")):
        mine = getattr(own, key, None) if own is not None else None
        theirs = getattr(defaults, key, None) if defaults is not None else None
        values[key] = mine if mine is not None else theirs
        values[who] = "budget" if mine is not None else "config"
    return Policy(**values)


def _trust(link: Link, expires: str | None, on: dt.date, defaults: Any) -> None:
    """Sample sufficiency per reading, run quality, age and staleness, entry expiry."""
    from budgetlint.evaluate import freshness, run_quality, sufficiency

    b, m = link.budget, link.measurement
    for name, r in link.readings.items():
        if r.status != "compared":
            continue
        metric = m.metrics.get(name)
        raw = _metric_value(metric, r.percentile)
        scale = r.measured_s / raw if raw else 1.0  # type: ignore[operator]
        # requests, not tokens: a token-weighted distribution's count (guidellm's inter-token
        # latency) can exceed the requests it came from, so the smaller of the two is used
        count, source = metric.count, f"the file's {_title(name)} count"
        done = m.run.completed
        if done is not None and (count is None or done < count):
            count, source = done, m.run.sources.get("completed", "completed")
        suff = sufficiency.assess(r.percentile, metric.samples, count, source, r.measured_s, r.promised_s, scale)
        if suff is not None:
            link.sufficiency[name] = suff
    prompt = float(b.workload.prompt_tokens) if b.workload is not None and b.workload.prompt_tokens else None
    declared_prompt = link.conditions.get("prompt_tokens", (None, ""))
    if any(k == "workload.prompt_tokens" for k, _ in link.mismatches) or declared_prompt[1] == "budget":
        prompt = None  # BL404 already says it, or the file has no length of its own
    link.quality = run_quality.problems(m.run, budget_prompt_tokens=prompt, percentile=b.percentile or "p50")
    link.age_days = freshness.age_days(m.provenance, on)
    pol = policy_for(b, defaults)
    if not pol.empty:
        link.stale = freshness.check(m.provenance, pol, on)
    if expires:
        link.expires = expires
        try:
            link.expired_days = (on - dt.date.fromisoformat(expires.strip())).days
        except ValueError:
            link.expired_days = None  # not a date: the schema check reports it (BL003)


# --------------------------------------------------------------------------- physics


#: the bound's concurrency when the file states neither the requests sent nor completed:
#: more sequences than any KV cache holds (a billion), so the cap changes no real bound
MAX_BOUND_CONCURRENCY = 1e9


def physics_refusals() -> tuple[type[Exception], ...]:
    """What the physics raises on inputs it refuses: ``physics_inputs.Skip`` (no deployment or
    model to compute with), ValueError (a value outside the physics's domain),
    ArithmeticError (an overflow: a count beyond float range). Anything else is a bug and
    is not swallowed. (A function: an ``except`` clause evaluates it only when something
    was raised, so the adapter is imported only then.)"""
    from budgetlint.evaluate.physics_inputs import Skip

    return (Skip, ValueError, ArithmeticError)


def _bound_at(b: Budget, concurrency: int, prompt: float, output: float) -> Any:
    from budgetlint.evaluate import physics_inputs
    from budgetlint.evaluate import analysis_cache
    from budgetlint.physics.shapes import Efficiency

    d, wl, _edge, _queue = physics_inputs.physics_inputs(b)
    cached_frac = wl.cached_prompt_tokens / wl.prompt_tokens if wl.prompt_tokens else 0.0
    prompt = max(0.0, round(prompt))
    w = replace(wl, concurrency=max(1, int(round(concurrency))), prompt_tokens=prompt,
                output_tokens=max(1.0, round(output)), cached_prompt_tokens=cached_frac * prompt)
    return analysis_cache.analyse(physics_inputs.bound_deployment(d, b), w, Efficiency(1.0, 1.0), 0.0, None)


def _physics(link: Link, skipped: bool) -> None:
    """Bounds at the measurement's conditions (pure roofline, no queue or edge)."""
    b = link.budget
    if skipped or b.workload is None:
        return
    if any(k.startswith("deployment.") for k, _ in link.mismatches):
        return  # another model or machine: this deployment's bound says nothing about it
    cond = link.conditions
    conc = cond.get("concurrency", (b.workload.concurrency, "budget"))[0]
    if not isinstance(conc, (int, float)) or not math.isfinite(conc):
        conc = b.workload.concurrency
    # no more requests are in flight than the run sent: a cap of 1e308 (or a 300-digit
    # integer) is "no cap", and a bound at that concurrency underflows to a zero throughput
    sent = [n for n in (link.measurement.run.requested, link.measurement.run.completed)
            if isinstance(n, (int, float)) and math.isfinite(n) and n >= 1]
    conc = min(conc, max(sent)) if sent else min(conc, MAX_BOUND_CONCURRENCY)
    prompt = cond.get("prompt_tokens", (float(b.workload.prompt_tokens), "budget"))[0]
    output = cond.get("output_tokens", (float(b.workload.output_tokens), "budget"))[0]
    try:
        link.bound = _bound_at(b, conc, prompt, output)
        link.bound_concurrency_one = _bound_at(b, 1, prompt, output)
    except physics_refusals():  # no bound to compare with; the roofline rules say why
        link.bound = link.bound_concurrency_one = None
        return
    link.faster = _faster(link)


def _statistics(metric: Any) -> list[tuple[str, float]]:
    """Every statistic a metric has: the mean and each percentile, finite values only."""
    out = [("mean", metric.mean)] if metric.mean is not None and math.isfinite(metric.mean) else []
    out += [(lab, v) for lab, v in metric.percentiles.items() if v is not None and math.isfinite(v)]
    return out


def _at_run_concurrency(label: str) -> bool:
    """The mean and percentiles from the median up are held against the bound at the run's
    concurrency; the faster half (below p50, the minimum) against concurrency 1, since a
    request can run while fewer sequences are in flight (ramp-up, ramp-down)."""
    if label == "mean":
        return True
    from budgetlint.bench.measurement import label_percent

    pct = label_percent(label)
    return pct is not None and pct >= 50.0


def _faster(link: Link) -> list[Faster]:
    """Every statistic of every metric, and the aggregate throughput, against the pure roofline."""
    m = link.measurement
    out: list[Faster] = []
    prompt_origin = link.conditions.get("prompt_tokens", (None, "budget"))[1]
    conc = link.bound.concurrency if link.bound is not None else 1
    for name in PROMISE_NAMES:
        metric = m.metrics.get(name)
        if metric is None:
            continue
        hits: list[tuple[float, str, float, float, float]] = []  # (ratio, label, value, bound, concurrency)
        for lab, value in _statistics(metric):
            bound = link.bound if _at_run_concurrency(lab) else link.bound_concurrency_one
            if name == "tpot":
                n, origin = link.conditions.get("output_tokens", (None, ""))
                if metric.definition == "includes_ttft":
                    ours = value  # e2e / N >= our TPOT: an upper bound is enough to be faster
                else:
                    ours, _ = tpot_in_our_definition(value, metric.definition, n, origin)
                if ours is None:
                    continue
                value, bound_s = ours, bound.tpot_s
            elif name == "ttft":
                bound_s = bound.prefill_s
            else:  # prefill makes the first token: E2E >= prefill + (N - 1) decode steps
                bound_s = bound.prefill_s + bound.decode_after_first_s
            if value <= 0 or value >= bound_s * (1 - 1e-9):
                continue
            hits.append((bound_s / value, lab, value, bound_s, float(bound.concurrency)))
        if not hits:
            continue
        label = link.budget.percentile or "p50"
        hits.sort(key=lambda h: (-round(h[0], 9), h[1] != label))  # ties: the budget's own percentile
        _ratio, lab, value, bound_s, at = hits[0]
        others = [h[1] for h in hits[1:]]
        stat = lab + (f" (also {', '.join(others)})" if others else "")
        out.append(Faster(name, value, bound_s, stat, _explain(link, name, value, bound_s, prompt_origin),
                          concurrency=at))
    # aggregate output throughput <= B x the bound pace at the run's concurrency (aggregate grows
    # with B, so fewer in flight only lowers it); only when the file states its concurrency
    conc_origin = link.conditions.get("concurrency", (None, "budget"))[1]
    if (m.output_throughput and m.output_throughput > 0 and link.bound is not None
            and conc_origin != "budget" and "concurrency" in link.conditions):
        cap = link.bound.aggregate_token_per_s
        if cap > 0 and math.isfinite(cap) and m.output_throughput > cap * (1 + 1e-9):
            ratio = m.output_throughput / cap
            why = (f"{ratio:.0f}x more than physics allows: wrong units or a wrong key, not a fast machine"
                   if ratio >= UNIT_ERROR_RATIO else
                   "more devices, a smaller model, lower-precision weights or speculative decoding than the "
                   "budget declares, or a concurrency higher than the file states: not a fast machine")
            out.append(Faster("throughput", 1.0 / m.output_throughput, 1.0 / cap, "aggregate", why,
                              concurrency=float(conc)))
    return out


def _explain(link: Link, name: str, value: float, bound_s: float, prompt_origin: str) -> str:
    b = link.budget
    ratio = bound_s / value
    if ratio >= UNIT_ERROR_RATIO:
        return (f"{ratio:.0f}x faster than physics allows: wrong units (a time in seconds read as "
                f"milliseconds?) or a wrong key, not a fast machine")
    dep = b.deployment
    if name == "ttft":
        need = 1.0 - value / bound_s if bound_s > 0 else 0.0
        words = (f"the prompts must have been served from a prefix cache the budget does not declare "
                 f"(about {numbers.percent(need)} of each prompt cached; declare workload.prefix_cache_hit)")
        if prompt_origin == "budget":
            words += (f", or the prompts were shorter than the budget's {b.workload.prompt_tokens} "
                      "tokens (the file does not say)")
        else:
            words += ", or the TTFT was taken from a server cache warm-up"
        return words + ": not a fast machine"
    options = []
    for precision in ("fp8", "int4"):
        if dep.weight_precision in (precision, "fp4", "int4") or precision == dep.weight_precision:
            continue
        alt = _alt_bound(link, weight_precision=precision)
        if alt is not None and alt <= value:
            options.append(f"{precision} weights (bound {numbers.quantity(1 / alt, 'token/s')})")
            break
    if dep.accepted_tokens_per_pass <= 1:
        options.append("speculative decoding the budget does not declare (deployment.speculative)")
    if not options:
        options.append("more devices or a smaller model than the budget declares")
    what = "TPOT" if name == "tpot" else "E2E"
    return ("the run's configuration is not the budget's: " + " or ".join(options)
            + f"; or the {what} definition or units are wrong: not a fast machine")


def _alt_bound(link: Link, **changes: Any) -> float | None:
    """TPOT bound (concurrency 1) with the budget's deployment changed."""
    from budgetlint.evaluate import physics_inputs
    from budgetlint.evaluate import analysis_cache
    from budgetlint.physics import precision as phys_precision
    from budgetlint.physics.shapes import Efficiency

    b = link.budget
    bound = link.bound_concurrency_one
    try:
        d, wl, _e, _q = physics_inputs.physics_inputs(b)
        wp = changes.get("weight_precision")
        if wp:
            d = replace(d, weight_bytes_per_param=phys_precision.bytes_per_element(wp))
        w = replace(wl, concurrency=1, prompt_tokens=bound.prompt_tokens, output_tokens=bound.output_tokens,
                    cached_prompt_tokens=min(bound.cached_prompt_tokens, bound.prompt_tokens))
        return analysis_cache.analyse(physics_inputs.bound_deployment(d, b), w, Efficiency(1.0, 1.0), 0.0, None).tpot_s
    except physics_refusals():  # that alternative has no bound: it is not offered
        return None


# --------------------------------------------------------------------------- one budget's evidence


def _new_link(b: Budget, bf: BenchFile, m: Measurement, via: str, where: Location, skipped: bool,
              mism: list[tuple[str, str]], trust: tuple[dt.date, Any], expires: str | None = None) -> Link:
    link = Link(b, m, bf.path, via, where)
    link.conditions = effective_conditions(m, b)
    link.mismatches = mism
    link.readings = readings_for(link)
    _trust(link, expires, *trust)
    _physics(link, skipped)
    return link


def link_budget(b: Budget, skipped: bool, catalog: Any, store: BenchStore,
                run_files: tuple[BenchFile, ...] = (), only_budget: bool = False,
                today: dt.date | None = None, evidence_defaults: Any = None) -> BudgetEvidence:
    """The evidence for one budget: its own `bench:` files, then the run's ``--bench`` files.

    A ``--bench`` measurement is linked to the run's only budget whatever its
    conditions (BL404 then says why it does not count), else to each budget
    it matches; a budget it does not match records why (``declined``), and
    :func:`unlinked` collects the measurements no budget took.
    ``skipped``: the budget's roofline could not be computed (no bounds).
    ``today`` dates the evidence's age and the entries' expiry;
    ``evidence_defaults`` (a :class:`~budgetlint.evaluate.freshness.Policy`)
    is the config's evidence policy, which the budget's ``evidence:`` overrides.
    """
    trust = (today or dt.date.today(), evidence_defaults)
    links: list[Link] = []
    production: list[Link] = []
    files: list[BenchFile] = []
    unmatched: list[tuple[int, str]] = []
    declined: list[tuple[str, int, str]] = []
    seen: set[tuple[str, int]] = set()
    base = Path(b.doc.file).parent if b.bench else None  # the budget file's folder, for its `bench:` entries
    capped: list[tuple[int, str, int]] = []
    refused: list[tuple[int, str, str]] = []
    cut: list[tuple[int, str, str]] = []
    roots = store.roots
    for i, pattern in enumerate(b.bench):
        globbed = _glob(base, pattern, roots=roots)
        if globbed.refused is not None:
            refused.append((i, pattern, globbed.refused))
            continue
        if globbed.cut is not None:
            cut.append((i, pattern, globbed.cut + "; the files past it are not read"))
        paths = globbed.files
        if roots is not None:
            outside = [p for p in paths if not inside(p, roots)]
            if outside:
                what = "it" if len(paths) == 1 else f"{len(outside)} of its {len(paths)} files"
                refused.append((i, pattern, f"{what} resolves {outside_words(roots)}"))
                paths = [p for p in paths if p not in outside]
                if not paths:
                    continue
        if not paths:
            unmatched.append((i, pattern))
            continue
        if globbed.capped:
            capped.append((i, pattern, len(paths)))
        for p in paths:
            bf = store.read(p)
            if all(f is not bf for f in files):
                files.append(bf)
            expires = b.bench_expires[i] if i < len(b.bench_expires) else None
            for m in bf.measurements:
                if (bf.path, id(m)) not in seen:
                    seen.add((bf.path, id(m)))
                    (production if m.format in PRODUCTION_FORMATS else links).append(_new_link(b, bf, m, f"bench: {pattern!r}", b.loc("bench", i), skipped,
                                           mismatches(m, b, catalog), trust, expires))
    for bf in run_files:
        where = Location(bf.path, 1, 1)
        for k, m in enumerate(bf.measurements):
            if (bf.path, id(m)) in seen:
                continue
            mism = mismatches(m, b, catalog)
            if mism and not only_budget:
                declined.append((bf.path, k, f"{b.name}: " + "; ".join(r for _, r in mism)))
                continue
            seen.add((bf.path, id(m)))
            (production if m.format in PRODUCTION_FORMATS else links).append(
                _new_link(b, bf, m, f"--bench {bf.path}", where, skipped, mism, trust))
    return BudgetEvidence(tuple(links), tuple(files), tuple(unmatched), tuple(declined), tuple(capped),
                          refused=tuple(refused), cut=tuple(cut), production=tuple(production))


def expand_cli_bench(raw: list[str] | tuple[str, ...]) -> tuple[list[str], list[tuple[str, int, bool]]]:
    """``--bench`` values with their globs expanded (relative to the working directory), as
    ``bench:`` entries are: the paths to read, and each glob's (pattern, files kept, cut)."""
    if not raw:
        return [], []
    from budgetlint.files import globwalk

    out: list[str] = []
    globs: list[tuple[str, int, bool]] = []
    for value in raw:
        if not globwalk.has_magic(value):
            out.append(value)  # read as given: a missing file is reported by the reader, by its name
            continue
        globbed = _glob(Path("."), value)  # given by the user: no roots, but the walk's bounds
        globs.append((value, len(globbed.files), globbed.capped))
        out.extend(str(p) for p in globbed.files)
    return out, globs


def unlinked(run_files: tuple[BenchFile, ...], per_budget: list[BudgetEvidence]
             ) -> list[tuple[BenchFile, Measurement, list[str]]]:
    """The ``--bench`` measurements no budget took, with each budget's reason (a run-level pass)."""
    if not per_budget:
        return []
    taken = {(lk.file, id(lk.measurement)) for e in per_budget for lk in (*e.links, *e.production)}
    out = []
    for bf in run_files:
        for k, m in enumerate(bf.measurements):
            if (bf.path, id(m)) in taken:
                continue
            reasons = [why for e in per_budget for (path, idx, why) in e.declined if path == bf.path and idx == k]
            out.append((bf, m, reasons))
    return out


def link_summary(link: Link) -> dict[str, Any]:
    """One measurement as the report shows it: samples, interval, quality, age, provenance."""
    m = link.measurement
    prov = {k: getattr(m.provenance, k) for k in ("engine", "engine_version", "gpu", "date", "tool", "tool_version")
            if getattr(m.provenance, k) is not None}
    promises = {}
    for name, r in link.readings.items():
        entry: dict[str, Any] = {"status": r.status, "percentile": r.percentile, "measured_s": r.measured_s,
                                 "promised_s": r.promised_s}
        s = link.sufficiency.get(name)
        if s is not None:
            entry.update(s.as_dict())
            met = None if r.margin is None else r.margin >= -1e-9
            entry["verdict"] = ("met" if met else "missed") if s.shown else (
                "not shown" if met else "missed")
        elif r.margin is not None:
            entry["verdict"] = "met" if r.margin >= -1e-9 else "missed"
        promises[name] = entry
    run = m.run
    return {
        "source": link.name,
        "counts": link.counts,
        "requests": run.completed,
        "promises": promises,
        "quality": [q.as_dict() for q in link.quality],
        "age_days": link.age_days,
        "provenance": prov,
        "stale": [st.message for st in link.stale],
        "expires": link.expires,
        "expired": link.expired,
        "mean_in_flight": run.mean_in_flight,
    }


def evidence_analysis(b: Budget, links: tuple[Link, ...]) -> dict[str, Any]:
    """Measured values and implied efficiency for the budget's report ``analysis``,
    and every linked measurement's samples, interval, quality, age (``evidence``)."""
    d: dict[str, Any] = {}
    if links:
        d["evidence"] = [link_summary(lk) for lk in links]
    counted = [lk for lk in links if lk.counts]
    if not counted:
        return d
    # the first link that compares the most promises speaks for the budget
    lk = max(counted, key=lambda x: sum(r.status == "compared" for r in x.readings.values()))
    label = b.percentile or "p50"
    d["measured_source"] = lk.name
    d["measured_percentile"] = label
    d["measured_conditions_inferred"] = lk.inferred
    m = lk.measurement
    values: dict[str, float] = {}
    for name in PROMISE_NAMES:
        r = lk.readings.get(name)
        if r is not None and r.status == "compared":
            values[name] = r.measured_s  # type: ignore[assignment]
            continue
        metric = m.metrics.get(name)
        v = _metric_value(metric, label)
        if v is None:
            continue
        if name == "tpot":
            n, origin = lk.conditions.get("output_tokens", (None, ""))
            v, _ = tpot_in_our_definition(v, metric.definition, n, origin)
            if v is None:
                continue
        values[name] = v
    for name, v in values.items():
        d[f"measured_{name}_s"] = v
        r = lk.readings.get(name)
        if r is not None and r.margin is not None:
            d[f"measured_{name}_verdict"] = ("met" if lk.shown(name) else "not shown") \
                if r.margin >= -1e-9 else "missed"
        suff = lk.sufficiency.get(name)
        if suff is not None:
            d[f"measured_{name}_samples"] = suff.n
            d[f"measured_{name}_interval_s"] = [suff.lower_s, suff.upper_s]
    if values.get("tpot"):
        d["measured_pace_token_per_s"] = 1.0 / values["tpot"]
    if lk.bound is not None:
        if values.get("tpot"):
            d["implied_efficiency_decode"] = lk.bound.tpot_s / values["tpot"]
            d["implied_efficiency_decode_binding"] = lk.bound.decode_binding
        if values.get("ttft"):
            d["implied_efficiency_prefill"] = lk.bound.prefill_s / values["ttft"]
            d["implied_efficiency_prefill_binding"] = lk.bound.prefill_binding
    return d
