"""YAML deployed configurations: Kubernetes manifests, compose files, llm-d Helm values,
KServe ``LLMInferenceService``, Dynamo ``DynamoGraphDeployment`` and vLLM ``--config`` files.

Every reader gets the file's documents as :class:`budgetlint.files.loader.Document`
(the safe, bounded loader of the budgets, which knows each value's line and
column) and the raw lines (to place each word of a command written as one
string, a folded or block scalar, on its own line).
"""

from __future__ import annotations

from typing import Any

from budgetlint.deployed import Deployed, ConfigProblem, ReadResult, Setting
from budgetlint.deployed.args import Token, apply_args, find_invocations, normalise, shell_tokens, tokens_from_items
from budgetlint.deployed.images import engine_of_image
from budgetlint.files.loader import Document

#: Kubernetes kinds whose pod template serves (anything with `containers` is looked at)
_WORKLOADS = ("Deployment", "StatefulSet", "Pod", "LeaderWorkerSet", "DaemonSet", "ReplicaSet", "Job")
#: how deep a manifest is searched for `containers:` lists
_MAX_DEPTH = 12
#: words of one command string placed on their own lines (more keep the string's start: bounded time)
MAX_RELOCATED = 2000


class ManifestCtx:
    def __init__(self, display: str, lines: list[str], out: ReadResult) -> None:
        self.display = display
        self.lines = lines
        self.out = out

    @property
    def problems(self) -> list[ConfigProblem]:
        return self.out.problems

    def setting(self, doc: Document, path: tuple, value: Any, text: str) -> Setting:
        loc = doc.loc(path)
        return Setting(value, self.display, loc.line, loc.column, text)


def _relocate(tokens: list[Token], lines: list[str], start_line: int) -> list[Token]:
    """Place each token of a (folded) scalar on the line of the raw text that holds it."""
    out: list[Token] = []
    cursor = max(1, start_line)
    if len(tokens) > MAX_RELOCATED:  # a hostile wall of words: keep the scalar's own positions (bounded time)
        return [t for t in tokens if not t.end]
    for t in tokens:
        if t.end:
            continue
        found = None
        for ln in range(cursor, min(len(lines), cursor + 200) + 1):
            col = lines[ln - 1].find(t.text) if t.text else -1
            if col >= 0:
                found = (ln, col + 1)
                break
        if found is None:
            out.append(Token(t.text, t.line, t.column))
        else:
            out.append(Token(t.text, found[0], found[1]))
            cursor = found[0]
    return out


def _items(ctx: ManifestCtx, doc: Document, path: tuple) -> list[Token]:
    """A command/args value (a list of words, or one string) as tokens with positions."""
    value = doc.get(path)
    if value is None:
        return []
    if isinstance(value, str):
        loc = doc.loc(path)
        return _relocate(shell_tokens(value, loc.line, loc.column), ctx.lines, loc.line)
    if isinstance(value, list):
        items = []
        for i, v in enumerate(value):
            if isinstance(v, (str, int, float)) and not isinstance(v, bool):
                loc = doc.loc(path + (i,))
                items.append((str(v), loc.line, loc.column))
        toks = tokens_from_items(items)
        multi = [t for t in toks if t.line != 0]
        return _relocate(multi, ctx.lines, doc.loc(path).line) if any(" " in str(v) for v in value
                                                                        if isinstance(v, str)) else multi
    loc = doc.loc(path)
    ctx.problems.append(ConfigProblem(ctx.display, loc.line, loc.column,
                                f"expected a list of arguments or a string, found {type(value).__name__}"))
    return []


def _env_args(ctx: ManifestCtx, doc: Document, path: tuple) -> list[Token]:
    """``env: [{name: VLLM_ADDITIONAL_ARGS, value: "--max-num-seqs 64"}]`` (KServe, llm-d) as tokens."""
    env = doc.get(path)
    out: list[Token] = []
    if not isinstance(env, list):
        return out
    for i, e in enumerate(env):
        if isinstance(e, dict) and e.get("name") in ("VLLM_ADDITIONAL_ARGS", "VLLM_ARGS", "SGLANG_ARGS") \
                and isinstance(e.get("value"), str):
            loc = doc.loc(path + (i, "value"))
            out.extend(_relocate(shell_tokens(e["value"], loc.line, loc.column), ctx.lines, loc.line))
    return out


