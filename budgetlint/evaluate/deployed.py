"""The budget's deployment against the deployed configuration it links (docs/deployed-config.md).

``deployment.config`` names files (globs, relative to the budget's file) that
hold the deployment that serves traffic; :func:`resolve_deployed` reads them
(:mod:`budgetlint.deployed`, once per run), then for every field both sides
state compares them (a :class:`Contradiction` names both values, both
file:line locations and which one the verdict used: the budget's, which is
the promise being checked), fills every field the budget leaves out from the
deployed configuration (with its provenance), and where neither says, takes
the engine's default at its release (:mod:`budgetlint.deployed.defaults`,
each value cited). The evaluation's budget is then the budget with those
values in it, as for ``from_bench`` lengths.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from budgetlint.deployed import Deployed, ConfigProblem, Setting
from budgetlint.findings import Location
from budgetlint.model.types import Budget
from budgetlint.text import numbers

_KV_DTYPES = {"fp8": "fp8", "fp8_e4m3": "fp8", "fp8_e5m2": "fp8", "fp8_inc": "fp8", "fp8_ds_mla": "fp8",
              "fp8_per_token_head": "fp8", "bfloat16": "bf16", "bf16": "bf16", "float16": "fp16", "half": "fp16",
              "fp16": "fp16", "float32": "fp32", "float": "fp32", "nvfp4": "fp4", "nvfp4_ds_mla": "fp4",
              "int8_per_token_head": "int8", "int4_per_token_head": "int4", "fp8_e4m3fn": "fp8"}
_DTYPES = {"bfloat16": "bf16", "bf16": "bf16", "float16": "fp16", "half": "fp16", "fp16": "fp16",
           "float32": "fp32", "float": "fp32"}
_QUANT = {"fp8": "fp8", "fbgemm_fp8": "fp8", "modelopt": "fp8", "ptpc_fp8": "fp8", "fp8_e4m3": "fp8",
          "w8a8_fp8": "fp8", "mxfp4": "fp4", "modelopt_fp4": "fp4", "nvfp4": "fp4", "awq": "int4",
          "awq_marlin": "int4", "w4a16": "int4", "w8a8_int8": "int8", "qoq": "int4"}


@dataclass(frozen=True)
class Contradiction:
    """A field the budget and the deployed configuration both state, differently."""

    field: str  # the budget's field, e.g. "devices"
    budget_text: str  # "devices: 4"
    budget_loc: Location
    deployed: Setting
    deployed_text: str  # "tensor-parallel 2"
    config: str  # the deployed configuration's label ("deploy/values.yaml:44 (decode)")
    used: str  # which value the verdict used, in words
    fix: str


@dataclass
class DeployedEvaluation:
    """What the linked deployed configurations say about one budget."""

    files: list[str] = field(default_factory=list)
    configs: list[Deployed] = field(default_factory=list)
    primary: Deployed | None = None
    problems: list[tuple[ConfigProblem, Location | None]] = field(default_factory=list)  # (problem, the config entry)
    unmatched: list[tuple[str, Location]] = field(default_factory=list)  # entries that name no file
    contradictions: list[Contradiction] = field(default_factory=list)
    used: dict[str, str] = field(default_factory=dict)  # field -> provenance of a deployed value used
    defaults: dict[str, str] = field(default_factory=dict)  # field -> an engine default used, cited
    engine: str | None = None
    engine_version: str | None = None
    engine_from: str = ""
    release: str | None = None  # the defaults table row used ("vLLM 0.20.0")
    release_note: str = ""
    release_unknown: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"deployed": {
            "files": list(self.files),
            "engine": self.engine, "engine_version": self.engine_version, "engine_from": self.engine_from,
            "defaults_release": self.release, "defaults_note": self.release_note or None,
            "used": dict(self.used), "defaults": dict(self.defaults),
            "contradictions": [{"field": c.field, "budget": c.budget_text, "budget_at": str(c.budget_loc),
                                "deployed": c.deployed_text, "deployed_at": c.deployed.where, "used": c.used}
                               for c in self.contradictions],
        }}


def wants_deployed(b: Budget) -> bool:
    dep = b.deployment
    return dep is not None and bool(dep.config or dep.engine or dep.engine_version)


def _hit(b: Budget) -> Any:
    """The budget's prefix-cache hit as written, when it counts on one (None: it does not)."""
    wl = b.workload
    if wl is None or not (wl.cached_prompt_tokens > 0 or (wl.prefix_cache_hit_share or 0) > 0):
        return None
    raw = b.doc.get(b.path + ("workload", "prefix_cache_hit"))
    return raw if raw is not None else f"{numbers.stated(wl.cached_prompt_tokens)} cached tokens"


