"""The reporter registry: names without imports, one signature for all."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

from budgetlint.report import Report
from budgetlint.reporters import DEFAULT_FORMAT, FORMATS, REPORTERS, get_reporter, render


def test_formats_are_the_documented_ones() -> None:
    assert set(REPORTERS) == {"text", "json", "sarif", "github", "junit", "markdown", "html", "gitlab", "jsonl"}
    assert FORMATS == tuple(REPORTERS)
    assert DEFAULT_FORMAT in REPORTERS


def test_names_are_available_without_importing_any_reporter_or_click() -> None:
    code = (
        "import sys, budgetlint.reporters as r\n"
        "names = list(r.REPORTERS)\n"
        "loaded = [m for m in r.REPORTERS.values() if m in sys.modules]\n"
        "assert not loaded, loaded\n"
        "for name in names: r.get_reporter(name)\n"
        "assert 'click' not in sys.modules, 'a reporter imported click'\n"
        "print(len(names))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(len(FORMATS))


@pytest.mark.parametrize("name", FORMATS)
def test_every_reporter_has_the_one_signature(name: str) -> None:
    fn = get_reporter(name)
    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    assert params[0].name == "report"
    assert sig.parameters["color"].kind is inspect.Parameter.KEYWORD_ONLY
    assert sig.parameters["color"].default is False
    for extra in params[2:]:
        assert extra.default is not inspect.Parameter.empty


@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize("color", [False, True])
def test_every_reporter_renders_the_canned_and_the_empty_report(name: str, color: bool, report: Report) -> None:
    for r in (report, Report()):
        out = render(name, r, color=color)
        # JSON lines of no finding are no lines (a blank line is not a JSON value)
        assert isinstance(out, str) and (out.endswith("\n") or (name == "jsonl" and out == "" and not r.findings))
        if name != "text":
            assert "\x1b[" not in out, "only the text format colours"


def test_unknown_format_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="unknown output format 'yaml'.*text, json"):
        get_reporter("yaml")