def container(ctx: ManifestCtx, doc: Document, path: tuple, fmt: str, role: str, *, default_engine: str | None = None,
              command_key: str = "command", args_key: str = "args") -> Deployed | None:
    """One container (Kubernetes, compose service, Dynamo mainContainer) as a Deployed, if it launches an engine."""
    c = doc.get(path)
    if not isinstance(c, dict):
        return None
    image = c.get("image") if isinstance(c.get("image"), str) else ""
    by_image = engine_of_image(image)
    command = _items(ctx, doc, path + (command_key,))
    args = _items(ctx, doc, path + (args_key,)) + _env_args(ctx, doc, path + ("env",))
    invocations = find_invocations(command + args)
    start = doc.loc(path)
    if invocations:
        inv = invocations[0]
        engine, rest, positional = inv.engine, inv.args, inv.positional_model
        where = Setting(engine, ctx.display, inv.start.line, inv.start.column, inv.launcher)
    elif (by_image is not None or default_engine) and not command:
        engine = by_image[0] if by_image else default_engine  # type: ignore[index]
        rest, positional = args, False
        if by_image is not None:
            where = ctx.setting(doc, path + ("image",), engine, f"image {image}")
        else:
            where = Setting(engine, ctx.display, start.line, start.column, f"{fmt} (its engine)")
    else:
        return None
    dep = Deployed(fmt, ctx.display, start.line, role=role, engine=where)
    if by_image is not None and by_image[0] == engine and by_image[1]:
        dep.engine_version = ctx.setting(doc, path + ("image",), by_image[1], f"image {image}")
    apply_args(dep, engine, rest, ctx.problems, positional_model=positional)
    return dep


# --------------------------------------------------------------------------- Kubernetes

def detect_kubernetes(doc: Document) -> bool:
    d = doc.data
    return isinstance(d, dict) and isinstance(d.get("apiVersion"), str) and d.get("kind") in _WORKLOADS


def read_kubernetes(ctx: ManifestCtx, doc: Document) -> None:
    d = doc.data
    replicas_path = ("spec", "replicas")
    name = doc.get(("metadata", "name")) or d.get("kind")
    found: list[tuple] = []
    _find_containers(d, (), found, 0)
    for cpath in found:
        for i, _ in enumerate(doc.get(cpath) or []):
            role = f"{name}/{doc.get(cpath + (i, 'name')) or i}"
            dep = container(ctx, doc, cpath + (i,), "kubernetes", str(role))
            if dep is None:
                continue
            reps = doc.get(replicas_path)
            if d.get("kind") == "LeaderWorkerSet":
                reps = doc.get(("spec", "replicas"))
            if isinstance(reps, int) and not isinstance(reps, bool):
                dep.set("replicas", ctx.setting(doc, replicas_path, reps, f"replicas: {reps}"))
            ctx.out.deployed.append(dep)


def _find_containers(node: Any, path: tuple, found: list[tuple], depth: int) -> None:
    if depth > _MAX_DEPTH or len(found) > 100:
        return
    if isinstance(node, dict):
        for k, v in node.items():
            if k in ("containers", "initContainers") and isinstance(v, list):
                if k == "containers":
                    found.append(path + (k,))
            elif isinstance(v, (dict, list)):
                _find_containers(v, path + (k,), found, depth + 1)
    elif isinstance(node, list):
        for i, v in enumerate(node[:1000]):
            _find_containers(v, path + (i,), found, depth + 1)


# --------------------------------------------------------------------------- compose

def detect_compose(doc: Document) -> bool:
    s = doc.data.get("services") if isinstance(doc.data, dict) else None
    return isinstance(s, dict) and any(isinstance(v, dict) and ("image" in v or "command" in v or "build" in v)
                                       for v in s.values())


def read_compose(ctx: ManifestCtx, doc: Document) -> None:
    for name, svc in doc.data["services"].items():
        if not isinstance(svc, dict):
            continue
        path = ("services", name)
        dep = container(ctx, doc, path, "compose", str(name), command_key="entrypoint", args_key="command")
        if dep is None:
            continue
        reps = doc.get(path + ("deploy", "replicas"))
        if isinstance(reps, int) and not isinstance(reps, bool):
            dep.set("replicas", ctx.setting(doc, path + ("deploy", "replicas"), reps, f"replicas: {reps}"))
        ctx.out.deployed.append(dep)


# --------------------------------------------------------------------------- llm-d modelservice values

def detect_llmd(doc: Document) -> bool:
    d = doc.data
    if not isinstance(d, dict) or "apiVersion" in d:
        return False
    roles = [d.get(r) for r in ("decode", "prefill")]
    return "modelArtifacts" in d or any(isinstance(r, dict) and "containers" in r for r in roles)


