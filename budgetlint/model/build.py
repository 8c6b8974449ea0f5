"""Validated documents -> model objects: units parsed, references resolved.

Every problem becomes a finding at the field's position; a budget whose
fields could not all be read is marked incomplete so that the physics rules
skip it instead of guessing.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import Any

from budgetlint.findings import Finding, Location, Severity
from budgetlint.files.loader import Document
from budgetlint.physics.precision import bytes_per_element
from budgetlint.model.types import (
    Budget, DeploymentDef, DisaggregatedDef, EvidencePolicy, HardwareDef, ModelDef, Promise, Segment, SloDef, Suppression, PoolDef,
    WorkloadDef,
)
from budgetlint.model.units import UnitError, parse_count, parse_quantity
from budgetlint.text import numbers

_UNIT_CODES = {"wrong-dimension": "BL005", "missing-unit": "BL006",
               "unknown-unit": "BL007", "invalid": "BL007"}


class Sink:
    """Collects findings while objects are built."""

    def __init__(self) -> None:
        self.findings: list[Finding] = []

    def add(self, code: str, message: str, where: Location, *, budget: str | None = None,
            fix: str | None = None, severity: Severity = Severity.ERROR) -> None:
        self.findings.append(Finding(code, severity, message, where, budget=budget, fix=fix))

    def quantity(self, doc: Document, path: tuple, kinds: tuple[str, ...], *,
                 field_name: str, budget: str | None = None, positive: bool = False) -> float | None:
        """Parse a quantity; report unit errors, negative values, and zero where ``positive``."""
        value = doc.get(path)
        if value is None:
            return None
        try:
            magnitude, _ = parse_quantity(value, *kinds)
        except UnitError as exc:
            self.add(_UNIT_CODES[exc.reason], f"{field_name}: {exc.message}", doc.loc(path),
                     budget=budget)
            return None
        if magnitude < 0 or (positive and magnitude == 0):
            need = "above zero" if positive else "zero or more"
            self.add("BL003", f"{field_name}: expected a value {need}; found {value!r}", doc.loc(path),
                     budget=budget)
            return None
        return magnitude


_AGE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*(d|days?|w|weeks?)\s*$", re.IGNORECASE)



#: physics effects a deployment may declare: (YAML key under ``deployment``, the
#: ``physics.shapes.Deployment`` field it sets, the quantity kinds it accepts). Adding one is
#: a line here, the schema key, and the physics (docs/design.md, "Add a physics effect").
DECLARED_EFFECTS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("iteration_overhead", "iteration_overhead_s", ("time",)),
    ("collective_latency", "collective_latency_s", ("time",)),
    ("alltoall_latency", "alltoall_latency_s", ("time",)),
)

def _parallelism(dep: dict, dp: DeploymentDef, doc: Document, dpath: tuple, sink: Sink, name: str) -> None:
    """``deployment.parallelism`` (tensor, pipeline, expert, data), ``expert_imbalance`` and
    ``interconnect`` (docs/topologies.md); ``devices`` stays the tensor degree's shorthand."""
    par = dep.get("parallelism")
    if isinstance(par, dict):
        got = {k: v for k, v in par.items() if k in ("tensor", "pipeline", "expert", "data")
               and isinstance(v, int) and not isinstance(v, bool) and v >= 1}
        if "tensor" in got:
            if isinstance(dep.get("devices"), int) and dep["devices"] != got["tensor"]:
                sink.add("BL003", f"deployment.parallelism.tensor {got['tensor']} contradicts deployment.devices "
                         f"{dep['devices']} (devices is the tensor-parallel degree): give one of them, or the same "
                         "number in both", doc.loc(dpath + ("parallelism", "tensor")), budget=name)
            dp.devices = got["tensor"]
        dp.data_parallel = got.get("data", 1)
        dp.pipeline_parallel = got.get("pipeline", 1)
        dp.expert_parallel = got.get("expert", 1)
        e = dp.expert_parallel
        if e > 1 and dp.model is not None and not dp.model.experts:
            sink.add("BL003", f"deployment.parallelism.expert {e}: model {dp.model.name!r} has no routed experts "
                     "(expert parallelism splits a mixture-of-experts model's experts): remove it, or declare "
                     "the model's experts", doc.loc(dpath + ("parallelism", "expert")), budget=name)
            dp.expert_parallel = 1
        elif e > 1 and (dp.devices * dp.data_parallel) % e:
            sink.add("BL003", f"deployment.parallelism.expert {e} does not divide tensor x data = "
                     f"{dp.devices} x {dp.data_parallel} = {dp.devices * dp.data_parallel} (the experts are split "
                     "over the devices of a stage)", doc.loc(dpath + ("parallelism", "expert")), budget=name)
            dp.expert_parallel = 1
    imb = dep.get("expert_imbalance")
    if isinstance(imb, (int, float)) and not isinstance(imb, bool) and math.isfinite(imb) and imb >= 1:
        dp.expert_imbalance = float(imb)
    link = dep.get("interconnect")
    if isinstance(link, str) and link.strip():
        from .links import LINKS, link_named  # a small table; imported when a deployment names a link

        found = link_named(link)
        if found is None:
            sink.add("BL008", f"deployment.interconnect {link!r} is not a known link (known: "
                     f"{', '.join(sorted(LINKS))}); or give alltoall_bandwidth as a quantity",
                     doc.loc(dpath + ("interconnect",)), budget=name)
        else:
            dp.interconnect = found.name
            dp.effects.setdefault("alltoall_bandwidth_bytes_per_s", found.bandwidth_bytes_per_s)
    if "alltoall_bandwidth" in dep:
        value = sink.quantity(doc, dpath + ("alltoall_bandwidth",), ("bandwidth",),
                              field_name="deployment.alltoall_bandwidth", budget=name, positive=True)
        if value is not None:
            dp.effects["alltoall_bandwidth_bytes_per_s"] = value


