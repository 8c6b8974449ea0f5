"""A ``kind: calibration`` file, read and validated with positions (docs/calibration.md).

Written by ``budgetlint calibrate`` (:mod:`budgetlint.run.calibrate`); read
where a deployment names it (:mod:`budgetlint.evaluate.calibration`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from budgetlint.files import schema as schema_mod
from budgetlint.files.loader import load_file


@dataclass(frozen=True)
class Calibration:
    """A loaded calibration document (SI values), with where it was read from."""

    path: str
    params: Any  # what ``make_params`` made of the parameters mapping (evaluate: physics.calibration.Params)
    runs: int
    engine: Optional[str]
    engine_version: Optional[str]
    created: Optional[str]
    error: dict[str, dict[str, float]]
    model: str
    hardware: str
    run_rows: tuple = ()  # the document's `runs:` rows as written (evaluate checks they support the band)
    #: where its checked values stand (file:line:column): ("created",), ("error", metric, "max"|"median"|"runs"),
    #: ("runs", i): so a finding on the file as written points into it (issue 24)
    where: dict = field(default_factory=dict, compare=False)

    def at(self, *path: Any) -> str:
        """``file:line:column`` of a value of the document (its nearest recorded ancestor), or the file."""
        for n in range(len(path), 0, -1):
            loc = self.where.get(tuple(path[:n]))
            if loc is not None:
                return str(loc)
        return self.path

    def band(self, metric: str) -> Optional[float]:
        """The calibration's relative error band for a metric: its largest leave-one-out error."""
        e = self.error.get(metric)
        return e["max"] if e else None


def load_calibration(path: str | Path, make_params: Callable[..., Any] = dict) -> tuple[Optional[Calibration], list[Any]]:
    """Read and validate a ``kind: calibration`` file: (calibration, findings with file:line:column).

    ``make_params(**parameters)`` turns the document's parameters (SI floats) into what the
    caller computes with; a TypeError or ValueError it raises is a BL003 at ``parameters``.
    This module reads files only: the evaluation passes the physics type
    (:func:`budgetlint.evaluate.calibration.load_calibration`)."""
    from budgetlint.findings import Finding, Severity

    p = Path(path)
    result = load_file(p, str(path))
    findings = list(result.findings)
    if findings or not result.documents:
        if not findings:
            findings.append(Finding("BL013", Severity.ERROR, f"{path}: no calibration document", None))
        return None, findings
    doc = result.documents[0]
    if not isinstance(doc.data, dict) or doc.data.get("kind") != "calibration":
        found = doc.data.get("kind") if isinstance(doc.data, dict) else type(doc.data).__name__
        findings.append(Finding("BL013", Severity.ERROR,
                                f"expected a `kind: calibration` document, found kind {found!r}", doc.loc(())))
        return None, findings
    errs = schema_mod.validate(doc, "calibration")
    if errs:
        return None, errs
    d = doc.data
    try:
        params = make_params(**d["parameters"])
    except (TypeError, ValueError) as exc:
        return None, [Finding("BL003", Severity.ERROR, str(exc), doc.loc(("parameters",)))]
    dep = d["deployment"]
    where: dict = {("created",): doc.loc(("created",))} if "created" in d else {}
    for metric, e in (d.get("error") or {}).items():
        where[("error", metric)] = doc.loc(("error", metric))
        for k in ("max", "median", "runs"):
            if isinstance(e, dict) and k in e:
                where[("error", metric, k)] = doc.loc(("error", metric, k))
    for i in range(len(d["runs"])):
        where[("runs", i)] = doc.loc(("runs", i))
    return Calibration(str(path), params, len(d["runs"]), dep.get("engine"), dep.get("engine_version"),
                       d.get("created"), dict(d.get("error") or {}), dep["model"], dep["hardware"],
                       tuple(d["runs"]), where), []
