"""A benchmark file could not be read, or a `bench:` entry matches no file.

## What it checks
Every benchmark file linked to a budget (`bench:`) or given on the command
line (`--bench`) is read with the readers of `budgetlint.bench`. Each
problem they report becomes this finding, at the file (and line, when
known):

| reader code | meaning |
|---|---|
| `bench-empty` | empty file |
| `bench-truncated` | JSON ends inside a value |
| `bench-malformed` | invalid JSON |
| `bench-duplicate-key` | a JSON object with the same key twice (the last is read, and said) |
| `bench-nan` | a NaN or infinite value (dropped: not measured) |
| `bench-unitless` | a time without a unit: refused, never guessed |
| `bench-unknown-format` | no supported format matches (or `--bench-format` names none) |
| `bench-not-a-measurement` | a recognised file holding no measurement |
| `bench-no-successful-requests` | every request failed |
| `bench-schema` | a native document that fails the schema |
| `bench-io` | unreadable, missing or not UTF-8 |
| `bench-impossible-value` | a negative latency, throughput, request count or token length, or a zero TTFT/E2E (dropped: not measured) |
| `bench-limit` | a limit was reached: file size (`max-bench-size`), lines or values read |

Workload lengths taken from a benchmark file
(`prompt_tokens: {from_bench: runs/sweep.json}`, docs/load.md) are read the
same way; a file that is missing, refused, unreadable or without
per-request lengths of that kind is reported at the budget's `from_bench`
key, and the budget's physics is not run (its lengths are unknown).

A `bench:` path or glob that matches no file is reported at its line in
the budget file, and so is a `--bench` glob that matches none. Globs (in
`bench:` and in `--bench`) are expanded in sorted order (by name, folder
by folder, whatever order the file system lists them in); an entry that
matches more than 1,000 files is cut to the first 1,000 in that order, and a warning says so: the rest were not checked.

A `bench:` path or glob that leads out of the folders the run reads
(`../../..`, an absolute path or a symbolic link outside the git top level
of the working directory and the checked paths, or those folders themselves
outside git) is refused, not read, unless `--allow-read DIR` or the config
key `allow-read` allows its folder. A glob's walk also stops after 20,000
directory entries or 5 s (a glob over `/`), with a warning; each real
folder is walked once, so symbolic link loops end.

## Why
Evidence that cannot be read is no evidence, and a silent skip would let a
budget pass CI on a typo in a path.

## Example
```yaml
bench: [runs/chat-*.json]        # no such files
# BL406: bench entry 'runs/chat-*.json' matches no file (relative to budgets/)
```

## Fix
Fix the path or glob, or regenerate the file; `budgetlint ingest FILE`
shows what budgetlint reads from it. `--bench-format NAME` forces a format
when detection fails.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from budgetlint.findings import Finding, Location, Severity

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.model.types import Budget
    from budgetlint.rules import RuleContext

CODE = "BL406"
NAME = "benchmark-unreadable"
SUMMARY = "A benchmark file could not be read, or a `bench:` entry matches no file."
SEVERITY = Severity.ERROR
#: severities other than SEVERITY this rule may give, and when
OTHER_SEVERITIES = {Severity.WARNING: "a bench glob matches more files than the per-entry limit (the rest not read)"}

FIXES = {
    "bench-empty": "regenerate the file: it is empty",
    "bench-truncated": "regenerate the file: it ends in the middle of a value",
    "bench-malformed": "fix or regenerate the file: it is not valid JSON",
    "bench-duplicate-key": "regenerate the file with the benchmark tool: a hand edit repeated a key",
    "bench-nan": "re-run the benchmark: NaN values are not measurements",
    "bench-unitless": "give the time metrics a unit (a unit field or a _ms/_s key suffix)",
    "bench-unknown-format": "pass --bench-format NAME, or convert with `budgetlint ingest`",
    "bench-not-a-measurement": "link the result file, not the configuration",
    "bench-no-successful-requests": "every request failed: fix the run and benchmark again",
    "bench-schema": "fix the native document against schemas/benchmark.schema.json",
    "bench-impossible-value": "check the run and its units: a latency, throughput or count cannot be negative, "
                              "nor a TTFT zero",
    "bench-limit": "split the file or narrow the glob, or raise the limit (docs/limits.md)",
    "bench-io": "check the path and the file's permissions and encoding",
}


def problem_finding(problem, path: str, budget: str | None = None) -> Finding:
    """The finding for one reader Problem (also used by `budgetlint ingest`)."""
    return Finding(CODE, SEVERITY, f"{problem.message} [{problem.code}]",
                   Location(path, problem.line or 1, 1), budget=budget,
                   fix=FIXES.get(problem.code, "fix or regenerate the file"))


def check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext) -> Iterator[Finding]:
    for bf in sorted(evaluation.evidence.files, key=lambda f: f.path):
        for p in bf.problems:
            yield problem_finding(p, bf.path)
    for i, pattern, why in evaluation.evidence.refused:
        yield Finding(CODE, SEVERITY, f"bench entry {pattern!r}: {why}", budget.loc("bench", i), budget=budget.name,
                      fix="keep benchmark files inside the repository, or allow the folder with "
                          "--allow-read DIR (config: allow-read)")
    for i, pattern, why in evaluation.evidence.cut:
        yield Finding(CODE, Severity.WARNING, f"bench entry {pattern!r}: {why}", budget.loc("bench", i),
                      budget=budget.name, fix="narrow the glob to the benchmark files")
    for i, pattern in evaluation.evidence.unmatched_globs:
        base = Path(budget.doc.file).parent.as_posix() or "."
        yield Finding(CODE, SEVERITY, f"bench entry {pattern!r} matches no file (relative to {base}/)",
                      budget.loc("bench", i), budget=budget.name,
                      fix="fix the path or glob, or commit the benchmark file")
    for i, pattern, kept in getattr(evaluation.evidence, "capped_globs", ()):
        yield _capped(f"bench entry {pattern!r}", kept, budget.loc("bench", i), budget.name)
    for src in getattr(evaluation, "lengths", ()):  # workload lengths `from_bench: FILE`
        if src.problem is not None:
            yield Finding(CODE, SEVERITY, f"workload.{src.key} from_bench {src.pattern!r}: {src.problem}; "
                          "the budget's physics and load simulation were not run", src.where, budget=budget.name,
                          fix=src.fix)
        if src.file is not None:  # what the reader found wrong in the file itself, once per file
            for p in src.file.problems:
                yield problem_finding(p, src.file.path)


def _capped(entry: str, kept: int, where: Location | None, budget: str | None) -> Finding:
    return Finding(CODE, Severity.WARNING,
                   f"{entry} matches more than {kept} files; only the first {kept} in sorted order "
                   "(by name, folder by folder) were read (the limit per entry), the rest were not checked",
                   where, budget=budget, fix="narrow the glob to the runs that matter, or split it into several entries")


def check_run(ctx) -> Iterator[Finding]:
    """Problems of the run's --bench files (read once, whatever the budgets)."""
    for bf in sorted(ctx.run_files, key=lambda f: f.path):
        for p in bf.problems:
            yield problem_finding(p, bf.path)
    for pattern, kept, cut in getattr(ctx, "bench_globs", ()):
        if not kept:
            yield Finding(CODE, SEVERITY, f"--bench {pattern!r} matches no file (relative to the working directory)",
                          None, fix="fix the glob, or commit the benchmark file")
        elif cut:
            yield _capped(f"--bench {pattern!r}", kept, None, None)