def _disaggregated(d: dict, dp: DeploymentDef, doc: Document, path: tuple, catalog: Catalog, sink: Sink,
                   name: str) -> DisaggregatedDef | None:
    """``deployment.disaggregated``: the two pools and the KV link (docs/topologies.md)."""
    before = len(sink.findings)
    out = DisaggregatedDef()
    for role in ("prefill", "decode"):
        pd = d.get(role)
        pool = PoolDef(role=role)
        if isinstance(pd, dict):
            if isinstance(pd.get("hardware"), str):
                pool.hardware = _resolve(pd["hardware"], doc, path + (role, "hardware"), "hardware", catalog, sink,
                                         name)
            for key, attr in (("devices", "devices"), ("replicas", "replicas")):
                v = pd.get(key)
                if isinstance(v, int) and not isinstance(v, bool) and v >= 1:
                    setattr(pool, attr, v)
            par = pd.get("parallelism")
            if isinstance(par, dict):
                for key, attr in (("tensor", "devices"), ("data", "data_parallel"), ("pipeline", "pipeline_parallel"),
                                  ("expert", "expert_parallel")):
                    v = par.get(key)
                    if isinstance(v, int) and not isinstance(v, bool) and v >= 1:
                        if attr == "devices" and pool.devices is not None and pool.devices != v:
                            sink.add("BL003", f"deployment.disaggregated.{role}.parallelism.tensor {v} contradicts "
                                     f"its devices {pool.devices} (devices is the tensor-parallel degree)",
                                     doc.loc(path + (role, "parallelism", "tensor")), budget=name)
                        setattr(pool, attr, v)
        setattr(out, role, pool)
    link = d.get("kv_link")
    where = path + ("kv_link",)
    named = link if isinstance(link, str) else (link.get("link") if isinstance(link, dict) else None)
    if isinstance(link, dict) and "bandwidth" in link:
        out.kv_bandwidth_bytes_per_s = sink.quantity(doc, where + ("bandwidth",), ("bandwidth",),
                                                     field_name="deployment.disaggregated.kv_link.bandwidth",
                                                     budget=name, positive=True)
    elif isinstance(named, str) and named.strip()[:1] in tuple("0123456789.+"):
        out.kv_bandwidth_bytes_per_s = sink.quantity(doc, where, ("bandwidth",),
                                                     field_name="deployment.disaggregated.kv_link", budget=name,
                                                     positive=True)
        named = None
    if isinstance(named, str) and named.strip():
        from .links import LINKS, link_named

        found = link_named(named)
        if found is None:
            sink.add("BL008", f"deployment.disaggregated.kv_link {named!r} is not a known link (known: "
                     f"{', '.join(sorted(LINKS))}); or give its bandwidth, \"50 GB/s\"",
                     doc.loc(where + (("link",) if isinstance(link, dict) else ())), budget=name)
        else:
            out.kv_link = found.name
            if out.kv_bandwidth_bytes_per_s is None:
                out.kv_bandwidth_bytes_per_s = found.bandwidth_bytes_per_s
    if isinstance(link, dict) and "latency" in link:
        out.kv_latency_s = sink.quantity(doc, where + ("latency",), ("time",),
                                         field_name="deployment.disaggregated.kv_link.latency", budget=name) or 0.0
    if out.kv_bandwidth_bytes_per_s is None:
        if len(sink.findings) == before:  # nothing said yet (a unit error, an unknown name, a bare number)
            sink.add("BL003", "deployment.disaggregated.kv_link: expected a link name (such as \"infiniband-ndr\"), "
                     "a bandwidth (\"50 GB/s\") or {bandwidth: 50 GB/s, latency: 1 ms}; found "
                     + ("no bandwidth and no link name" if isinstance(link, dict) else repr(link)),
                     doc.loc(where), budget=name)
        return None
    return out


def parse_age(value: Any) -> float | None:
    """``"90 days"`` / ``"12 weeks"`` / ``"30 d"`` -> days; None when not an age."""
    if isinstance(value, bool) or not isinstance(value, str):
        return None
    m = _AGE.match(value)
    if not m:
        return None
    n = float(m.group(1))
    return n * 7.0 if m.group(2).lower().startswith("w") else n


