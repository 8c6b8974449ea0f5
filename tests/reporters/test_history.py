"""``check --history FILE``: past JSON reports, one per line, drawn as each budget's
headroom over commits in the HTML report (issue 27: "Lighthouse CI shows each
metric over commits")."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from budgetlint.cli import main
from budgetlint.report import BudgetResult, Report
from budgetlint.reporters.html import render
from budgetlint.run.history import HistoryError, read_history


def _report(headroom: float, verdict: str = "met") -> dict:
    b = BudgetResult("chat", "b.yaml", 1, "@o", "p95", promises={"ttft_s": 0.4},
                     analysis={"headroom_ttft": headroom}, verdicts={"ttft": verdict})
    return Report(files=["b.yaml"], budgets=[b]).as_dict()


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_reads_reports_and_wrapped_reports_oldest_first(tmp_path: Path) -> None:
    path = _write(tmp_path / "h.jsonl", [
        json.dumps(_report(0.5)),
        "",
        json.dumps({"commit": "a1b2c3d", "report": _report(0.25, "met")}),
        json.dumps({**_report(-0.1, "at-risk"), "commit": "e4f5"}),
    ])
    entries = read_history(str(path))
    assert [e["label"] for e in entries] == ["line 1", "a1b2c3d", "e4f5"]
    assert [e["budgets"]["chat"]["headroom"]["ttft"] for e in entries] == [0.5, 0.25, -0.1]
    assert entries[2]["budgets"]["chat"]["verdicts"] == {"ttft": "at-risk"}


@pytest.mark.parametrize(("line", "where", "words"), [
    ('{"budgets": [', ":1:14:", "one JSON report per line"),
    ('{"budgets": [], "x": NaN}', ":1:", "one JSON report per line"),
    ("[1, 2]", ":1:1:", "expected a JSON report"),
    ('{"summary": {}}', ":1:1:", "expected a JSON report"),
])
def test_bad_lines_are_placed_and_said(tmp_path: Path, line: str, where: str, words: str) -> None:
    path = _write(tmp_path / "h.jsonl", [line])
    with pytest.raises(HistoryError) as err:
        read_history(str(path))
    assert f"h.jsonl{where}" in str(err.value) and words in str(err.value)


def test_the_html_report_draws_headroom_over_commits(tmp_path: Path) -> None:
    entries = read_history(str(_write(tmp_path / "h.jsonl", [
        json.dumps({"commit": "c1", "report": _report(0.5)}),
        json.dumps({"commit": "c2", "report": _report(0.25)}),
    ])))
    now = Report(files=["b.yaml"], budgets=[BudgetResult("chat", "b.yaml", 1, "@o", "p95", {"ttft_s": 0.4},
                                                         {"headroom_ttft": -0.2}, {"ttft": "at-risk"})])
    now.history = entries
    page = render(now)
    svg = re.search(r'<svg[^>]*id="b1-history"[\s\S]*?</svg>', page).group(0)
    points = [(float(x), float(y)) for x, y in re.findall(r'data-series="ttft" data-x="([^"]+)" data-y="([^"]+)"', svg)]
    assert points == [(1.0, 0.5), (2.0, 0.25), (3.0, -0.2)]  # the two commits, then this run
    assert 'data-axis="y" data-value="0.0"' in svg  # the promise: headroom 0
    table = page[page.index('id="fig-b1-history"'):]
    assert "c1" in table and "c2" in table and "this run" in table
    assert "history" not in render(Report(files=["b.yaml"], budgets=now.budgets))  # no --history: no chart


def test_cli_history_flag(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(repo)
    runner = CliRunner()
    first = runner.invoke(main, ["check", "budgets", "--no-codeowners", "--no-summary", "-f", "json"])
    history = _write(tmp_path / "h.jsonl", [json.dumps({"commit": "old", "report": json.loads(first.output)})])
    out = tmp_path / "r.html"
    done = runner.invoke(main, ["check", "budgets", "--no-codeowners", "--no-summary", "-f", "html", "-o", str(out),
                                "--history", str(history)])
    assert done.exit_code == 0, done.output
    assert out.read_text(encoding="utf-8").count('-history"') >= 1
    bad = _write(tmp_path / "bad.jsonl", ["not json"])
    done = runner.invoke(main, ["check", "budgets", "--no-codeowners", "--no-summary", "--history", str(bad)])
    assert done.exit_code == 2 and "bad.jsonl:1:1: expected one JSON report per line" in done.output


def _child_check_with_history(history: Path, cwd: Path):  # type: ignore[no-untyped-def]
    import subprocess
    import sys

    from cli_runner import child_env

    repo = Path(__file__).resolve().parents[2]
    return subprocess.run([sys.executable, "-m", "budgetlint", "check", str(repo / "budgets"), "--no-codeowners",
                           "--no-summary", "--history", str(history)], capture_output=True, text=True,
                          cwd=cwd, env=child_env(), timeout=120)


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="named pipes are POSIX")
@pytest.mark.parametrize(("make", "said"), [("fifo", ": a named pipe (FIFO), not a regular file"),
                                            ("zero", ": a character device, not a regular file"),
                                            ("folder", "' is a directory")])  # the last: click's own check
def test_a_history_that_is_no_regular_file_is_said_in_bounded_time(tmp_path: Path, make: str, said: str) -> None:
    """Before, a named pipe as --history waited for a writer for ever and a link to /dev/zero was one line
    without end (memory growing): both ran into the child's timeout. Now each is exit 2, said."""
    import os

    history = tmp_path / "h.jsonl"
    if make == "fifo":
        os.mkfifo(history)
    elif make == "zero":
        history.symlink_to("/dev/zero")
    else:
        history.mkdir()
    proc = _child_check_with_history(history, tmp_path)
    assert proc.returncode == 2
    assert f"{history}{said}" in proc.stderr


def test_a_history_over_the_limit_is_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from budgetlint.run import history as module

    path = _write(tmp_path / "h.jsonl", [json.dumps(_report(0.5))] * 3)
    size = path.stat().st_size
    monkeypatch.setattr(module, "MAX_BYTES", size - 1)
    with pytest.raises(HistoryError) as err:
        read_history(str(path))
    assert f"--history file of {size} bytes; at most {size - 1} are read" in str(err.value)
    monkeypatch.setattr(module, "MAX_BYTES", size)
    assert len(read_history(str(path))) == 3