def _declared(b: Budget, *path: str) -> bool:
    return b.doc is not None and b.doc.get(b.path + path) is not None


def _loc(b: Budget, *path: str) -> Location:
    return b.doc.loc(b.path + path)


def _read(path: Path, display: str, cache: dict) -> Any:
    from budgetlint.deployed import read_deployed

    key = str(path.resolve()) if path.exists() else str(path)
    if key not in cache:
        cache[key] = read_deployed(path, display)
    return cache[key]


def resolve_deployed(b: Budget, env: Any) -> tuple[Budget, DeployedEvaluation]:
    """The budget with its deployed configuration's values (and the engine's defaults) in it."""
    from budgetlint.evaluate.evidence.store import glob_entry
    from budgetlint.files.discovery import display_path

    out = DeployedEvaluation()
    dep = b.deployment
    assert dep is not None
    cache = env.deployed_cache if hasattr(env, "deployed_cache") else {}
    roots = getattr(env.bench, "roots", None)
    base = Path(b.doc.file).parent
    for i, pattern in enumerate(dep.config):
        where = _loc(b, "deployment", "config", i)
        globbed = glob_entry(base, pattern, roots=roots)
        if globbed.refused is not None:
            out.unmatched.append((f"{pattern!r}: {globbed.refused}", where))
            continue
        if not globbed.files:
            out.unmatched.append((f"{pattern!r} names no file (relative to {display_path(base) or '.'})", where))
            continue
        for path in globbed.files:
            shown = display_path(path)
            res = _read(path, shown, cache)
            out.files.append(shown)
            out.configs.extend(res.deployed)
            out.problems.extend((p, where) for p in res.problems)
    if not dep.config and getattr(env, "deployed_discovery", ()):
        _discover(b, env, out, cache)
    primary = next((c for c in out.configs if c.role in ("", "decode")), out.configs[0] if out.configs else None)
    out.primary = primary
    new = dep
    prov = dict(dep.provenance)
    # the engine and its version: the budget's, else the deployed configuration's
    engine, version = dep.engine, dep.engine_version
    if engine:
        out.engine_from = f"deployment.engine: {engine} ({_loc(b, 'deployment', 'engine')})"
    elif primary is not None and primary.engine is not None:
        engine = primary.engine.value
        out.engine_from = primary.engine.cite()
    if version:
        out.engine_from += f"; engine_version {version} ({_loc(b, 'deployment', 'engine_version')})"
    elif primary is not None and primary.engine_version is not None and primary.engine is not None \
            and primary.engine.value == engine:
        version = primary.engine_version.value
        out.engine_from += f"; version from {primary.engine_version.cite()}"
    out.engine, out.engine_version = engine, version
    if dep.engine and primary is not None and primary.engine is not None and primary.engine.value != dep.engine:
        out.contradictions.append(Contradiction(
            "engine", f"engine: {dep.engine}", _loc(b, "deployment", "engine"), primary.engine,
            f"engine {primary.engine.value}", primary.label(), f"the verdict used the budget's {dep.engine} defaults",
            "set deployment.engine to the engine that serves, or link the configuration of that engine"))
    changes: dict[str, Any] = {}
    for cfg in out.configs:
        _compare(b, cfg, out, fill=cfg is primary, changes=changes, prov=prov)
    _engine_defaults(b, out, changes, prov, engine, version)
    if engine and not dep.engine:
        changes["engine"] = engine
    if version and not dep.engine_version:
        changes["engine_version"] = version
    if changes or prov != dep.provenance:
        new = replace(dep, provenance=prov, **changes)
        b = replace(b, deployment=new)
    return b, out


#: at most this many files are read by the config's `deployed-config` globs
MAX_DISCOVERED = 500


