"""Canned Reports that every reporter renders, built by hand (no CLI).

A module of its own (not conftest.py) so that tests import it by a unique name."""

from __future__ import annotations

from budgetlint.findings import Finding, Location, Severity
from budgetlint.report import BudgetResult, Report

#: messages that exercise every escaping rule: %, comma, colon, CR/LF, |, <>
TRICKY = "100% of 3,350 GB/s: needs | 2 devices\nsecond line <b>&</b>"


def canned_report() -> Report:
    chat = BudgetResult(
        name="chat-reply",
        file="budgets/chat.yaml",
        line=4,
        owner="@acme/chat",
        percentile="p95",
        promises={"ttft_s": 0.4, "tpot_s": 0.05, "e2e_s": 30.0},
        verdicts={"ttft": "met", "tpot": "cannot-be-met", "e2e": "at-risk"},
        analysis={
            "bound_ttft_s": 0.21,
            "realistic_ttft_s": 0.4 / 1.475,  # headroom = promise / estimate - 1
            "headroom_ttft": 0.475,
            "measured_ttft_s": 0.312,
            "bound_tpot_s": 0.061,
            "realistic_tpot_s": 0.05 / 0.78,
            "headroom_tpot": -0.22,
        },
    )
    summarize = BudgetResult(
        name="summarize",
        file="budgets/batch.yml",
        line=2,
        owner=None,
        percentile="p99",
        promises={"pace_token_per_s": 20.0, "e2e_s": 120.0},
        verdicts={"pace": "unknown", "e2e": "met"},
        analysis={},
    )
    findings = [
        Finding(
            "BL301",
            Severity.ERROR,
            "tpot 50 ms cannot be met: the decode step needs at least 61.2 ms at 100% of peak",
            Location("budgets/chat.yaml", 14, 7),
            budget="chat-reply",
            promise="tpot",
            fix="use 2 devices, or fp8 weights",
        ),
        Finding(
            "BL003",
            Severity.ERROR,
            TRICKY,
            Location("budgets/chat.yaml", 9, 3),
            budget="chat-reply",
        ),
        Finding(
            "BL009",
            Severity.WARNING,
            "duplicate name 'summarize', first defined at budgets/batch.yml:2:5",
            Location("budgets/batch.yml", 30, 5),
            budget="summarize",
            promise="pace",
        ),
        Finding(
            "BL013",
            Severity.INFO,
            "file has no `kind`: skipped",
            Location("budgets/notes.yaml", 1, 1),
        ),
        Finding(
            "BL010",
            Severity.ERROR,
            "cannot read budgets/locked.yaml: permission denied",
            None,
        ),
        Finding(
            "BL002",
            Severity.WARNING,
            "key 'ttft' appears twice, a,b:c",
            Location("dir with space/x.yaml", 3, 1),
        ),
    ]
    return Report(
        files=["budgets/batch.yml", "budgets/chat.yaml", "budgets/notes.yaml", "dir with space/x.yaml", "budgets/locked.yaml"],
        budgets=[chat, summarize],
        findings=findings,
    )


def many_findings_report(errors: int, warnings: int, infos: int) -> Report:
    findings = []
    for severity, n in ((Severity.ERROR, errors), (Severity.WARNING, warnings), (Severity.INFO, infos)):
        for i in range(n):
            findings.append(
                Finding(
                    "BL003",
                    severity,
                    f"{severity.label} number {i}",
                    Location(f"budgets/f{i % 7}.yaml", i + 1, 1),
                )
            )
    return Report(files=[f"budgets/f{i}.yaml" for i in range(7)], budgets=[], findings=findings)
