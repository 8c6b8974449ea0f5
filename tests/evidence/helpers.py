"""Budget files and native benchmark documents written into tmp_path, with obvious numbers."""

from __future__ import annotations

import json
import os
import textwrap
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from budgetlint.run.check import Options, run_check
from budgetlint.findings import Finding
from budgetlint.report import Report

TEAMS = """\
version: 1
kind: teams
teams:
  - handle: "@t/serving"
    name: serving
"""


def budget_yaml(name: str = "chat", *, percentile: str = "p95", promise: str = "ttft: 400 ms",
                prompt: int = 2000, output: int = 200, concurrency: int = 16,
                measured_at: str = "server", deployment: str | None = None,
                bench: list[str] | None = None, extra: str = "") -> str:
    text = f"""\
  - name: {name}
    owner: "@t/serving"
    percentile: {percentile}
    workload:
      prompt_tokens: {prompt}
      output_tokens: {output}
      concurrency: {concurrency}
      measured_at: {measured_at}
    promise: {{{promise}}}
"""
    if deployment:
        text += f"    deployment: {{{deployment}}}\n"
    if bench is not None:
        text += "    bench: [" + ", ".join(json.dumps(b) for b in bench) + "]\n"
    return text + extra


def write_budgets(directory: Path, *entries: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "teams.yaml").write_text(TEAMS)
    path = directory / "budgets.yaml"
    path.write_text("version: 1\nkind: budgets\nbudgets:\n" + "".join(entries))
    return path


#: requests behind a hand-written metric: more than any percentile here needs (p99.9: 18,667)
ENOUGH = 20000


def metric(definition: str, count: int | None = ENOUGH, **percentiles_ms: float) -> dict[str, Any]:
    """A native metric from percentiles in ms (keyword p95=500, mean=...), from ``count`` requests."""
    mean = percentiles_ms.pop("mean", None)
    return {"unit": "s", "definition": definition, "method": "reported",
            "mean": None if mean is None else mean / 1e3,
            "percentiles": {k.replace("_", "."): v / 1e3 for k, v in percentiles_ms.items()},
            "count": count, "source": "hand-written", "notes": []}


def cond(value: Any, provenance: str = "read") -> dict[str, Any]:
    return {"value": value, "provenance": provenance}


def native(path: Path, *, metrics: dict[str, Any], conditions: dict[str, Any] | None = None,
           label: str | None = None) -> Path:
    """Write a one-measurement native document."""
    conditions = conditions if conditions is not None else {
        "concurrency": 16.0, "prompt_tokens": 2000.0, "output_tokens": 200.0, "measured_at": "server"}
    doc = {"kind": "budgetlint-benchmark", "version": 1, "measurements": [{
        "source": path.name, "format": "native", "label": label,
        "conditions": {k: cond(v) for k, v in conditions.items()},
        "metrics": metrics}]}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1))
    return path


@contextmanager
def chdir(path: Path) -> Iterator[None]:
    old = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def check(root: Path, bench: list[str] | None = None, **options: Any) -> Report:
    """run_check on root (cwd = root, so paths in findings are relative to it)."""
    with chdir(root):
        return run_check(["."], Options(bench=bench or [], **options))


def by_rule(report: Report, prefix: str = "BL4") -> dict[str, list[Finding]]:
    out: dict[str, list[Finding]] = {}
    for f in report.findings:
        if f.rule.startswith(prefix):
            out.setdefault(f.rule, []).append(f)
    return out


def codes(report: Report, prefix: str = "BL4") -> list[str]:
    return sorted(f.rule for f in report.findings if f.rule.startswith(prefix))


def dedent(text: str) -> str:
    return textwrap.dedent(text)
