from __future__ import annotations

from pathlib import Path

from budgetlint.reporters import markdown
from budgetlint.reporters.step_summary import STEP_SUMMARY_LIMIT, append_step_summary, fit

from reporter_fixtures import canned_report


def test_not_set_means_nothing_written() -> None:
    assert append_step_summary("# hi\n", env={}) is False
    assert append_step_summary("# hi\n", env={"GITHUB_STEP_SUMMARY": ""}) is False


def test_appends(tmp_path: Path) -> None:
    target = tmp_path / "summary.md"
    target.write_text("# earlier step output\n", encoding="utf-8")
    md = markdown.render(canned_report())
    assert append_step_summary(md, env={"GITHUB_STEP_SUMMARY": str(target)}) is True
    text = target.read_text(encoding="utf-8")
    assert text.startswith("# earlier step output\n\n## ")
    assert text.endswith(md)


def test_creates_a_missing_file(tmp_path: Path) -> None:
    target = tmp_path / "summary.md"
    assert append_step_summary("hello", env={"GITHUB_STEP_SUMMARY": str(target)}) is True
    assert target.read_text(encoding="utf-8") == "hello\n"


def test_truncated_at_one_mebibyte(tmp_path: Path) -> None:
    target = tmp_path / "summary.md"
    target.write_bytes(b"x" * 1000 + b"\n")
    big = "".join(f"| row {i} | ü |\n" for i in range(100_000))  # ~1.6 MB, multi-byte characters
    assert append_step_summary(big, env={"GITHUB_STEP_SUMMARY": str(target)}) is True
    data = target.read_bytes()
    assert len(data) <= STEP_SUMMARY_LIMIT
    text = data.decode("utf-8")  # not cut inside a character
    assert "summary was cut here" in text
    body = text.split("\n> [!NOTE]")[0]
    assert body.endswith("|\n")  # cut at a line boundary


def test_full_file_gets_nothing(tmp_path: Path) -> None:
    target = tmp_path / "summary.md"
    target.write_bytes(b"x" * STEP_SUMMARY_LIMIT)
    assert append_step_summary("more", env={"GITHUB_STEP_SUMMARY": str(target)}) is False
    assert target.stat().st_size == STEP_SUMMARY_LIMIT


def test_fit() -> None:
    assert fit("abc\n", 10) == "abc\n"
    assert fit("a" * 100, 10) == ""
    out = fit("line\n" * 1000, 600)
    assert len(out.encode()) <= 600 and out.startswith("line\n")


def test_unwritable_target_is_not_an_error(tmp_path: Path) -> None:
    assert append_step_summary("x", env={"GITHUB_STEP_SUMMARY": str(tmp_path / "no" / "such" / "dir" / "f")}) is False


def test_a_summary_that_cannot_be_appended_is_said(tmp_path: Path) -> None:
    """Set but not appended (no room left, no such folder): nothing fails, and the reason reaches ``warn``
    (until stop 46 a silent skip)."""
    said: list[str] = []
    full = tmp_path / "summary.md"
    full.write_bytes(b"x" * STEP_SUMMARY_LIMIT)
    assert append_step_summary("more", env={"GITHUB_STEP_SUMMARY": str(full)}, warn=said.append) is False
    missing = tmp_path / "no" / "such" / "f"
    assert append_step_summary("x", env={"GITHUB_STEP_SUMMARY": str(missing)}, warn=said.append) is False
    assert said == [f"the job summary file {full} already holds 1,048,576 bytes of GitHub's 1,048,576: there is "
                    "no room for the summary, which was not appended",
                    f"cannot append the job summary to {missing}: No such file or directory"]


def test_the_command_line_warns_when_the_summary_cannot_be_appended(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from cli_runner import cli

    (tmp_path / "b.yaml").write_text("""version: 1
kind: budgets
budgets:
  - name: chat
    owner: "@acme/chat"
    promise: {ttft: 1 s}
""")
    missing = tmp_path / "no" / "such" / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(missing))
    result = cli("check", str(tmp_path / "b.yaml"), "--no-codeowners")
    assert result.exit_code == 0, result.output
    assert f"budgetlint: warning: cannot append the job summary to {missing}: No such file or directory" in result.output
