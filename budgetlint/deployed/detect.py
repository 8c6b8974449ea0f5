"""Format detection of deployed configurations (from content) and dispatch.

A file whose documents are YAML mappings is offered to each YAML reader in
:data:`READERS` order, one document at a time; any other text (a shell
script, a Dockerfile) goes to the command-line reader. Adding a format: its
reader and one line here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from budgetlint.deployed import Deployed, ConfigProblem, ReadResult, Setting
from budgetlint.deployed import command_line, manifests
from budgetlint.text import numbers

#: deployed-configuration files larger than this are refused unread (a values file is kilobytes)
MAX_CONFIG_BYTES = 2 * 1024 * 1024


@dataclass(frozen=True)
class ConfigReader:
    """One deployed-configuration format: its name, how to recognise it, how to read it."""

    name: str
    kind: str  # "yaml": detect/read see one Document; "text": the file's text
    detect: Callable[[Any], bool]
    read: Callable[..., Any]
    what: str  # for docs and messages


#: Every reader, in detection order (the first whose ``detect`` says yes reads the document).
READERS: tuple[ConfigReader, ...] = (
    ConfigReader("kserve", "yaml", manifests.detect_kserve, manifests.read_kserve,
           "KServe LLMInferenceService (serving.kserve.io)"),
    ConfigReader("dynamo", "yaml", manifests.detect_dynamo, manifests.read_dynamo,
           "NVIDIA Dynamo DynamoGraphDeployment (nvidia.com)"),
    ConfigReader("llm-d", "yaml", manifests.detect_llmd, manifests.read_llmd, "llm-d modelservice Helm values"),
    ConfigReader("kubernetes", "yaml", manifests.detect_kubernetes, manifests.read_kubernetes,
           "Kubernetes workload (Deployment, StatefulSet, Pod, LeaderWorkerSet): container command/args"),
    ConfigReader("compose", "yaml", manifests.detect_compose, manifests.read_compose,
           "Docker compose file: a service's entrypoint/command"),
    ConfigReader("vllm-config", "yaml", manifests.detect_vllm_config, lambda ctx, doc: ctx.out.deployed.append(
        manifests.read_vllm_config(ctx, doc)), "vLLM --config YAML"),
    ConfigReader("command-line", "text", command_line.detect, command_line.read,
           "a shell script or Dockerfile launching vllm serve, sglang.launch_server, dynamo.vllm, trtllm-serve"),
)
NAMES = tuple(r.name for r in READERS)


def read_file(path: Any, display: str, *, max_bytes: int | None = None) -> ReadResult:
    from budgetlint.files import fs

    path = Path(path)
    limit = MAX_CONFIG_BYTES if max_bytes is None else max_bytes
    out = ReadResult()
    try:
        raw = fs.read_regular(path, limit)
    except fs.TooLarge as exc:
        out.problems.append(ConfigProblem(display, 1, 1, f"expected a deployed configuration of at most {numbers.number(limit)} bytes, "
                                    f"found {numbers.number(exc.size)} bytes: not read"))
        return out
    except fs.NotRegular as exc:
        out.problems.append(ConfigProblem(display, 1, 1, f"expected a regular file, found {exc}"))
        return out
    except OSError as exc:
        out.problems.append(ConfigProblem(display, 1, 1, f"cannot read the file: {exc.strerror or exc}"))
        return out
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        out.problems.append(ConfigProblem(display, line, 1, f"expected UTF-8 text, found byte 0x{raw[exc.start]:02x}"))
        return out
    read_text(text, display, out, base=path.parent)
    return out


def read_text(text: str, display: str, out: ReadResult | None = None, *, base: Path | None = None,
              depth: int = 0) -> ReadResult:
    out = out or ReadResult()
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        out.problems.append(ConfigProblem(display, line, 1, "expected text, found a NUL byte (a binary file)"))
        return out
    lines = text.splitlines()
    docs, yaml_errors = _yaml_documents(text, display)
    if docs:
        ctx = manifests.ManifestCtx(display, lines, out)
        for doc in docs:
            reader = next((r for r in READERS if r.kind == "yaml" and _safe_detect(r, doc)), None)
            if reader is None:
                continue
            before = len(out.deployed)
            try:
                reader.read(ctx, doc)
            except (RecursionError, MemoryError):  # bounded input should never get here; say so, never a traceback
                loc = doc.loc(())
                out.problems.append(ConfigProblem(display, loc.line, loc.column, f"{reader.name}: too deeply nested to read"))
            for d in out.deployed[before:]:
                d.format = d.format or reader.name
    if not out.deployed and command_line.detect(text):
        r = command_line.read(text, display)
        out.deployed.extend(r.deployed)
        out.problems.extend(r.problems)
    if not out.deployed and yaml_errors:  # not a script either: the YAML's own error, where it is
        out.problems.extend(yaml_errors)
    if depth == 0 and base is not None:
        for dep in out.deployed:
            _follow_config(dep, base, out)
    if not out.deployed and not any(p.severity == "error" for p in out.problems):
        out.problems.append(ConfigProblem(display, 1, 1, "expected a deployed configuration (" + ", ".join(
            r.name for r in READERS) + "), found none: no engine launch, no serving manifest"))
    return out


def _safe_detect(reader: ConfigReader, doc: Any) -> bool:
    try:
        return bool(reader.detect(doc))
    except (AttributeError, TypeError, KeyError):
        return False


def _yaml_documents(text: str, display: str) -> tuple[list[Any], list[ConfigProblem]]:
    """The YAML documents of ``text`` that are mappings, and the loader's errors (a script is no YAML)."""
    from budgetlint.files.loader import load_text

    res = load_text(text, display)
    errors = [ConfigProblem(f.location.file if f.location else display, f.location.line if f.location else 1,
                      f.location.column if f.location else 1, f"not readable as YAML: {f.message}")
              for f in res.findings]
    return [d for d in res.documents if isinstance(d.data, dict)], errors