def normalise_percentile(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        text = f"{numbers.stated(value)}"
    else:
        text = str(value).strip().lower()
        if text == "median":
            return "p50"
        text = text[1:] if text.startswith("p") else text
    return f"p{text}"


# --------------------------------------------------------------------------- catalog


#: what a name is compared by when not as written: lower case, without spaces, '-', '_' and '/'
_PUNCTUATION = re.compile(r"[\s_\-/]+")
#: an instruction-tuned variant's word in a model name: "-Instruct", "-chat", "-it" (Gemma)
_VARIANT = re.compile(r"[-_ ](?:instruct|chat|it)(?=$|[-_ ])", re.IGNORECASE)


def normal_name(name: str) -> str:
    """A catalog name as :meth:`Catalog.find` compares it: lower case, no spaces, '-', '_' or '/'."""
    return _PUNCTUATION.sub("", name.lower())


_normal = normal_name


class Catalog:
    """Hardware and model definitions by lower-cased name and alias."""

    def __init__(self) -> None:
        self.hardware: dict[str, HardwareDef] = {}
        self.models: dict[str, ModelDef] = {}
        self._suggested: dict[tuple[int, str], str | None] = {}  # did-you-mean answers, bounded per run
        self._norm: dict[int, tuple[int, dict]] = {}  # Catalog.find's punctuation-blind index, per table

    @staticmethod
    def _add(table: dict, entry: Any) -> None:
        for key in (entry.name, *entry.aliases):
            table[key.lower()] = entry

    def add_hardware(self, hw: HardwareDef) -> None:
        self._add(self.hardware, hw)

    def add_model(self, m: ModelDef) -> None:
        self._add(self.models, m)

    @staticmethod
    def _unique(table: dict) -> list:
        seen: dict[int, Any] = {}
        for entry in table.values():
            seen.setdefault(id(entry), entry)
        return sorted(seen.values(), key=lambda e: e.name)

    def all_hardware(self) -> list[HardwareDef]:
        return self._unique(self.hardware)

    def all_models(self) -> list[ModelDef]:
        return self._unique(self.models)

    def find(self, name: str, table: dict) -> tuple[Any, str | None]:
        """The entry ``name`` means, and how it was read when not as written.

        As written (case aside), else with punctuation and spaces aside (``h100-sxm5`` is the
        alias "H100 SXM5"), else without an organisation prefix (``meta-llama/``), else -- a
        model -- without an ``-instruct`` / ``-chat`` / ``-it`` variant word: the instruction-tuned
        model has its base model's architecture, which is all budgetlint reads
        (``Llama-3.1-70B-Instruct`` is llama-3.1-70b). Returns ``(entry, None)``,
        ``(entry, "variant")`` for the last, or ``(None, None)``.
        """
        found = table.get(name.lower())
        if found is not None:
            return found, None
        index = self._normalised(table)
        bare = name.rsplit("/", 1)[-1]
        for candidate in (name, bare):
            found = index.get(_normal(candidate))
            if found is not None:
                return found, None
        if table is self.models:
            for candidate in (name, bare):
                base = _VARIANT.sub("", candidate)
                if base != candidate:
                    found = index.get(_normal(base))
                    if found is not None:
                        return found, "variant"
        return None, None

    def _normalised(self, table: dict) -> dict:
        """``table`` by :func:`_normal` key (a key two entries share maps to neither), rebuilt when the
        table has grown."""
        cached = self._norm.get(id(table))
        if cached is not None and cached[0] == len(table):
            return cached[1]
        index: dict[str, Any] = {}
        clash: set[str] = set()
        for key, entry in table.items():
            k = _normal(key)
            if k in index and index[k] is not entry:
                clash.add(k)
            index[k] = entry
        for k in clash:
            del index[k]
        self._norm[id(table)] = (len(table), index)
        return index

    def suggest(self, name: str, table: dict) -> str | None:
        """The entry name closest to ``name`` (did-you-mean), in bounded time (budgetlint.model.suggest)."""
        from budgetlint.model.suggest import MAX_WORDS, closest, is_typo_of

        key = (id(table), name.lower())
        if key not in self._suggested:
            if len(self._suggested) >= MAX_WORDS:
                return None
            self._suggested[key] = closest(name.lower(), list(table), cutoff=0.6)
        close = self._suggested[key]
        if close is not None and not is_typo_of(name, close):
            return None  # only a near match is a suggestion (llama-3.3-70b is another model)
        return table[close].name if close in table else None


def _as_list(value: Any) -> list:
    """A list as written, or empty when the schema already reported something else."""
    return value if isinstance(value, list) else []


def _strs(value: Any) -> tuple[str, ...]:
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def build_hardware(doc: Document, path: tuple, sink: Sink, *, builtin: bool = False,
                   base: HardwareDef | None = None) -> HardwareDef:
    d = doc.get(path) or {}
    hw = replace(base, doc=doc, path=path, builtin=builtin, aliases=()) if base else HardwareDef(doc, path)
    hw.builtin = builtin
    hw.name = d.get("name", hw.name)
    hw.aliases = _strs(d.get("aliases"))
    hw.vendor = d.get("vendor", hw.vendor)
    label = f"hardware {hw.name!r}"
    if "memory" in d:
        hw.memory_bytes = sink.quantity(doc, path + ("memory",), ("information",), field_name=f"{label} memory", positive=True)
    if "bandwidth" in d:
        hw.bandwidth_bytes_per_s = sink.quantity(doc, path + ("bandwidth",), ("bandwidth",),
                                                 field_name=f"{label} bandwidth", positive=True)
    if isinstance(d.get("compute"), dict):
        compute = dict(hw.compute_flop_per_s)
        for prec in d["compute"]:
            value = sink.quantity(doc, path + ("compute", prec), ("compute_rate",),
                                  field_name=f"{label} compute.{prec}", positive=True)
            if value is not None:
                compute[str(prec)] = value
        hw.compute_flop_per_s = compute
    if "interconnect" in d:
        hw.interconnect_bytes_per_s = sink.quantity(doc, path + ("interconnect",), ("bandwidth",),
                                                    field_name=f"{label} interconnect", positive=True)
    if "tdp" in d:
        hw.tdp_w = sink.quantity(doc, path + ("tdp",), ("power",), field_name=f"{label} tdp", positive=True)
    if "price" in d:
        hw.price_usd_per_s = sink.quantity(doc, path + ("price",), ("price_rate",), field_name=f"{label} price",
                                           positive=True)
    hw.source = d.get("source", hw.source)
    hw.notes = d.get("notes", hw.notes)
    return hw


_MODEL_INTS = ("layers", "hidden_size", "attention_heads", "kv_heads", "head_dim",
               "kv_lora_rank", "qk_rope_head_dim", "sliding_window", "sliding_window_layers",
               "experts", "experts_per_token", "moe_layers", "max_context", "vocab_size")


def build_model(doc: Document, path: tuple, sink: Sink, *, builtin: bool = False,
                base: ModelDef | None = None) -> ModelDef:
    d = doc.get(path) or {}
    m = replace(base, doc=doc, path=path, aliases=()) if base else ModelDef(doc, path)
    m.builtin = builtin
    m.name = d.get("name", m.name)
    m.aliases = _strs(d.get("aliases"))
    for key in ("parameters", "active_parameters"):
        if key in d:
            try:
                count = parse_count(d[key])
            except UnitError as exc:
                sink.add("BL007", f"model {m.name!r} {key}: {exc.message}", doc.loc(path + (key,)))
                continue
            if count <= 0:
                sink.add("BL003", f"model {m.name!r} {key}: expected a count above zero; found {d[key]!r}",
                         doc.loc(path + (key,)))
                continue
            setattr(m, key, count)
    for key in _MODEL_INTS:
        if isinstance(d.get(key), int):
            setattr(m, key, d[key])
    if isinstance(d.get("attention"), str):
        m.attention = d["attention"]
    if isinstance(d.get("tie_word_embeddings"), bool):
        m.tie_word_embeddings = d["tie_word_embeddings"]
    m.source = d.get("source", m.source)
    if m.head_dim is None and m.hidden_size and m.attention_heads:
        m.head_dim = m.hidden_size // m.attention_heads
    if m.kv_heads is None and m.attention_heads and m.attention == "mha":
        m.kv_heads = m.attention_heads
    return m


def add_entries(catalog: Catalog, doc: Document, kind: str, sink: Sink, *, builtin: bool,
                user_names: dict[str, Location] | None = None) -> None:
    """Add a hardware or models document's entries to the catalog (``extends`` resolved)."""
    key = "hardware" if kind == "hardware" else "models"
    entries = _as_list(doc.get((key,)))
    table = catalog.hardware if kind == "hardware" else catalog.models
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            continue
        path = (key, i)
        name = entry["name"]
        base = None
        ext = entry.get("extends")
        if isinstance(ext, str):
            base = table.get(ext.lower())
            if base is None:
                hint = catalog.suggest(ext, table)
                sink.add("BL008", f"{kind} {name!r} extends unknown entry {ext!r}"
                         + (f"; did you mean {hint!r}?" if hint else ""),
                         doc.loc(path + ("extends",)))
        if user_names is not None:
            lowered = name.lower()
            if lowered in user_names:
                sink.add("BL009", f"{kind} entry {name!r} is already defined at {user_names[lowered]}",
                         doc.loc(path + ("name",)), fix="rename one of them, or use `extends:`")
                continue
            user_names[lowered] = doc.loc(path + ("name",))
        if kind == "hardware":
            catalog.add_hardware(build_hardware(doc, path, sink, builtin=builtin, base=base))
        else:
            catalog.add_model(build_model(doc, path, sink, builtin=builtin, base=base))


# --------------------------------------------------------------------------- budgets


def _resolve(ref: Any, doc: Document, path: tuple, kind: str, catalog: Catalog, sink: Sink,
             budget: str) -> Any:
    table = catalog.hardware if kind == "hardware" else catalog.models
    if isinstance(ref, str):
        found, how = catalog.find(ref, table)
        if how == "variant":
            sink.add("BL506", f"model {ref!r} is read as {found.name!r}: an instruction-tuned variant has its "
                     "base model's architecture (layers, heads, parameters), which is all the physics reads",
                     doc.loc(path), budget=budget, severity=Severity.INFO,
                     fix=f"write {found.name!r} to say so, or define the variant in a `kind: models` file")
        if found is None:
            hint = catalog.suggest(ref, table)
            what = "hardware" if kind == "hardware" else "model"
            sink.add("BL008", f"unknown {what} {ref!r}" + (f"; did you mean {hint!r}?" if hint else ""),
                     doc.loc(path), budget=budget,
                     fix=f"use a name from `budgetlint catalog {'hardware' if kind == 'hardware' else 'models'}` "
                     f"or define it in a `kind: {'hardware' if kind == 'hardware' else 'models'}` file")
        return found
    if isinstance(ref, dict):
        base = None
        if isinstance(ref.get("extends"), str):
            base = table.get(ref["extends"].lower())
            if base is None:
                sink.add("BL008", f"inline {kind} extends unknown entry {ref['extends']!r}",
                         doc.loc(path + ("extends",)), budget=budget)
        if kind == "hardware":
            return build_hardware(doc, path, sink, base=base)
        return build_model(doc, path, sink, base=base)
    return None


def _length(value: Any, doc: Document, path: tuple, sink: Sink, budget: str, *,
            minimum: int = 0) -> tuple | None:
    """A length distribution as a plain tuple (types.WorkloadDef), or None for an integer.

    The schema has checked the shape; what it cannot check is reported here."""
    if not isinstance(value, dict):
        return None
    field_name = ".".join(str(p) for p in path[2:])
    if isinstance(value.get("uniform"), list) and len(value["uniform"]) == 2:
        lo, hi = value["uniform"]
        if isinstance(lo, int) and isinstance(hi, int):
            if hi < lo or lo < minimum:
                sink.add("BL003", f"{field_name}: uniform range [{lo}, {hi}] is empty or below {minimum}",
                         doc.loc(path + ("uniform",)), budget=budget)
                return None
            return ("uniform", lo, hi)
    ln = value.get("lognormal")
    if isinstance(ln, dict):
        mean, p95, top = ln.get("mean"), ln.get("p95"), ln.get("max")
        if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (mean, p95)):
            from budgetlint.physics.traffic import lognormal_params

            try:
                lognormal_params(float(mean), float(p95))
            except ValueError as exc:
                sink.add("BL003", f"{field_name}: {exc}", doc.loc(path + ("lognormal",)), budget=budget)
                return None
            return ("lognormal", float(mean), float(p95), top if isinstance(top, int) else None)
    src = value.get("from_bench")
    if isinstance(src, str) and src.strip():
        # read by the evaluation stage (evaluate/lengths.py): the model reads no file
        return ("bench", src)
    vals = value.get("values")
    if isinstance(vals, list) and vals and all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
        if min(vals) < minimum:
            sink.add("BL003", f"{field_name}: values must be at least {minimum}", doc.loc(path + ("values",)),
                     budget=budget)
            return None
        return ("values", tuple(vals))
    return None