def _discover(b: Budget, env: Any, out: DeployedEvaluation, cache: dict) -> None:
    """The config's `deployed-config` globs: the configurations that serve this budget's model.

    The globs are walked once per run; a budget with its own `deployment.config` is not matched."""
    from budgetlint.evaluate.evidence.store import glob_entry
    from budgetlint.files.discovery import display_path

    key = ("__discovered__",) + tuple(env.deployed_discovery[1])
    if key not in cache:
        base, globs = env.deployed_discovery
        found: list = []
        for pattern in globs:
            g = glob_entry(Path(base), pattern, roots=getattr(env.bench, "roots", None))
            for path in g.files[:MAX_DISCOVERED - len(found)]:
                res = _read(path, display_path(path), cache)
                found.append((display_path(path), res))
        cache[key] = found
    for shown, res in cache[key]:
        mine = [c for c in res.deployed if c.settings.get("model") is not None
                and _model_matches(b.deployment.model, str(c.settings["model"].value))]
        if mine:
            out.files.append(shown)
            out.configs.extend(mine)


def _norm_model(name: str) -> str:
    name = name.strip().lower().removeprefix("hf://").rstrip("/")
    return re.sub(r"[^a-z0-9]", "", name.rsplit("/", 1)[-1])


def _model_matches(model: Any, served: str) -> bool | None:
    """Whether the served model is the budget's (None: cannot tell, a local path say)."""
    if model is None:
        return None
    if served.startswith("/") or served.startswith("./") or "$" in served:
        return None
    s = _norm_model(served)
    names = [model.name, *getattr(model, "aliases", ())]
    for n in names:
        m = _norm_model(str(n))
        if m and (m == s or m in s or s in m):
            return True
    return False