def _follow_config(dep: Deployed, base: Path, out: ReadResult) -> None:
    """``--config file.yaml`` on a vLLM command line: that file's values fill what the line left out."""
    cfg = dep.settings.pop("config", None)
    if cfg is None or dep.engine is None or dep.engine.value != "vllm":
        return
    from budgetlint.files import fs

    target = (base / str(cfg.value))
    try:
        resolved = target.resolve()
        inside = base.resolve() in resolved.parents or resolved.parent == base.resolve()
    except (OSError, RuntimeError):
        inside = False
    if not inside or not fs.is_file(target):
        kind = fs.kind_if_not_file(target) if inside else None
        why = ("outside the folder of " + cfg.file if not inside else
               f"{kind}, not a regular file" if kind else f"not found beside {cfg.file}")
        hint = "" if kind else " (a file mounted where the engine runs? give it beside the command line to have it read)"
        dep.unread.append(Setting(cfg.value, cfg.file, cfg.line, cfg.column,
                                  f"{cfg.text} ({why}: its values are not read)"))
        # said, not only listed by explain: the values it holds (max-num-seqs, ...) are compared with nothing
        # (until stop 47 a missing --config file was a quiet pass); a warning, as the file may be mounted where
        # the engine runs (a ConfigMap at /etc/vllm/...)
        out.problems.append(ConfigProblem(cfg.file, cfg.line, cfg.column,
                                          f"{cfg.text}: {why}, so the values it holds are not read{hint}",
                                          severity="warning"))
        return
    from budgetlint.files.loader import load_text

    display = f"{Path(cfg.file).parent / str(cfg.value)}".removeprefix("./")
    try:  # bounded (until stop 46 the whole file was read, then cut at the limit)
        text = fs.read_regular(target, MAX_CONFIG_BYTES).decode("utf-8")
    except fs.TooLarge as exc:
        out.problems.append(ConfigProblem(cfg.file, cfg.line, cfg.column,
                                          f"{cfg.text}: expected a vLLM config file of at most {numbers.number(MAX_CONFIG_BYTES)} "
                                          f"bytes, found {numbers.number(exc.size)} bytes: not read"))
        return
    except (OSError, UnicodeDecodeError) as exc:
        out.problems.append(ConfigProblem(cfg.file, cfg.line, cfg.column, f"{cfg.text}: cannot read it ({exc})"))
        return
    res = load_text(text, display)
    for doc in res.documents:
        if isinstance(doc.data, dict):
            ctx = manifests.ManifestCtx(display, text.splitlines(), out)
            manifests.read_vllm_config(ctx, doc, into=dep)
    for f in res.findings:
        out.problems.append(ConfigProblem(f.location.file, f.location.line, f.location.column, f.message))