def _mean_tokens(dist: tuple | None, default: int) -> int:
    if dist is None:
        return default
    if dist[0] == "uniform":
        return int(round((dist[1] + dist[2]) / 2))
    if dist[0] == "lognormal":
        return int(round(dist[1]))
    if dist[0] == "bench":  # the file's mean, once the evaluation has read it
        return default
    return int(round(sum(dist[1]) / len(dist[1])))


def build_budget(doc: Document, index: int, catalog: Catalog, sink: Sink) -> Budget:
    path = ("budgets", index)
    d = doc.get(path) or {}
    name = d.get("name") if isinstance(d.get("name"), str) else f"budgets[{index}]"
    before = len(sink.findings)
    b = Budget(doc, path, name=name)
    b.description = d.get("description")
    b.owner = d.get("owner") if isinstance(d.get("owner"), str) else None
    b.cost_owner = d.get("cost_owner") if isinstance(d.get("cost_owner"), str) else None
    b.percentile = normalise_percentile(d.get("percentile"))

    def q(sub: tuple, kinds: tuple[str, ...], label: str) -> float | None:
        return sink.quantity(doc, path + sub, kinds, field_name=label, budget=name)

    w = d.get("workload")
    if isinstance(w, dict):
        prompt_dist = _length(w.get("prompt_tokens"), doc, path + ("workload", "prompt_tokens"), sink, name)
        output_dist = _length(w.get("output_tokens"), doc, path + ("workload", "output_tokens"), sink, name,
                              minimum=1)
        wl = WorkloadDef(
            prompt_tokens=w.get("prompt_tokens", 0) if isinstance(w.get("prompt_tokens"), int)
            else _mean_tokens(prompt_dist, 0),
            output_tokens=w.get("output_tokens", 1) if isinstance(w.get("output_tokens"), int)
            else max(1, _mean_tokens(output_dist, 1)),
            prompt_dist=prompt_dist, output_dist=output_dist,
            concurrency=w.get("concurrency", 1) if isinstance(w.get("concurrency"), int) else 1,
            shared_prefix_tokens=w.get("shared_prefix_tokens")
            if isinstance(w.get("shared_prefix_tokens"), int) else None,
            measured_at=w.get("measured_at", "server") if w.get("measured_at") in ("server", "client") else "server",
        )
        hit = w.get("prefix_cache_hit")
        if isinstance(hit, (int, float)) and not isinstance(hit, bool):
            if 0 <= hit <= 1:
                wl.cached_prompt_tokens = hit * wl.prompt_tokens
                wl.prefix_cache_hit_share = float(hit)  # `from_bench` prompts: applied to the file's mean
            else:
                sink.add("BL003", f"workload.prefix_cache_hit: expected a fraction between 0 and 1 "
                         f"or tokens such as \"1800 token\"; found the number {hit}",
                         doc.loc(path + ("workload", "prefix_cache_hit")), budget=name)
        elif hit is not None:
            tokens = q(("workload", "prefix_cache_hit"), ("tokens",), "workload.prefix_cache_hit")
            if tokens is not None:
                from_file = isinstance(prompt_dist, tuple) and prompt_dist[0] == "bench"  # checked once read
                if tokens < 0 or (tokens > wl.prompt_tokens and not from_file):
                    sink.add("BL003", f"workload.prefix_cache_hit: {hit!r} is more than the "
                             f"{wl.prompt_tokens} prompt tokens", doc.loc(path + ("workload", "prefix_cache_hit")),
                             budget=name)
                else:
                    wl.cached_prompt_tokens = tokens
        if "arrival_rate" in w:
            wl.arrival_rate_per_s = q(("workload", "arrival_rate"), ("request_rate",), "workload.arrival_rate")
            if wl.arrival_rate_per_s == 0:
                sink.add("BL003", "workload.arrival_rate: expected a rate above zero; found "
                         f"{w['arrival_rate']!r}", doc.loc(path + ("workload", "arrival_rate")), budget=name)
                wl.arrival_rate_per_s = None
        if w.get("arrival_rate_per") in ("service", "replica"):
            wl.arrival_rate_per = w["arrival_rate_per"]
        if w.get("arrival") in ("poisson", "constant", "gamma"):
            wl.arrival = w["arrival"]
        cv = w.get("arrival_cv")
        if isinstance(cv, (int, float)) and not isinstance(cv, bool) and 1e-3 <= cv <= 1e3:  # else BL003 (schema)
            wl.arrival_cv = float(cv)
        share = w.get("prefix_cache_hit_requests")
        if isinstance(share, (int, float)) and not isinstance(share, bool) and 0 <= share <= 1:
            wl.prefix_cache_hit_requests = float(share)
        b.workload = wl

    p = d.get("promise") if isinstance(d.get("promise"), dict) else {}
    pr = Promise()
    if "ttft" in p:
        pr.ttft_s = q(("promise", "ttft"), ("time",), "promise.ttft")
    if "e2e" in p:
        pr.e2e_s = q(("promise", "e2e"), ("time",), "promise.e2e")
    if "tpot" in p:
        value = sink.quantity(doc, path + ("promise", "tpot"), ("time_per_token", "time"),
                              field_name="promise.tpot", budget=name)
        pr.tpot_s = value
    if "pace" in p:
        pace = q(("promise", "pace"), ("pace",), "promise.pace")
        if pace is not None and pace > 0:
            if pr.tpot_s is not None and abs(pr.tpot_s * pace - 1) > 1e-6:
                sink.add("BL003", f"promise gives both tpot ({p['tpot']}) and pace ({p['pace']}), "
                         "and they disagree; give one", doc.loc(path + ("promise", "pace")), budget=name)
            pr.tpot_s = 1.0 / pace
            pr.pace_given = True
        elif pace is not None:
            sink.add("BL003", f"promise.pace: expected a pace above 0; found {p['pace']!r}",
                     doc.loc(path + ("promise", "pace")), budget=name)
    if "throughput" in p:
        try:
            value, kind = parse_quantity(p["throughput"], "request_rate", "pace")
        except UnitError as exc:
            sink.add(_UNIT_CODES[exc.reason], f"promise.throughput: {exc.message}",
                     doc.loc(path + ("promise", "throughput")), budget=name)
        else:
            if value <= 0:
                sink.add("BL003", f"promise.throughput: expected a rate above zero; found {p['throughput']!r}",
                         doc.loc(path + ("promise", "throughput")), budget=name)
            elif kind == "request_rate":
                pr.throughput_request_per_s = value
            else:
                pr.throughput_token_per_s = value
    if "cost" in p:
        pr.cost_usd_per_token = sink.quantity(doc, path + ("promise", "cost"), ("cost_per_token",),
                                              field_name="promise.cost", budget=name, positive=True)
    if "slo_attainment" in p:
        pr.slo_attainment = _attainment(p["slo_attainment"])
        if pr.slo_attainment is None:
            sink.add("BL003", f"promise.slo_attainment: expected a share above 0 % and below 100 % "
                     f"(\"95 %\" or 0.95); found {p['slo_attainment']!r}",
                     doc.loc(path + ("promise", "slo_attainment")), budget=name)
    for key, value in (("ttft", pr.ttft_s), ("e2e", pr.e2e_s), ("tpot", pr.tpot_s)):
        if value is not None and value <= 0:
            sink.add("BL003", f"promise.{key}: expected a positive time; found {p.get(key)!r}",
                     doc.loc(path + ("promise", key)), budget=name)
            setattr(pr, f"{key}_s", None)
    b.promise = pr

    for i, s in enumerate(_as_list(d.get("segments"))):
        if not isinstance(s, dict):
            continue
        seg = Segment(doc, path + ("segments", i), name=str(s.get("name", f"segments[{i}]")),
                      kind=s.get("kind", "other") if isinstance(s.get("kind"), str) else "other",
                      owner=s.get("owner") if isinstance(s.get("owner"), str) else None)
        if "allowance" in s:
            seg.allowance_s = q(("segments", i, "allowance"), ("time",), f"segment {seg.name!r} allowance")
        if "pace" in s:
            seg.pace_token_per_s = q(("segments", i, "pace"), ("pace",), f"segment {seg.name!r} pace")
        b.segments.append(seg)

    if "queue" in d:
        b.queue_s = q(("queue",), ("time",), "queue")
    e = d.get("edge")
    if isinstance(e, dict):
        if "connection_setup" in e:
            b.connection_setup_s = q(("edge", "connection_setup"), ("time",), "edge.connection_setup")
        if isinstance(e.get("proxy_flush_tokens"), int):
            b.proxy_flush_tokens = e["proxy_flush_tokens"]

    dep = d.get("deployment")
    if isinstance(dep, dict):
        dp = DeploymentDef()
        dpath = path + ("deployment",)
        dp.model = _resolve(dep.get("model"), doc, dpath + ("model",), "models", catalog, sink, name)
        dp.hardware = _resolve(dep.get("hardware"), doc, dpath + ("hardware",), "hardware", catalog, sink, name)
        if isinstance(dep.get("devices"), int):
            dp.devices = dep["devices"]
        for key in ("weight_precision", "kv_precision", "compute_precision"):
            if isinstance(dep.get(key), str):  # other types: the schema reports them (BL003)
                try:
                    bytes_per_element(dep[key])
                except ValueError as exc:
                    sink.add("BL003", f"deployment.{key}: {exc}", doc.loc(dpath + (key,)), budget=name)
                else:
                    setattr(dp, key, dep[key].strip().lower())
        spec = dep.get("speculative")
        if isinstance(spec, dict):
            acc = spec.get("accepted_tokens_per_pass")
            if isinstance(acc, (int, float)) and not isinstance(acc, bool) and acc >= 1:
                dp.accepted_tokens_per_pass = float(acc)
            if isinstance(spec.get("lookahead"), int):
                dp.lookahead = spec["lookahead"]
            if "draft_model" in spec:
                dp.draft_model = _resolve(spec["draft_model"], doc, dpath + ("speculative", "draft_model"),
                                          "models", catalog, sink, name)
        eff = dep.get("efficiency")
        if isinstance(eff, dict):
            dp.efficiency_bandwidth = eff.get("bandwidth") if isinstance(eff.get("bandwidth"), (int, float)) else None
            dp.efficiency_compute = eff.get("compute") if isinstance(eff.get("compute"), (int, float)) else None
        for key in ("collective_overhead", "memory_usable_fraction"):
            if isinstance(dep.get(key), (int, float)) and not isinstance(dep.get(key), bool):
                setattr(dp, key, float(dep[key]))
        for key in ("replicas", "max_num_seqs", "max_num_batched_tokens", "scheduler_steps"):
            if isinstance(dep.get(key), int) and not isinstance(dep.get(key), bool) and dep[key] >= 1:
                setattr(dp, key, dep[key])
        if isinstance(dep.get("calibration"), str) and dep["calibration"].strip():
            dp.calibration = dep["calibration"].strip()
        if isinstance(dep.get("engine"), str) and dep["engine"].strip():
            dp.engine = dep["engine"].strip().lower()
        if isinstance(dep.get("engine_version"), str) and dep["engine_version"].strip():
            dp.engine_version = dep["engine_version"].strip()
        if isinstance(dep.get("cuda_graphs"), bool):  # other types: the schema reports them (BL003)
            dp.cuda_graphs = dep["cuda_graphs"]
        dp.config = [c.strip() for c in _as_list(dep.get("config")) if isinstance(c, str) and c.strip()]
        if dep.get("load_balancer") in ("round_robin", "least_loaded", "random"):
            dp.load_balancer = dep["load_balancer"]
        if "price" in dep:
            # above zero: a price of zero (or below) is a typo, not a free device (BL003, one message)
            dp.price_usd_per_s = sink.quantity(doc, path + ("deployment", "price"), ("price_rate",),
                                               field_name="deployment.price", budget=name, positive=True)
        if "power" in dep:
            dp.power_w = sink.quantity(doc, path + ("deployment", "power"), ("power",),
                                       field_name="deployment.power", budget=name, positive=True)
        if "memory_overhead" in dep:
            dp.memory_overhead_bytes = q(("deployment", "memory_overhead"), ("information",),
                                         "deployment.memory_overhead")
        for key, field_name, kinds in DECLARED_EFFECTS:
            if key in dep:
                value = q(("deployment", key), kinds, f"deployment.{key}")
                if value is not None:
                    dp.effects[field_name] = value
        _parallelism(dep, dp, doc, dpath, sink, name)
        if isinstance(dep.get("disaggregated"), dict):
            dp.disaggregated = _disaggregated(dep["disaggregated"], dp, doc, dpath + ("disaggregated",),
                                              catalog, sink, name)
        b.deployment = dp

    for item in _as_list(d.get("bench")):
        if isinstance(item, str):
            b.bench.append(item)
            b.bench_expires.append(None)
        elif isinstance(item, dict) and isinstance(item.get("path"), str):
            b.bench.append(item["path"])
            b.bench_expires.append(str(item["expires"]) if item.get("expires") is not None else None)
    ev = d.get("evidence")
    if isinstance(ev, dict):
        pol = EvidencePolicy()
        if "max_age" in ev:
            pol.max_age_days = parse_age(ev["max_age"])  # not an age: the schema check reports it
        if isinstance(ev.get("engine"), str):
            pol.engine = ev["engine"]
        if isinstance(ev.get("engine_version"), (str, int, float)) and not isinstance(ev.get("engine_version"), bool):
            pol.engine_version = str(ev["engine_version"])
        b.evidence = pol
    if isinstance(d.get("slo"), dict):
        b.slo = _slo_def(d["slo"])
    for i, s in enumerate(_as_list(d.get("suppress"))):
        if isinstance(s, dict) and isinstance(s.get("rule"), str):
            b.suppressions.append(Suppression(doc, path + ("suppress", i), rule=s["rule"],
                                              reason=s.get("reason") if isinstance(s.get("reason"), str) else None,
                                              expires=str(s["expires"]) if s.get("expires") is not None else None))
    b.complete = not any(f.severity > Severity.INFO for f in sink.findings[before:])  # a note (BL506) is no gap
    return b