def _compare(b: Budget, cfg: Deployed, out: DeployedEvaluation, *, fill: bool, changes: dict, prov: dict) -> None:
    dep = b.deployment
    label = cfg.label()

    def clash(fieldname: str, budget_text: str, loc: Location, s: Setting, deployed_text: str, fix: str,
              used: str | None = None) -> None:
        out.contradictions.append(Contradiction(
            fieldname, budget_text, loc, s, deployed_text, label,
            used or f"the verdict used the budget's {budget_text.split(': ', 1)[-1]}", fix))

    def use(fieldname: str, value: Any, s: Setting, what: str) -> None:
        if fill and fieldname not in changes:
            changes[fieldname] = value
            prov[fieldname] = f"{what} from {s.cite()}"
            out.used[fieldname] = prov[fieldname]

    # the model
    served = cfg.settings.get("model")
    if served is not None and isinstance(served.value, str):
        ok = _model_matches(dep.model, served.value)
        if ok is False:
            clash("model", f"model: {dep.model.name}", _loc(b, "deployment", "model"), served,
                  f"model {served.value}", "link the configuration that serves this budget's model, or fix the "
                  "budget's deployment.model")
    # tensor parallelism <-> devices
    tp = cfg.settings.get("tensor_parallel")
    pp = cfg.settings.get("pipeline_parallel")
    if tp is not None:
        extra = f" (and pipeline-parallel {pp.value}: {pp.value * tp.value} devices a replica)" \
            if pp is not None and pp.value > 1 else ""
        if _declared(b, "deployment", "devices"):
            if dep.devices != tp.value:
                clash("devices", f"devices: {dep.devices}", _loc(b, "deployment", "devices"), tp,
                      f"tensor-parallel {tp.value}{extra}",
                      f"set deployment.devices to {tp.value}, or the deployed tensor-parallel size to {dep.devices}")
        else:
            use("devices", tp.value, tp, f"tensor-parallel {tp.value}")
    # replicas (copies of the server) x data-parallel engine copies
    reps, dp = cfg.settings.get("replicas"), cfg.settings.get("data_parallel")
    if reps is not None or (dp is not None and dp.value > 1):
        total = (reps.value if reps else 1) * (dp.value if dp else 1)
        src = reps if reps is not None else dp
        words = f"{total} replicas" + (f" ({reps.value} x data-parallel {dp.value})" if reps and dp and dp.value > 1
                                       else "")
        if _declared(b, "deployment", "replicas"):
            if dep.replicas != total:
                clash("replicas", f"replicas: {dep.replicas}", _loc(b, "deployment", "replicas"), src, words,
                      f"set deployment.replicas to {total}, or deploy {dep.replicas}")
        elif total > 1:
            use("replicas", total, src, words)
    # scheduler limits, and multi-step scheduling (vLLM V0 --num-scheduler-steps; docs/load.md "Multi-step scheduling")
    for key, words, what in (("max_num_seqs", "max-num-seqs", "scheduler limits"),
                             ("max_num_batched_tokens", "max-num-batched-tokens", "scheduler limits"),
                             ("scheduler_steps", "num-scheduler-steps", "multi-step scheduling")):
        s = cfg.settings.get(key)
        if s is None:
            continue
        if _declared(b, "deployment", key):
            if getattr(dep, key) != s.value:
                clash(key, f"{key}: {getattr(dep, key)}", _loc(b, "deployment", key), s, f"{words} {s.value}",
                      f"set deployment.{key} to {s.value}, or deploy {getattr(dep, key)}")
        else:
            use(key, s.value, s, what)
    # CUDA graphs (docs/calibration.md "Without CUDA graphs"): the engine's flag, when written
    s = cfg.settings.get("cuda_graphs")
    if s is not None and isinstance(s.value, bool):
        if _declared(b, "deployment", "cuda_graphs"):
            if dep.cuda_graphs is not s.value:
                clash("cuda_graphs", f"cuda_graphs: {str(dep.cuda_graphs).lower()}", _loc(b, "deployment", "cuda_graphs"),
                      s, "CUDA graphs " + ("on" if s.value else "off"),
                      f"set deployment.cuda_graphs to {str(s.value).lower()}, or deploy "
                      + (f"without {s.text or 'the eager flag'}" if s.value is False
                         else "without CUDA graphs (vLLM --enforce-eager, SGLang --disable-cuda-graph)"))
        else:
            use("cuda_graphs", s.value, s, "CUDA graphs " + ("on" if s.value else "off"))
    # chunked prefill (vLLM --[no-]enable-chunked-prefill, SGLang --chunked-prefill-size -1): the simulation's
    s = cfg.settings.get("chunked_prefill")
    if s is not None and isinstance(s.value, bool):
        use("chunked_prefill", s.value, s, "chunked prefill " + ("on" if s.value else "off"))
    # memory
    g = cfg.settings.get("gpu_memory_utilization")
    if g is not None:
        if _declared(b, "deployment", "memory_usable_fraction"):
            if not math.isclose(dep.memory_usable_fraction or 0.0, float(g.value), abs_tol=1e-9):
                clash("memory_usable_fraction", f"memory_usable_fraction: {numbers.stated(dep.memory_usable_fraction)}",
                      _loc(b, "deployment", "memory_usable_fraction"), g, f"memory utilisation {numbers.stated(g.value)}",
                      f"set deployment.memory_usable_fraction to {numbers.stated(g.value)}, or deploy "
                      f"{numbers.stated(dep.memory_usable_fraction)}")
        else:
            use("memory_usable_fraction", float(g.value), g, f"memory utilisation {numbers.stated(g.value)}")
    # KV cache precision
    kv = cfg.settings.get("kv_cache_dtype")
    dtype = cfg.settings.get("dtype")
    deployed_kv, kv_setting, kv_words = None, None, ""
    if kv is not None and str(kv.value).lower() != "auto":
        deployed_kv = _KV_DTYPES.get(str(kv.value).lower())
        kv_setting, kv_words = kv, f"kv-cache-dtype {kv.value}"
    elif kv is not None or dtype is not None:  # auto: the model's (or --dtype's) dtype
        d = _DTYPES.get(str(dtype.value).lower()) if dtype is not None else None
        if d is not None:
            deployed_kv, kv_setting = d, (kv or dtype)
            kv_words = f"kv-cache-dtype {kv.value if kv else 'auto'} with dtype {dtype.value}"
    if deployed_kv is not None and kv_setting is not None:
        if _declared(b, "deployment", "kv_precision"):
            if dep.kv_precision != deployed_kv:
                clash("kv_precision", f"kv_precision: {dep.kv_precision}", _loc(b, "deployment", "kv_precision"),
                      kv_setting, kv_words if kv_words.endswith(deployed_kv) else f"{kv_words} ({deployed_kv})",
                      f"set deployment.kv_precision to {deployed_kv}, or deploy --kv-cache-dtype {dep.kv_precision}")
        else:
            use("kv_precision", deployed_kv, kv_setting, f"KV cache {deployed_kv}")
    # weight precision
    q = cfg.settings.get("quantization")
    deployed_w, w_setting, w_words = None, None, ""
    if q is not None:
        deployed_w = _QUANT.get(str(q.value).lower())
        w_setting, w_words = q, f"quantization {q.value}"
    elif dtype is not None:
        deployed_w = _DTYPES.get(str(dtype.value).lower())
        w_setting, w_words = dtype, f"dtype {dtype.value}"
    if deployed_w is not None and w_setting is not None:
        if _declared(b, "deployment", "weight_precision"):
            if dep.weight_precision != deployed_w:
                clash("weight_precision", f"weight_precision: {dep.weight_precision}",
                      _loc(b, "deployment", "weight_precision"), w_setting, f"{w_words} ({deployed_w} weights)",
                      f"set deployment.weight_precision to {deployed_w}, or serve {dep.weight_precision} weights")
        else:
            use("weight_precision", deployed_w, w_setting, f"{deployed_w} weights")
    # prefix caching against the budget's hit rate
    pc = cfg.settings.get("prefix_caching")
    if pc is not None and pc.value is False and _hit(b) is not None:
        clash("prefix_cache_hit", f"prefix_cache_hit: {_hit(b)}", _loc(b, "workload", "prefix_cache_hit"),
              pc, "prefix caching off",
              "turn prefix caching on in the deployment, or set workload.prefix_cache_hit: 0",
              used=f"the verdict used the budget's hit {_hit(b)}: every prompt token is "
                   f"computed when prefix caching is off")
    # speculative decoding
    spec = cfg.settings.get("speculative")
    k = cfg.settings.get("num_speculative_tokens")
    declared_spec = _declared(b, "deployment", "speculative")
    if declared_spec and dep.accepted_tokens_per_pass > 1 and spec is None and k is None and cfg.engine is not None:
        where = Setting(False, cfg.file, cfg.line, 1, "no speculative decoding configured")
        clash("speculative", f"speculative.accepted_tokens_per_pass: {numbers.stated(dep.accepted_tokens_per_pass)}",
              _loc(b, "deployment", "speculative"), where, "no speculative decoding",
              "configure speculative decoding in the deployment, or remove deployment.speculative",
              used=f"the verdict used the budget's {numbers.stated(dep.accepted_tokens_per_pass)} accepted tokens per pass")
    if k is not None and declared_spec and dep.lookahead is not None and dep.lookahead != k.value:
        clash("lookahead", f"speculative.lookahead: {dep.lookahead}", _loc(b, "deployment", "speculative", "lookahead"),
              k, f"num_speculative_tokens {k.value}",
              f"set deployment.speculative.lookahead to {k.value}, or deploy {dep.lookahead}")
    if (spec is not None or k is not None) and not declared_spec:
        s = spec or k
        clash("speculative", "no deployment.speculative (1 token per pass)", _loc(b, "deployment"), s,
              f"speculative decoding {spec.value if spec else ''}".strip() + (f", {k.value} tokens" if k else ""),
              "declare deployment.speculative (accepted_tokens_per_pass from a measurement) to count its speed-up",
              used="the verdict used one token per pass: pessimistic for a deployment that speculates")