def _parallelism(ctx: ManifestCtx, doc: Document, dep: Deployed, path: tuple) -> None:
    par = doc.get(path)
    if not isinstance(par, dict):
        return
    for key, field in (("tensor", "tensor_parallel"), ("pipeline", "pipeline_parallel"),
                       ("data", "data_parallel")):
        v = par.get(key)
        if isinstance(v, int) and not isinstance(v, bool):
            dep.set(field, ctx.setting(doc, path + (key,), v, f"parallelism.{key}: {v}"), override=False)
    ep = par.get("expert")
    if isinstance(ep, bool) or isinstance(ep, int):
        dep.set("expert_parallel", ctx.setting(doc, path + ("expert",), bool(ep), f"parallelism.expert: {ep}"),
                override=False)


def read_llmd(ctx: ManifestCtx, doc: Document) -> None:
    d = doc.data
    model = None
    for key in ("name", "uri"):
        v = doc.get(("modelArtifacts", key))
        if isinstance(v, str) and v:
            model = ctx.setting(doc, ("modelArtifacts", key), v.removeprefix("hf://"), f"modelArtifacts.{key}: {v}")
            break
    for role in ("decode", "prefill"):
        r = d.get(role)
        if not isinstance(r, dict) or r.get("create") is False:
            continue
        conts = r.get("containers")
        if not isinstance(conts, list):
            continue
        for i, c in enumerate(conts):
            if not isinstance(c, dict):
                continue
            mc = c.get("modelCommand")
            default = "vllm" if mc in ("vllmServe", None, "imageDefault") else None
            dep = container(ctx, doc, (role, "containers", i), "llm-d", role, default_engine=default)
            if dep is None:
                continue
            if mc == "vllmServe" and model is not None:
                dep.set("model", model, override=False)
            elif model is not None:
                dep.set("model", model, override=False)
            _parallelism(ctx, doc, dep, (role, "parallelism"))
            reps = r.get("replicas")
            if isinstance(reps, int) and not isinstance(reps, bool):
                dep.set("replicas", ctx.setting(doc, (role, "replicas"), reps, f"{role}.replicas: {reps}"))
            ctx.out.deployed.append(dep)
            break  # the first serving container of the role


# --------------------------------------------------------------------------- KServe LLMInferenceService

def detect_kserve(doc: Document) -> bool:
    d = doc.data
    return isinstance(d, dict) and d.get("kind") == "LLMInferenceService"


def read_kserve(ctx: ManifestCtx, doc: Document) -> None:
    spec = doc.get(("spec",))
    if not isinstance(spec, dict):
        loc = doc.loc(())
        ctx.problems.append(ConfigProblem(ctx.display, loc.line, loc.column, "LLMInferenceService: expected a `spec` mapping"))
        return
    model = None
    for key in ("name", "uri"):
        v = doc.get(("spec", "model", key))
        if isinstance(v, str) and v:
            model = ctx.setting(doc, ("spec", "model", key), v.removeprefix("hf://"), f"model.{key}: {v}")
            break
    for role, base in (("decode", ("spec",)), ("prefill", ("spec", "prefill"))):
        r = doc.get(base)
        if not isinstance(r, dict):
            continue
        cpath = base + ("template", "containers")
        conts = doc.get(cpath)
        dep = None
        if isinstance(conts, list):
            for i, c in enumerate(conts):
                if isinstance(c, dict) and c.get("name", "main") == "main":
                    dep = container(ctx, doc, cpath + (i,), "kserve", role, default_engine="vllm")
                    break
        if dep is None:
            loc = doc.loc(base)
            dep = Deployed("kserve", ctx.display, loc.line, role=role,
                           engine=Setting("vllm", ctx.display, loc.line, loc.column, "LLMInferenceService (vLLM)"))
        if model is not None:
            dep.set("model", model, override=False)
        _parallelism(ctx, doc, dep, base + ("parallelism",))
        reps = r.get("replicas")
        if isinstance(reps, int) and not isinstance(reps, bool):
            dep.set("replicas", ctx.setting(doc, base + ("replicas",), reps, f"replicas: {reps}"))
        spec_cfg = doc.get(("spec", "speculator", "config"))
        if isinstance(spec_cfg, dict) and role == "decode":
            m = spec_cfg.get("method")
            if isinstance(m, str):
                dep.set("speculative", ctx.setting(doc, ("spec", "speculator", "config", "method"), m,
                                                   f"speculator.config.method: {m}"), override=False)
            k = spec_cfg.get("num_speculative_tokens")
            try:
                kv = int(k) if k is not None and not isinstance(k, bool) else None
            except (TypeError, ValueError):
                kv = None
                loc = doc.loc(("spec", "speculator", "config", "num_speculative_tokens"))
                ctx.problems.append(ConfigProblem(ctx.display, loc.line, loc.column,
                                            f"num_speculative_tokens: expected an integer, found {k!r}"))
            if kv is not None:
                dep.set("num_speculative_tokens", ctx.setting(
                    doc, ("spec", "speculator", "config", "num_speculative_tokens"), kv,
                    f"speculator.config.num_speculative_tokens: {k}"), override=False)
        normalise(dep, ctx.problems)
        ctx.out.deployed.append(dep)