def _attainment(value: Any) -> float | None:
    """``"95 %"`` or ``0.95`` -> 0.95; None when it is no share strictly between 0 and 1."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        share = float(value)
    elif isinstance(value, str) and value.strip().endswith("%"):
        try:
            share = float(value.strip()[:-1]) / 100.0
        except ValueError:
            return None
    else:
        return None
    return share if math.isfinite(share) and 0.0 < share < 1.0 else None


_WINDOW_UNITS = {"m": 60.0, "h": 3600.0, "d": 86400.0, "w": 7 * 86400.0}


def window_seconds(text: str) -> float | None:
    """A Prometheus-style duration ``"30d"`` / ``"4w"`` / ``"6h"`` in seconds, or None."""
    text = text.strip() if isinstance(text, str) else ""
    if len(text) < 2 or text[-1] not in _WINDOW_UNITS or not text[:-1].isdigit() or int(text[:-1]) < 1:
        return None
    return int(text[:-1]) * _WINDOW_UNITS[text[-1]]


def _slo_def(raw: dict) -> SloDef:
    """The budget's ``slo:`` block (the schema check has reported anything malformed; it is skipped here)."""
    out = SloDef(declared=True)
    seconds = window_seconds(raw.get("window", ""))
    if seconds is not None:
        out.window, out.window_s = raw["window"].strip(), seconds
    for key in ("selectors", "labels"):
        if isinstance(raw.get(key), dict):
            setattr(out, key, {str(k): v for k, v in raw[key].items() if isinstance(v, str)})
    if isinstance(raw.get("buckets"), dict):
        for key, edges in raw["buckets"].items():
            if isinstance(edges, list):
                clean = sorted({float(e) for e in edges if isinstance(e, (int, float)) and not isinstance(e, bool)
                                and math.isfinite(e) and e > 0})
                if clean:
                    out.buckets[str(key)] = tuple(clean)
    if isinstance(raw.get("goodput"), str):
        thresholds: dict[str, float] = {}
        for part in raw["goodput"].split():
            key, _, ms = part.partition(":")
            try:
                thresholds[key] = float(ms) / 1000.0
            except ValueError:
                continue
        out.goodput = thresholds or None
    return out