def _engine_defaults(b: Budget, out: DeployedEvaluation, changes: dict, prov: dict, engine: str | None,
                     version: str | None) -> None:
    from budgetlint.deployed.defaults import release_for

    chosen = release_for(engine, version)
    if chosen is None:
        if engine:
            out.release_note = f"no defaults table for engine {engine!r}: budgetlint's own assumptions apply"
        return
    rel = chosen.release
    from budgetlint.deployed.defaults import _NAMES

    out.release = f"{_NAMES.get(rel.engine, rel.engine)} {rel.version}"
    out.release_note, out.release_unknown = chosen.note, chosen.unknown
    dep = b.deployment
    hw = dep.hardware
    memory = float(hw.memory_bytes) if hw is not None and hw.memory_bytes else 0.0
    tp = changes.get("devices", dep.devices)
    shown = version or rel.version
    if not _declared(b, "deployment", "memory_usable_fraction") and "memory_usable_fraction" not in changes:
        p = rel.memory_utilization(memory, tp)
        if p is not None:
            changes["memory_usable_fraction"] = float(p.value)
            prov["memory_usable_fraction"] = f"memory utilisation {numbers.stated(p.value)}: {p.cite(rel.engine, rel.version)}"
            out.defaults["memory_usable_fraction"] = prov["memory_usable_fraction"]
    name = (hw.name if hw is not None else "").lower()
    seqs, tokens = rel.scheduler(memory, name, getattr(dep.model, "max_context", None))
    for key, p in (("max_num_seqs", seqs), ("max_num_batched_tokens", tokens)):
        if p is not None and not _declared(b, "deployment", key) and key not in changes:
            out.defaults[key] = f"{p.value}: {p.cite(rel.engine, rel.version)}"
    pc = out.primary.settings.get("prefix_caching") if out.primary is not None else None
    if pc is None:
        out.defaults["prefix_caching"] = f"{'on' if rel.prefix_caching.value else 'off'}: " \
                                         f"{rel.prefix_caching.cite(rel.engine, rel.version)}"
        if rel.prefix_caching.value is False and _hit(b) is not None:
            where = Setting(False, out.primary.file if out.primary else str(_loc(b, "deployment").file),
                            out.primary.line if out.primary else _loc(b, "deployment").line, 1,
                            f"prefix caching off by default in {_NAMES.get(rel.engine)} {shown}")
            out.contradictions.append(Contradiction(
                "prefix_cache_hit", f"prefix_cache_hit: {_hit(b)}", _loc(b, "workload", "prefix_cache_hit"),
                where, f"prefix caching off ({rel.prefix_caching.cite(rel.engine, rel.version)})",
                out.primary.label() if out.primary else f"engine {engine} {shown}",
                f"the verdict used the budget's hit {_hit(b)}",
                "turn prefix caching on (--enable-prefix-caching), or set workload.prefix_cache_hit: 0"))
    cp = out.primary.settings.get("chunked_prefill") if out.primary is not None else None
    if cp is None:
        from budgetlint.deployed.defaults import chunked_prefill_at

        p = chunked_prefill_at(rel, getattr(dep.model, "max_context", None))  # what the simulation uses
        out.defaults["chunked_prefill"] = f"{'on' if p.value else 'off'}: {p.cite(rel.engine, rel.version)}"
    bs = out.primary.settings.get("block_size") if out.primary is not None else None
    if bs is None:
        out.defaults["block_size"] = f"{rel.block_size.value} tokens: {rel.block_size.cite(rel.engine, rel.version)}"


