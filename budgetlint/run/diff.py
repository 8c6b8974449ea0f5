"""The PR diff: the budgets at a git ref against the working tree (``check --base REF``).

The files at REF are read with ``git ls-tree`` and ``git cat-file`` into a
temporary directory that mirrors the repository; the user's working tree and
index are never touched. The same paths are checked there with the same
options, and the two reports are compared budget by budget (by name):

- budgets added and removed;
- promises loosened or tightened (ttft, tpot, e2e; old -> new);
- headroom (``analysis["headroom_<promise>"]``) that shrank;
- owners removed or changed;
- verdicts that changed (met -> at-risk ...).

Regressions become BL505 findings (warning; error with
``fail_on_regression``). The diff itself is a plain dict (``report.diff``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import subprocess
import tempfile
from pathlib import Path, PurePosixPath
from typing import Any, Iterator

from budgetlint.files import fs
from budgetlint.files import InputError
from budgetlint.findings import Finding, Location, Severity
from budgetlint.model.owners import CODEOWNERS_PLACES
from budgetlint.report import BudgetResult, Report
from budgetlint.promise_rows import analysis_value, judged, judged_headroom, promise_rows
from budgetlint.text import numbers

RULE = "BL505"
#: a still-met headroom that shrinks by less than this share of itself is no regression
#: (``--regression-threshold`` unset): +232 % -> +208 % is a shrink of 0.10, noise of an edit
#: that costs a little speed, not a review item. A shrink past it warns ("still met"); a
#: worse verdict, a headroom that went below zero and a loosened promise are always flagged.
DEFAULT_REGRESSION_THRESHOLD = 0.25

#: promise key in BudgetResult.promises -> (promise name, True when larger is looser)
PROMISE_KEYS: dict[str, tuple[str, bool]] = {
    "ttft_s": ("ttft", True),
    "tpot_s": ("tpot", True),
    "e2e_s": ("e2e", True),
    "cost_usd_per_token": ("cost", True),  # docs/cost.md: a dearer cost allowed is looser
}
VERDICT_RANK = {"met": 0, "not-shown": 1, "at-risk": 2, "cannot-be-met": 3}


class BaseRefError(InputError):
    """The base ref cannot be read (not a git repository, unknown ref): exit 2."""


# -- git ---------------------------------------------------------------------------------------


def _git(args: list[str], cwd: Path, *, input: bytes | None = None) -> bytes:
    env = {k: v for k, v in os.environ.items() if k not in ("GIT_INDEX_FILE", "GIT_WORK_TREE")}
    try:
        done = subprocess.run(["git", *args], cwd=cwd, input=input, capture_output=True, env=env, check=False)
    except FileNotFoundError:
        raise BaseRefError("--base needs git, and git was not found on PATH") from None
    if done.returncode != 0:
        raise BaseRefError(done.stderr.decode("utf-8", "replace").strip() or f"git {' '.join(args)} failed")
    return done.stdout


def repo_root(cwd: Path | None = None) -> Path:
    cwd = cwd or Path.cwd()
    try:
        out = _git(["rev-parse", "--show-toplevel"], cwd)
    except BaseRefError:
        raise BaseRefError(f"--base needs a git repository, and {cwd} is not inside one") from None
    return Path(out.decode().strip()).resolve()


def resolve_ref(ref: str, root: Path) -> str:
    if ref.startswith("-") or any(c in ref for c in "\n\r\0"):
        raise BaseRefError(f"--base {ref!r} is not a git ref (it would be read as an option to git)")
    try:
        return _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], root).decode().strip()
    except BaseRefError:
        raise BaseRefError(f"unknown git ref {ref!r} (fetch it first, e.g. `git fetch origin {ref}`)") from None


#: a base-tree blob larger than this is not read (issue 24: a 300 MB blob peaked at 638 MB):
#: it becomes a sparse file of its size, which the readers refuse unread, as they would the
#: file itself (YAML over files.fs's 10 MiB, benchmark files over bench.MAX_BENCH_BYTES)
MAX_BLOB_BYTES = 64 * 1024 * 1024


def extract(ref: str, root: Path, prefixes: list[str], dest: Path) -> int:
    """Write the blobs under ``prefixes`` (repo-relative posix paths) at ``ref`` into ``dest``.

    Blobs are streamed one at a time from ``git cat-file --batch``; one larger than
    :data:`MAX_BLOB_BYTES` (its size is in the ``ls-tree -l`` listing) is never read."""
    listing = _git(["ls-tree", "-r", "-z", "-l", "--full-tree", ref], root)
    wanted: list[tuple[str, str, int]] = []
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, _, raw_path = entry.partition(b"\t")
        fields = meta.decode().split()
        if len(fields) != 4:
            continue
        mode, kind, sha, size_text = fields
        path = raw_path.decode("utf-8", "surrogateescape")
        if kind != "blob" or mode not in ("100644", "100755"):
            continue  # symlinks and submodules are not followed
        parts = PurePosixPath(path).parts
        if any(part in ("..", "") for part in parts) or PurePosixPath(path).is_absolute():
            continue
        if any(path == p or path.startswith(p.rstrip("/") + "/") or p in ("", ".") for p in prefixes):
            wanted.append((sha, path, int(size_text) if size_text.isdigit() else 0))
    if not wanted:
        return 0
    small = [(sha, path) for sha, path, size in wanted if size <= MAX_BLOB_BYTES]
    for _sha, path, size in wanted:
        if size > MAX_BLOB_BYTES:
            target = dest.joinpath(*PurePosixPath(path).parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "wb") as fh:
                fh.truncate(size)  # sparse: no byte of the blob read or written
    if small:
        _stream_blobs(root, small, dest)
    return len(wanted)


def _stream_blobs(root: Path, blobs: list[tuple[str, str]], dest: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("GIT_INDEX_FILE", "GIT_WORK_TREE")}
    request = "".join(f"{sha}\n" for sha, _ in blobs).encode()
    try:
        proc = subprocess.Popen(["git", "cat-file", "--batch"], cwd=root, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    except FileNotFoundError:
        raise BaseRefError("--base needs git, and git was not found on PATH") from None
    import threading

    def feed() -> None:
        try:
            proc.stdin.write(request)
        finally:
            proc.stdin.close()

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        for _sha, path in blobs:
            header = proc.stdout.readline().split()
            if len(header) < 3 or header[1] != b"blob":
                raise BaseRefError(f"git cat-file could not read {path} at the base ref")
            size = int(header[2])
            target = dest.joinpath(*PurePosixPath(path).parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "wb") as fh:
                left = size
                while left:
                    chunk = proc.stdout.read(min(left, 1 << 20))
                    if not chunk:
                        raise BaseRefError(f"git cat-file ended early reading {path}")
                    fh.write(chunk)
                    left -= len(chunk)
            proc.stdout.read(1)  # the newline after each blob
    finally:
        proc.stdout.close()
        proc.wait()
        writer.join(timeout=5)


@contextlib.contextmanager
def _chdir(path: Path) -> Iterator[None]:
    old = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def _rebase(path: str, cwd: Path, root: Path, mirror: Path) -> tuple[str, str | None]:
    """A path of the working tree -> (the same path in the mirror, repo-relative posix or None)."""
    p = Path(path)
    absolute = (p if p.is_absolute() else cwd / p).resolve()
    try:
        rel = absolute.relative_to(root)
    except ValueError:
        return str(absolute), None  # outside the repository: used as it is
    return str(mirror / rel), rel.as_posix()


def base_report(ref: str, paths: list[str], options: Any, run_check: Any) -> tuple[Report, str]:
    """Check ``paths`` as they are at ``ref`` with ``run_check``; returns the report and its commit."""
    cwd = Path.cwd().resolve()
    root = repo_root(cwd)
    commit = resolve_ref(ref, root)
    config = getattr(options, "config", None)
    with tempfile.TemporaryDirectory(prefix="budgetlint-base-") as tmp:
        mirror = Path(tmp).resolve() / "repo"
        mirror.mkdir()
        (mirror / ".git").write_text("budgetlint base mirror; not a repository\n", encoding="utf-8")
        rebased_paths: list[str] = []
        prefixes: list[str] = list(CODEOWNERS_PLACES)
        for p in paths:
            new, rel = _rebase(p, cwd, root, mirror)
            rebased_paths.append(new)
            if rel is not None:
                prefixes.append(rel)
        teams = [_rebase(t, cwd, root, mirror) for t in options.teams_files]
        prefixes += [rel for _, rel in teams if rel is not None]
        codeowners = _rebase(options.codeowners, cwd, root, mirror) if options.codeowners else None
        if codeowners and codeowners[1]:
            prefixes.append(codeowners[1])
        extract(commit, root, sorted(set(prefixes)), mirror)

        base_cwd = mirror / cwd.relative_to(root)
        base_cwd.mkdir(parents=True, exist_ok=True)
        existing = [p for p in rebased_paths if fs.exists(Path(p))]
        base_options = dataclasses.replace(
            options, base_ref=None, roots=None,  # the base run reads inside its own mirror
            teams_files=[t for t, _ in teams if fs.exists(Path(t))],
            codeowners=codeowners[0] if codeowners else None,
            bench=[str((cwd / b).resolve()) if not Path(b).is_absolute() else b for b in options.bench],
            config=_rebased_config(config, cwd, root, mirror),
        )
        with _chdir(base_cwd):
            report = run_check(existing, base_options) if existing else Report()
    return report, commit


def _rebased_config(config: Any, cwd: Path, root: Path, mirror: Path) -> Any:
    if config is None or config.path is None:
        return config
    new_path, rel = _rebase(str(config.path), cwd, root, mirror)
    # the policy is the working tree's; per-file-ignore globs resolve against the mirrored folder
    return dataclasses.replace(config, path=Path(new_path) if rel is not None else config.path, findings=[])


# -- comparing ---------------------------------------------------------------------------------


def _finite(x: Any) -> float | None:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    return float(x)


def headroom_shrink(old: float, new: float) -> float:
    """How much of the old headroom is gone, as a fraction of it (1.0 = all of it)."""
    if new >= old:
        return 0.0
    if math.isinf(old):
        return 1.0
    if old <= 0:
        return math.inf  # no headroom left before, and less now
    return (old - new) / old


def compare(base: Report, head: Report, *, threshold: float = 0.0, ref: str = "",
            commit: str | None = None, threshold_set: bool = True) -> dict:
    """The diff of two reports by budget name, as a plain (JSON-ready) dict.

    ``threshold_set`` False: ``threshold`` is the default one, a line for what is
    reported, never one that fails the check (``blocking``)."""
    old = {b.name: b for b in base.budgets}
    new = {b.name: b for b in head.budgets}
    diff: dict[str, Any] = {
        "base": ref,
        "base_commit": commit,
        "threshold": threshold,
        "threshold_set": threshold_set,
        "added": [_where(new[n]) for n in sorted(new) if n not in old],
        "removed": [dict(_where(old[n]), owner=old[n].owner) for n in sorted(old) if n not in new],
        "changed": [],
        "regressions": 0,
    }
    regressions = len(diff["removed"])
    for name in sorted(set(old) & set(new)):
        entry = _compare_budget(old[name], new[name], threshold, threshold_set)
        if entry is not None:
            regressions += sum(1 for kind in ("promises", "headroom", "verdicts") for x in entry[kind]
                               if x["regression"]) + (1 if entry["owner"] and entry["owner"]["regression"] else 0)
            diff["changed"].append(entry)
    diff["regressions"] = regressions
    return diff


def _where(b: BudgetResult) -> dict:
    return {"name": b.name, "file": b.file, "line": b.line}


def _judged_headroom(row: Any, key: str) -> float | None:
    """The headroom BL505 compares: the judgement's, on its basis (docs/judgement.md); the
    analysis's flat-estimate headroom only for a promise without a judgement."""
    name = key[len("headroom_"):]
    j = (getattr(row, "judgement", None) or {}).get(name)
    if isinstance(j, dict):
        return _finite(j.get("headroom"))
    return _finite(row.analysis.get(key))


