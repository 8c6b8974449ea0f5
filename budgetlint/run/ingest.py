"""`budgetlint ingest`: normalise benchmark result files to the native format.

:func:`ingest` reads each file with :func:`budgetlint.bench.read_benchmark`
(auto-detected, or the format ``fmt`` forces) and returns one native document
(``schemas/benchmark.schema.json``) holding every measurement read, with its
conditions and their provenance (``read`` or ``inferred``), plus a BL406
finding for every problem a reader reported. No click, no printing: the CLI
writes the document and maps :func:`exit_code`.
"""

from __future__ import annotations

from pathlib import Path

from budgetlint.bench import Measurement, read_benchmark, to_native
from budgetlint.files.discovery import display_path
from budgetlint.findings import Finding

#: exit codes of `budgetlint ingest`
EXIT_OK = 0  # every file read, no problem
EXIT_SOME_REFUSED = 1  # a problem in some file; the document holds what could be read
EXIT_NONE_READABLE = 2  # no measurement at all (every file refused, or no file given)


def ingest(paths: list[str], fmt: str | None = None) -> tuple[dict, list[Finding]]:
    """Native document for all ``paths`` and BL406 findings for their problems.

    Never raises on bad input: unreadable, malformed, empty or unknown files
    become findings (located at the file, and line when known).
    """
    from budgetlint.rules.bl406_benchmark_unreadable import problem_finding

    measurements: list[Measurement] = []
    findings: list[Finding] = []
    for raw in paths:
        p = Path(raw)
        shown = display_path(p)
        found, problems = read_benchmark(p, fmt)
        measurements.extend(found)
        findings.extend(problem_finding(problem, shown) for problem in problems)
    return to_native(measurements), findings


def exit_code(doc: dict, findings: list[Finding]) -> int:
    """0: all read; 1: some problem (what was read is still in ``doc``); 2: nothing read."""
    if not doc.get("measurements"):
        return EXIT_NONE_READABLE
    return EXIT_SOME_REFUSED if findings else EXIT_OK
