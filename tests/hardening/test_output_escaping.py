"""Issue 18 point 3: paths and user strings never reach the output raw.

A committed file named ``x<newline>::error file=app.py::pwned.yaml`` printed a
line GitHub reads as a workflow command; names with ESC sequences coloured
or retitled the terminal; budget text rendered as links and images in the
job summary. Every plain-text surface (text, JUnit, explain, catalog) now
writes control characters as escapes, and markdown (the job summary and
``--format markdown``) renders budget text as text.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from hardening_bounds import assert_bounded, run_bounded

EVIL_FILE = "x\n::error file=app.py::pwned.yaml"
ESC = "\x1b"


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    budgets = tmp_path / "budgets"
    budgets.mkdir()
    (budgets / EVIL_FILE).write_text(
        'version: 1\nkind: budgets\nbudgets:\n  - name: "[click](https://evil.example)"\n'
        '    owner: "![x](https://tracker.example/p.png)"\n    promise: {ttft: "2 50 ms"}\n')
    (budgets / "hw.yaml").write_text(
        'version: 1\nkind: hardware\nhardware:\n  - name: "evil\\e[31mgpu\\e]0;owned\\a"\n'
        '    source: "https://example.com \\e]8;;https://evil.example\\a"\n'
        "    memory: 80 GB\n    bandwidth: 3 TB/s\n    compute: {bf16: 900 TFLOP/s}\n")
    (budgets / "ok.yaml").write_text(
        'version: 1\nkind: budgets\nbudgets:\n  - name: chat\n    owner: "@acme/chat"\n'
        "    workload: {prompt_tokens: 100, output_tokens: 100}\n    promise: {ttft: 1 s}\n"
        '    deployment: {model: llama-3.1-8b, hardware: "evil\\e[31mgpu\\e]0;owned\\a"}\n')
    return tmp_path


def _no_raw_control(out: str) -> None:
    assert ESC not in out and "\x07" not in out, repr(out[-2000:])
    for line in out.splitlines():
        assert not line.lstrip().startswith("::error file=app.py"), repr(line)


@pytest.mark.parametrize("fmt", ["text", "junit", "github", "markdown"])
def test_a_file_name_cannot_print_a_workflow_command(tree: Path, fmt: str) -> None:
    run = run_bounded("check", "budgets", "--no-codeowners", "--no-summary", "-f", fmt, cwd=tree)
    assert_bounded(run, names="pwned.yaml", codes=(1,), rule="BL007")
    _no_raw_control(run.stdout)
    if fmt in ("text", "junit"):
        assert "budgets/x\\n::error file=app.py::pwned.yaml:6:21" in run.stdout, run.stdout
    if fmt == "junit":
        root = ET.fromstring(run.stdout)
        for element in root.iter():
            for value in [element.text or "", *element.attrib.values()]:
                _no_raw_control(value)


def test_the_job_summary_renders_budget_text_as_text(tree: Path) -> None:
    summary = tree / "summary.md"
    run = run_bounded("check", "budgets", "--no-codeowners", cwd=tree, env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert_bounded(run, names="pwned.yaml", codes=(1,), rule="BL007")
    md = summary.read_text(encoding="utf-8")
    _no_raw_control(md)
    for markup in ("[click](", "![x](", "](https://"):
        assert markup not in md, md
    assert "\\[click\\](https&#58;//evil.example)" in md  # shown as the characters it is made of
    assert "!\\[x\\](https&#58;//tracker.example/p.png)" in md


def test_explain_and_catalog_escape_names_and_sources(tree: Path) -> None:
    run = run_bounded("explain", "budgets", cwd=tree)
    assert run.returncode in (0, 1) and "Traceback" not in run.stderr, run.output
    _no_raw_control(run.output)
    assert "evil\\x1b[31mgpu\\x1b]0;owned\\x07" in run.stdout, run.stdout
    show = run_bounded("catalog", "show", "evil\x1b[31mgpu\x1b]0;owned\x07", "budgets", cwd=tree)
    assert show.returncode == 0, show.output
    _no_raw_control(show.output)
    assert "https://example.com \\x1b]8;;https://evil.example\\x07" in show.stdout, show.stdout
    listing = run_bounded("catalog", "hardware", "budgets", cwd=tree)
    assert listing.returncode == 0 and "evil\\x1b[31mgpu" in listing.stdout, listing.output
    _no_raw_control(listing.output)


def test_a_missing_path_is_named_escaped(tmp_path: Path) -> None:
    run = run_bounded("check", "gone\n::error file=app.py::x.yaml", "--no-codeowners", "--no-summary", cwd=tmp_path)
    assert_bounded(run, names="gone\\n::error file=app.py::x.yaml", codes=(2,))
    _no_raw_control(run.stderr)