def _one_entry_per_number(headroom: list[dict]) -> list[dict]:
    """A segment whose headroom is the same number as a promise's (the decode segment's
    pace and the budget's pace) is one change, not two: it is folded into the promise's
    entry (``same_as``), so one edit gives one regression per number."""
    promises = [h for h in headroom if not h["promise"].startswith("segment:")]
    out = []
    for h in headroom:
        twin = next((p for p in promises if p is not h and h["promise"].startswith("segment:")
                     and math.isclose(p["old"], h["old"], rel_tol=1e-9, abs_tol=1e-12)
                     and math.isclose(p["new"], h["new"], rel_tol=1e-9, abs_tol=1e-12)), None)
        if twin is not None:
            twin["same_as"].append(h["promise"])
            continue
        out.append(h)
    return out


def _compare_budget(a: BudgetResult, b: BudgetResult, threshold: float, threshold_set: bool = True) -> dict | None:
    promises = []
    for key, (name, larger_is_looser) in PROMISE_KEYS.items():
        x, y = _finite(a.promises.get(key)), _finite(b.promises.get(key))
        if x == y:
            continue
        if x is None:
            change = "added"
        elif y is None:
            change = "removed"
        else:
            change = "loosened" if (y > x) == larger_is_looser else "tightened"
        promises.append({"promise": name, "key": key, "old": x, "new": y, "change": change,
                         "regression": change in ("loosened", "removed")})
    headroom = []
    keys = sorted({k for k in (*a.analysis, *b.analysis) if k.startswith("headroom_")}
                  | {f"headroom_{p}" for p in (*a.judgement, *b.judgement)})
    for key in keys:
        x, y = _judged_headroom(a, key), _judged_headroom(b, key)
        if x is None or y is None or not (y < x):
            continue
        shrink = headroom_shrink(x, y)
        crossed = x >= 0 > y
        headroom.append({"promise": key[len("headroom_"):], "old": x, "new": y,
                         "shrink": shrink if math.isfinite(shrink) else None,
                         "regression": shrink > threshold or crossed,
                         # fails the check under --fail-on-regression: the promise is no longer met,
                         # or the shrink passed a threshold the user set (the default threshold, and
                         # 0, block nothing that is still met: any edit that costs speed would fail)
                         "blocking": crossed or (threshold_set and threshold > 0 and shrink > threshold),
                         "same_as": []})
    headroom = _one_entry_per_number(headroom)
    verdicts = []
    for p in sorted(set(a.verdicts) | set(b.verdicts)):
        x, y = a.verdicts.get(p), b.verdicts.get(p)
        if x == y:
            continue
        rx, ry = VERDICT_RANK.get(x or ""), VERDICT_RANK.get(y or "")
        change = "worse" if rx is not None and ry is not None and ry > rx else (
            "better" if rx is not None and ry is not None else "changed")
        verdicts.append({"promise": p, "old": x, "new": y, "change": change, "regression": change == "worse"})
    values = judged_changes(a, b)
    owner = None
    if (a.owner or None) != (b.owner or None):
        change = "removed" if not b.owner else ("added" if not a.owner else "changed")
        owner = {"old": a.owner, "new": b.owner, "change": change, "regression": change == "removed"}
    if not (promises or headroom or verdicts or owner or values):
        return None
    return {**_where(b), "promises": promises, "headroom": headroom, "verdicts": verdicts, "owner": owner,
            "values": values}