# --------------------------------------------------------------------------- Dynamo DynamoGraphDeployment

def detect_dynamo(doc: Document) -> bool:
    d = doc.data
    return isinstance(d, dict) and d.get("kind") == "DynamoGraphDeployment"


def read_dynamo(ctx: ManifestCtx, doc: Document) -> None:
    services = doc.get(("spec", "services"))
    if not isinstance(services, dict):
        loc = doc.loc(("spec",))
        ctx.problems.append(ConfigProblem(ctx.display, loc.line, loc.column,
                                    "DynamoGraphDeployment: expected `spec.services`, a mapping of services"))
        return
    for name, svc in services.items():
        if not isinstance(svc, dict):
            continue
        base = ("spec", "services", name)
        dep = container(ctx, doc, base + ("extraPodSpec", "mainContainer"), "dynamo",
                        str(svc.get("subComponentType") or name))
        if dep is None:
            continue
        reps = svc.get("replicas")
        if isinstance(reps, int) and not isinstance(reps, bool):
            dep.set("replicas", ctx.setting(doc, base + ("replicas",), reps, f"{name}.replicas: {reps}"))
        ctx.out.deployed.append(dep)


# --------------------------------------------------------------------------- vLLM --config YAML

#: vLLM engine arguments a --config file is recognised by (dashes or underscores)
_VLLM_CONFIG_KEYS = {"model", "tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size",
                     "max_num_seqs", "max_num_batched_tokens", "gpu_memory_utilization", "kv_cache_dtype",
                     "enable_prefix_caching", "enable_chunked_prefill", "quantization", "dtype",
                     "served_model_name", "max_model_len", "speculative_config", "enable_expert_parallel",
                     "block_size", "trust_remote_code", "num_scheduler_steps"}


def detect_vllm_config(doc: Document) -> bool:
    d = doc.data
    if not isinstance(d, dict) or any(k in d for k in ("apiVersion", "kind", "services", "budgets")):
        return False
    keys = {str(k).replace("-", "_") for k in d}
    known = keys & _VLLM_CONFIG_KEYS
    return bool(known - {"model", "dtype", "trust_remote_code", "served_model_name"}) and len(known) * 2 >= len(keys)


def read_vllm_config(ctx: ManifestCtx, doc: Document, into: Deployed | None = None) -> Deployed:
    """A vLLM ``--config`` file; with ``into``, its values fill what the command line left out."""
    start = doc.loc(())
    dep = into or Deployed("vllm-config", ctx.display, start.line,
                           engine=Setting("vllm", ctx.display, start.line, start.column, "vLLM --config file"))
    tokens: list[Token] = []
    for k, v in doc.data.items():
        key = "--" + str(k).replace("_", "-")
        kl, vl = doc.loc((k,), key=True), doc.loc((k,))
        if isinstance(v, bool):
            if key in ("--enable-prefix-caching", "--enable-chunked-prefill", "--enable-expert-parallel"):
                tokens.append(Token(f"{key}={'true' if v else 'false'}", kl.line, kl.column))
            continue
        if isinstance(v, (dict, list)):
            import json

            tokens += [Token(key, kl.line, kl.column), Token(json.dumps(v), vl.line, vl.column)]
            continue
        if v is None:
            continue
        tokens += [Token(key, kl.line, kl.column), Token(str(v), vl.line, vl.column)]
    sub = Deployed(dep.format, ctx.display, dep.line)
    apply_args(sub, "vllm", tokens, ctx.problems)
    for key, s in sub.settings.items():
        dep.set(key, Setting(s.value, s.file, s.line, s.column, s.text.lstrip("-").replace(" ", ": ", 1)
                             if not s.text.startswith("--enable") else s.text.lstrip("-")), override=into is None)
    return dep