def chunked_prefill_default(dep: Any) -> tuple[bool, str] | None:
    """(chunked prefill on, why): as the deployed configuration's flag sets it, else the default of the
    deployment's engine at its release, where pinned (deployed/defaults.py: each release's default,
    cited to its source)."""
    from budgetlint.deployed.defaults import chunked_prefill_at, release_for

    if getattr(dep, "chunked_prefill", None) is not None:
        return bool(dep.chunked_prefill), dep.provenance.get("chunked_prefill", "the deployed configuration")

    chosen = release_for(getattr(dep, "engine", None), getattr(dep, "engine_version", None))
    if chosen is None:
        return None
    rel = chosen.release
    p = chunked_prefill_at(rel, getattr(dep.model, "max_context", None) if getattr(dep, "model", None) else None)
    return bool(p.value), p.cite(rel.engine, rel.version)


def scheduler_default(dep: Any, memory_bytes: float, hardware_name: str) -> tuple[int, int, str] | None:
    """(max_num_seqs, max_num_batched_tokens, why) of the deployment's engine at its release, where pinned."""
    from budgetlint.deployed.defaults import release_for

    chosen = release_for(getattr(dep, "engine", None), getattr(dep, "engine_version", None))
    if chosen is None:
        return None
    rel = chosen.release
    seqs, tokens = rel.scheduler(memory_bytes, hardware_name.lower(), getattr(dep.model, "max_context", None))
    if seqs is None or tokens is None:
        return None
    why = seqs.cite(rel.engine, rel.version) if seqs.source == tokens.source else \
        f"{seqs.cite(rel.engine, rel.version)}; {tokens.value} tokens: {tokens.source}"
    return int(seqs.value), int(tokens.value), why