def judged_value(budget: BudgetResult, row: Any) -> float | None:
    """The number a promise is judged on: the judgement's value (``budgets[].judgement``, on
    its basis: measured, simulated, calibrated or the estimate); without a judgement, the
    realistic estimate (``realistic_<key>``)."""
    j = judged(budget, row)
    value = j.get("value") if j else None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return analysis_value(budget, "realistic", row)


def _same(x: float | None, y: float | None) -> bool:
    if x is None or y is None:
        return x is y
    return math.isclose(x, y, rel_tol=1e-9, abs_tol=0.0)


def judged_changes(a: BudgetResult, b: BudgetResult) -> list[dict]:
    """Per promise in both: the judged value, verdict and headroom before and after, when
    the value or the verdict changed (better or worse: the PR comment shows both)."""
    before = {r.name: r for r in promise_rows(a)}
    out = []
    for row in promise_rows(b):
        old_row = before.get(row.name)
        if old_row is None:
            continue
        old, new = judged_value(a, old_row), judged_value(b, row)
        if _same(old, new) and old_row.verdict == row.verdict:
            continue
        out.append({"promise": row.name, "unit": row.unit, "promised": row.value, "old": old, "new": new,
                    "verdict_old": old_row.verdict, "verdict_new": row.verdict,
                    "basis_old": judged(a, old_row).get("basis"), "basis_new": judged(b, row).get("basis"),
                    "headroom_old": judged_headroom(a, old_row),
                    "headroom_new": judged_headroom(b, row)})
    return out


