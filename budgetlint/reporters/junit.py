"""``junit``: JUnit XML for CI test dashboards.

One ``<testsuite>`` per file; one ``<testcase>`` per budget and promise
(``classname`` = file, ``name`` = ``budget: promise``). A finding of that
budget and promise that is an error becomes a ``<failure>``; warnings and
infos go to the testcase's ``<system-out>``, so it still counts as passed.
Findings about a budget but no (known) promise attach to a ``budget`` testcase;
findings about no budget are testcases of their own (``rule: message``), in
the suite of their file or, without a location, in the ``budgetlint`` suite.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Iterator

from budgetlint.findings import Finding, Severity, printable, printable_lines
from budgetlint.report import Report
from budgetlint.reporters.wording import (TOOL_NAME, format_headroom_cell, judged, judged_headroom, promise_rows,
                                         row_owner)


@dataclass
class _Case:
    name: str
    file: str
    line: int | None
    properties: dict[str, str] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)


def _suite_name(finding: Finding) -> str:
    return finding.location.file if finding.location else TOOL_NAME


def _cases(report: Report) -> dict[str, list[_Case]]:
    suites: dict[str, list[_Case]] = {}
    by_promise: dict[tuple[str, str], _Case] = {}
    by_budget: dict[str, _Case] = {}
    budget_files: dict[str, tuple[str, int]] = {}

    for budget in report.sorted_budgets():
        budget_files.setdefault(budget.name, (budget.file, budget.line))
        cases = suites.setdefault(budget.file, [])
        rows = promise_rows(budget)
        if not rows:
            case = _Case(budget.name, budget.file, budget.line, {"budget": budget.name})
            by_budget[budget.name] = case
            cases.append(case)
        for row in rows:
            props = {"budget": budget.name, "promise": row.name}
            if row.verdict:
                props["verdict"] = row.verdict
            basis = judged(budget, row).get("basis")
            if basis:
                props["basis"] = basis
            owner = row_owner(budget, row)
            if owner:
                props["owner"] = owner
            room = judged_headroom(budget, row)
            if room is not None:
                props["headroom"] = format_headroom_cell(room)
            if budget.percentile:
                props["percentile"] = budget.percentile
            case = _Case(f"{budget.name}: {row.name}", budget.file, budget.line, props)
            by_promise[(budget.name, row.name)] = case
            cases.append(case)

    for finding in report.sorted_findings():
        case = None
        if finding.budget is not None:
            promise = finding.promise or ""
            case = by_promise.get((finding.budget, promise))
            if case is None and promise == "pace":  # pace is 1/tpot: one testcase
                case = by_promise.get((finding.budget, "tpot"))
            if case is None:
                case = by_budget.get(finding.budget)
            if case is None:
                file, line = budget_files.get(
                    finding.budget,
                    (
                        _suite_name(finding),
                        finding.location.line if finding.location else None,
                    ),
                )
                case = _Case(finding.budget, file, line, {"budget": finding.budget})
                by_budget[finding.budget] = case
                suites.setdefault(file, []).append(case)
        else:
            first = finding.message.splitlines()[0] if finding.message else ""
            loc = finding.location
            case = _Case(
                f"{finding.rule}: {first}",
                _suite_name(finding),
                loc.line if loc else None,
                {"rule": finding.rule},
            )
            suites.setdefault(case.file, []).append(case)
        case.findings.append(finding)
    return suites


def _describe(finding: Finding) -> str:
    loc = f"{finding.location}: " if finding.location else ""  # str(Location) escapes the file name
    text = f"{loc}{finding.rule} {finding.severity.label}: " + "\n".join(printable_lines(finding.message))
    if finding.fix:
        text += "\nhelp: " + "\n".join(printable_lines(finding.fix))
    return text


def _totals(suites: dict[str, list[_Case]]) -> tuple[int, int]:
    tests = sum(len(cases) for cases in suites.values())
    failures = sum(1 for cases in suites.values() for c in cases
                   if any(f.severity == Severity.ERROR for f in c.findings))
    return tests, failures


def _root(tests: int, failures: int) -> ET.Element:
    root = ET.Element("testsuites", name=TOOL_NAME)
    for key, value in (("tests", tests), ("failures", failures), ("errors", 0), ("skipped", 0), ("time", 0)):
        root.set(key, str(value))
    return root


def _suite(suite_name: str, cases: list[_Case]) -> ET.Element:
    failures = sum(1 for c in cases if any(f.severity == Severity.ERROR for f in c.findings))
    suite = ET.Element(
        "testsuite",
        name=suite_name,
        tests=str(len(cases)),
        failures=str(failures),
        errors="0",
        skipped="0",
        time="0",
    )
    for case in cases:
        attrs = {"classname": suite_name, "name": case.name, "time": "0"}
        if suite_name != TOOL_NAME:
            attrs["file"] = case.file
        if case.line is not None:
            attrs["line"] = str(case.line)
        element = ET.SubElement(suite, "testcase", attrs)
        if case.properties:
            props = ET.SubElement(element, "properties")
            for key, value in case.properties.items():
                ET.SubElement(props, "property", name=key, value=value)
        errors = [f for f in case.findings if f.severity == Severity.ERROR]
        others = [f for f in case.findings if f.severity != Severity.ERROR]
        if errors:
            failure = ET.SubElement(
                element,
                "failure",
                message=" / ".join(f"{f.rule}: {f.message.splitlines()[0] if f.message else ''}" for f in errors),
                type=errors[0].rule,
            )
            failure.text = "\n\n".join(_describe(f) for f in errors)
        if others:
            out = ET.SubElement(element, "system-out")
            out.text = "\n".join(_describe(f) for f in others)
    return suite


def build(report: Report) -> ET.Element:
    """The whole document as one tree (``chunks`` writes the same a suite at a time)."""
    suites = _cases(report)
    root = _root(*_totals(suites))
    for suite_name in sorted(suites):
        root.append(_suite(suite_name, suites[suite_name]))
    return root


def _xml_safe(text: str) -> str:
    """Drop characters XML 1.0 cannot carry (control characters but tab/LF/CR)."""
    return "".join(
        ch
        for ch in text
        if ch in "\t\n\r" or (" " <= ch <= "\ud7ff") or ("\ue000" <= ch <= "\ufffd") or ch >= "\U00010000"
    )


def _sanitise(tree: ET.Element) -> None:
    """Texts XML can carry, and attributes (names, file names, messages) on one printable line."""
    for element in tree.iter():
        if element.text:
            element.text = _xml_safe(element.text)
        for key, value in list(element.attrib.items()):
            element.set(key, printable(value))


_HEADER = '<?xml version="1.0" encoding="UTF-8"?>\n'


def chunks(report: Report, *, color: bool = False) -> Iterator[str]:
    """The document a test suite at a time: the text ``ET.indent`` + ``ET.tostring``
    of the whole tree would give (``render``), without holding the tree."""
    suites = _cases(report)
    root = _root(*_totals(suites))
    _sanitise(root)
    if not suites:
        yield _HEADER + ET.tostring(root, encoding="unicode") + "\n"
        return
    root.text = "\n  "
    opening = ET.tostring(root, encoding="unicode")
    yield _HEADER + opening[: opening.rindex("</testsuites>")]
    names = sorted(suites)
    for i, name in enumerate(names):
        suite = _suite(name, suites[name])
        _sanitise(suite)
        ET.indent(suite, level=1)
        suite.tail = "\n  " if i < len(names) - 1 else "\n"
        yield ET.tostring(suite, encoding="unicode")
    yield "</testsuites>\n"


def render(report: Report, *, color: bool = False) -> str:
    root = build(report)
    _sanitise(root)
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return _HEADER + body + "\n"
