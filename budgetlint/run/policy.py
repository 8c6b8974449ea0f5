"""Policy: what a run's findings become after config and suppressions.

``apply_suppressions`` runs per budgets file, after the rules; then
``apply_policy(report, config)`` runs once, at the end of the run:

1. budget suppressions (``suppress: [{rule, reason, expires}]``) remove that
   rule's findings for that budget; a suppression without a reason (BL502) or
   past its expiry date (BL503) does not apply; one that removes nothing is
   BL504. What was removed goes to ``report.suppressed`` with its reason;
2. ``select`` / ``ignore`` and ``per-file-ignores`` drop findings: the most
   specific selector wins (``ignore = ["BL3"]`` with ``select = ["BL303"]``
   keeps BL303), ``ignore`` wins a tie; config errors (BL501) always stay;
3. ``severity`` overrides change a finding's severity (it keeps its code);
   the most specific selector wins.

Today's date comes from :func:`today`: ``BUDGETLINT_TODAY=YYYY-MM-DD`` in the
environment, else the system clock.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
from pathlib import Path
from typing import Any

from budgetlint.files.dates import parse_date
from budgetlint.findings import Finding, Severity
from budgetlint.report import Report, SuppressedFinding

#: rules about suppressions and config themselves: a suppression cannot hide them
UNSUPPRESSIBLE = ("BL501", "BL502", "BL503", "BL504")


def today() -> dt.date:
    """Today, or ``BUDGETLINT_TODAY`` (YYYY-MM-DD) when set (tests, reproducible CI runs)."""
    fixed = os.environ.get("BUDGETLINT_TODAY")
    if fixed:
        try:
            return dt.date.fromisoformat(fixed.strip())
        except ValueError:
            raise ValueError(f"BUDGETLINT_TODAY={fixed!r} is not a date (YYYY-MM-DD)") from None
    return dt.date.today()


def _specificity(code: str, selectors: list[str] | dict) -> int:
    """Length of the longest selector that matches ``code``; -1 when none does."""
    best = -1
    for sel in selectors:
        if code.startswith(sel):
            best = max(best, len(sel))
    return best


def is_enabled(code: str, select: list[str] | None, ignore: list[str]) -> bool:
    if code == "BL501":
        return True
    chosen = _specificity(code, select) if select is not None else 0
    dropped = _specificity(code, ignore)
    return chosen >= 0 and chosen > dropped


def _glob_matches(glob: str, file: str, base_dir: Path) -> bool:
    """Whether ``file`` matches a per-file-ignores ``glob``, with gitignore semantics.

    As in a ``.gitignore`` in the config file's folder (pathspec's
    GitIgnoreSpec's answers, matched without backtracking by
    :mod:`.globmatch`): ``*`` and ``?`` never cross ``/``; ``**`` spans folders,
    including none (``budgets/**/a.yaml`` matches ``budgets/a.yaml``); a glob
    with a ``/`` is anchored at the config's folder, one without matches at
    any depth; a trailing ``/`` matches everything under a folder. A leading
    ``./`` only says "this folder" (``./.hidden/*.yaml`` is ``.hidden/*.yaml``).
    """
    path = Path(file)
    absolute = path if path.is_absolute() else (Path.cwd() / path)
    try:
        relative = absolute.resolve().relative_to(base_dir.resolve()).as_posix()
    except (ValueError, OSError):
        relative = path.as_posix()  # outside the config's folder: the path as shown
    from budgetlint.run.globmatch import matches

    return matches(glob, relative)


def _severity_for(finding: Finding, overrides: dict[str, Severity]) -> Severity:
    best, level = -1, finding.severity
    for sel, sev in overrides.items():
        if finding.rule.startswith(sel) and len(sel) > best:
            best, level = len(sel), sev
    return level


def _rule_severity(code: str) -> Severity:
    from budgetlint.rules import get_rule

    rule = get_rule(code)
    return rule.severity if rule is not None else Severity.WARNING


def apply_suppressions(report: Report, budgets: Any, on: dt.date) -> list[Finding]:
    """Apply the ``suppress:`` entries of ``budgets`` to ``report``'s findings.

    Suppressed findings move to ``report.suppressed``; returns the findings
    the suppressions raise themselves (BL502-BL504). Only findings that name
    one of these budgets can be suppressed, so a streaming run applies this
    per file.
    """
    raised: list[Finding] = []
    kept = list(report.findings)
    for budget in budgets:
        for s in budget.suppressions:
            code = s.rule.strip().upper()
            where = s.loc()
            if not (s.reason or "").strip():
                raised.append(Finding(
                    "BL502", _rule_severity("BL502"),
                    f"suppression of {code} in budget {budget.name!r} has no reason; it does not apply",
                    where, budget=budget.name, fix="add `reason:` saying why the finding is acceptable"))
                continue
            expiry: dt.date | None = None
            if s.expires is not None:
                expiry = parse_date(s.expires)
                if expiry is None:
                    continue  # not a date: the schema check reports it (BL003); nothing applies
            if expiry is not None and on > expiry:
                days = (on - expiry).days
                raised.append(Finding(
                    "BL503", _rule_severity("BL503"),
                    f"suppression of {code} in budget {budget.name!r} expired on {expiry.isoformat()} "
                    f"({days} day{'s' if days != 1 else ''} ago); it no longer applies",
                    s.loc("expires") if s.has("expires") else where, budget=budget.name,
                    fix="fix what the rule reports, or renew the suppression with a new `expires:` and reason"))
                continue
            if code in UNSUPPRESSIBLE:
                raised.append(Finding(
                    "BL504", _rule_severity("BL504"),
                    f"suppression of {code} in budget {budget.name!r} suppresses nothing: "
                    f"{code} is about suppressions and configuration and cannot be suppressed",
                    where, budget=budget.name, fix="remove this suppression"))
                continue
            hits = [f for f in kept if f.rule == code and f.budget == budget.name]
            if not hits:
                raised.append(Finding(
                    "BL504", _rule_severity("BL504"),
                    f"suppression of {code} in budget {budget.name!r} suppresses nothing: "
                    f"no {code} finding for this budget",
                    where, budget=budget.name, fix="remove this suppression"))
                continue
            hit_ids = {id(f) for f in hits}
            kept = [f for f in kept if id(f) not in hit_ids]
            for f in hits:
                report.suppressed.append(SuppressedFinding(f, s.reason.strip(), s.expires, where))
    report.findings = kept
    return raised


def apply_policy(report: Report, config: Any = None, *, on: dt.date | None = None) -> Report:
    """select/ignore, per-file ignores and severity overrides; returns ``report``.

    Suppressions were applied before, per budgets file (:func:`apply_suppressions`).
    A spilled report (too big to hold) had the policy applied to each file's
    findings as they were added (:func:`policy_findings`): only the config's own
    findings are left to add.
    """
    from budgetlint.options.config_file import Config

    config = config if config is not None else Config()
    if report.spilled:
        report.findings.extend(policy_findings(config.findings, config))
        return report
    findings = list(report.findings) + [f for f in config.findings if f not in report.findings]
    report.findings = policy_findings(findings, config)
    return report


def policy_findings(findings: Any, config: Any) -> list[Finding]:
    """``findings`` with select/ignore, per-file ignores and severity overrides applied (idempotent)."""
    if config.select is None and not config.ignore and not config.per_file_ignores and not config.severity:
        return list(findings)  # no policy: every finding as it is
    out: list[Finding] = []
    for f in findings:
        if not is_enabled(f.rule, config.select, config.ignore):
            continue
        if f.location is not None and f.rule != "BL501" and any(
                _glob_matches(glob, f.location.file, config.base_dir) and _specificity(f.rule, codes) >= 0
                for glob, codes in config.per_file_ignores.items()):
            continue
        level = _severity_for(f, config.severity)
        out.append(f if level == f.severity else dataclasses.replace(f, severity=level))
    return out