# -- findings ----------------------------------------------------------------------------------


def regression_findings(diff: dict, budgets_: Any, severity: Severity) -> list[Finding]:
    """One BL505 finding per regression in ``diff``, at the budget or promise it is about."""
    budgets = {b.name: b for b in budgets_}
    ref = diff.get("base") or "the base"
    out: list[Finding] = []

    def at(name: str, promise: str | None = None) -> Location | None:
        b = budgets.get(name)
        if b is None:
            return None
        if promise in ("ttft", "tpot", "e2e", "pace"):
            keys = ("pace", "tpot") if promise in ("tpot", "pace") else (promise,)
            for k in keys:
                if b.has("promise", k):
                    return b.loc("promise", k)
            if b.has("promise"):
                return b.loc("promise", key=True)
        if promise == "owner" and b.has("owner"):
            return b.loc("owner")
        return b.loc("name")

    for r in diff["removed"]:
        out.append(Finding(RULE, severity, f"budget {r['name']!r} was removed (it was in {r['file']} at {ref})",
                           None, budget=r["name"], fix="keep the budget, or review its removal"))
    for c in diff["changed"]:
        name = c["name"]
        for p in c["promises"]:
            if p["regression"]:
                unit = "USD/token" if p["promise"] == "cost" else "s"  # docs/cost.md
                what = (f"{p['promise']} promise loosened: {numbers.quantity(p['old'], unit, absent='none')} -> "
                        f"{numbers.quantity(p['new'], unit, absent='none')}" if p["change"] == "loosened"
                        else f"{p['promise']} promise removed (was {numbers.quantity(p['old'], unit, absent='none')})")
                out.append(Finding(RULE, severity, f"budget {name!r}: {what} (against {ref})", at(name, p["promise"]),
                                   budget=name, promise=p["promise"], fix="keep the promise, or review the change"))
        for h in c["headroom"]:
            if h["regression"]:
                gone = f" (-{numbers.percent(h['shrink'], absent='unbounded')} of it)" if h["shrink"] is not None else ""
                twins = [f"segment {s[len('segment:'):]!r}" for s in h.get("same_as", [])]
                also = f" (the same number as {' and '.join(twins)})" if twins else ""
                still = "" if h.get("blocking", True) else "; still met"
                out.append(Finding(RULE, severity if h.get("blocking", True) else Severity.WARNING,
                                   f"budget {name!r}: {h['promise']} headroom{also} shrank: {numbers.headroom(h['old'], absent='unbounded')} "
                                   f"-> {numbers.headroom(h['new'], absent='unbounded')}{gone}{still} (against {ref})",
                                   at(name, h["promise"]), budget=name,
                                   promise=h["promise"] if h["promise"] != "pace" else "tpot",
                                   fix="see `budgetlint explain` for what binds"))
        for v in c["verdicts"]:
            if v["regression"]:
                out.append(Finding(RULE, severity,
                                   f"budget {name!r}: {v['promise']} verdict got worse: {v['old']} -> {v['new']} "
                                   f"(against {ref})", at(name, v["promise"]), budget=name, promise=v["promise"]))
        o = c["owner"]
        if o and o["regression"]:
            out.append(Finding(RULE, severity, f"budget {name!r}: owner {o['old']} removed (against {ref})",
                               at(name, "owner"), budget=name, fix="keep an owner on every budget"))
    return out


def attach_diff(report: Report, budgets: Any, options: Any, paths: list[str], run: Any) -> None:
    """Compare with ``options.base_ref``; set ``report.diff`` and add BL505 findings."""
    given = getattr(options, "regression_threshold", None)
    threshold = DEFAULT_REGRESSION_THRESHOLD if given is None else float(given)
    base, commit = base_report(options.base_ref, paths, options, run)
    diff = compare(base, report, threshold=threshold, ref=options.base_ref, commit=commit,
                   threshold_set=given is not None)
    report.diff = diff
    from budgetlint.rules import get_rule

    severity = Severity.ERROR if options.fail_on_regression else get_rule(RULE).severity
    report.findings.extend(regression_findings(diff, budgets, severity))
