"""The command line: help, version, rules, exit codes, explain, catalog, no tracebacks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from budgetlint import __version__
from budgetlint.cli import main
from budgetlint.rules import all_rules
from cli_runner import cli, cli_process

REPO = Path(__file__).resolve().parent.parent


def run(*args: str) -> tuple[int, str]:
    result = cli(*args)
    return result.exit_code, result.output


def test_version() -> None:
    code, out = run("--version")
    assert code == 0 and __version__ in out


def _commands(group=main, prefix=()):  # every command and subcommand
    for name, cmd in sorted(group.commands.items()):
        yield prefix + (name,)
        if hasattr(cmd, "commands"):
            yield from _commands(cmd, prefix + (name,))


@pytest.mark.parametrize("command", list(_commands()), ids=" ".join)
def test_help_on_every_command(command: tuple[str, ...]) -> None:
    code, out = run(*command, "--help")
    assert code == 0 and "Usage:" in out


def test_python_dash_m() -> None:
    out = cli_process("--version")
    assert out.returncode == 0 and __version__ in out.stdout


def test_rules_lists_every_rule() -> None:
    code, out = run("rules")
    assert code == 0
    for rule in all_rules():
        assert rule.code in out and rule.name in out
    code, out = run("rules", "--format", "json")
    assert {r["code"] for r in json.loads(out)} == {r.code for r in all_rules()}


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_every_rule_has_its_docs(rule) -> None:
    for section in ("What it checks", "Why", "Example", "Fix"):
        assert rule.section(section), f"{rule.code} lacks a '{section}' section"
    assert rule.summary and rule.summary.endswith(".")
    code, out = run("rule", rule.code)
    assert code == 0 and rule.summary in out
    code, out = run("rule", rule.name)
    assert code == 0


def test_rule_codes_are_unique_and_well_formed() -> None:
    codes = [r.code for r in all_rules()]
    assert len(codes) == len(set(codes))
    assert all(len(c) == 5 and c.startswith("BL") and c[2:].isdigit() for c in codes)


def test_unknown_rule_is_a_usage_error() -> None:
    code, out = run("rule", "BL2")
    assert code == 2 and "unknown rule" in out


def test_missing_path_is_a_usage_error() -> None:
    code, out = run("check", "does/not/exist")
    assert code == 2 and "does/not/exist" in out


def test_shipped_budgets_check_clean(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    code, out = run("check", "budgets/", "--format", "json")
    report = json.loads(out)
    assert code == 0, out
    assert report["summary"]["errors"] == 0 and report["summary"]["warnings"] == 0
    assert report["summary"]["budgets"] >= 4
    for budget in report["budgets"]:
        assert budget["owner"] and budget["verdicts"], budget["name"]
        assert all(v == "met" for v in budget["verdicts"].values()), budget


def test_default_path_is_budgets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    code, out = run("check", "--format", "json")
    assert code == 0 and json.loads(out)["summary"]["files"] >= 5


def test_explain_prints_the_arithmetic_for_each_shipped_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    code, out = run("explain", "budgets/")
    assert code == 0
    for name in ("chat-reply", "code-completion", "ticket-summary", "voice-turn"):
        assert name in out
    for step in ("Weights  W = P x b_w", "KV cache per token", "t_mem =", "t_cmp =", "Prefill of",
                 "TTFT =", "End to end =", "Memory per device", "Verdicts"):
        assert step in out


def test_explain_one_budget_and_unknown_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    code, out = run("explain", "budgets/", "--budget", "chat-reply")
    assert code == 0 and "chat-reply" in out and "voice-turn" not in out
    code, out = run("explain", "budgets/", "--budget", "nope")
    assert code == 2 and "no budget named" in out


def test_explain_shows_levers_for_a_miss(tmp_path: Path) -> None:
    f = tmp_path / "b.yaml"
    f.write_text("""version: 1
kind: budgets
budgets:
  - name: fast
    owner: "@a/b"
    workload: {prompt_tokens: 100, output_tokens: 100}
    promise: {pace: 40 token/s}
    deployment: {model: llama-3.1-70b, hardware: h100-sxm, weight_precision: bf16}
""")
    code, out = run("explain", str(f))
    assert code == 0
    # 70.55e9 x 2 B = 141 GB on one 3.35 TB/s, 80 GB device: 23.7 token/s and no fit;
    # 4-bit weights read per step, the input embedding (128,256 x 8,192) left out:
    # (70.55e9 - 1.05e9) x 0.5 B = 34.75 GB at the dense one-device default of 86.0 % of bandwidth
    # plus the fixed 2.1 ms an iteration (docs/calibration.md): 34.75e9 / (0.860 x 3.35e12) =
    # 12.06 ms + 2.1 ms = 14.16 ms a token, 70.6 token/s (a little less with the KV cache)
    assert "CANNOT BE MET" in out and "Levers that would meet" in out and "- 4-bit weights: pace 70" in out


def test_catalog_lists_and_shows() -> None:
    code, out = run("catalog", "hardware", "--format", "json")
    hw = json.loads(out)
    assert code == 0 and len(hw) >= 25 and all("name" in h for h in hw)
    code, out = run("catalog", "models", "--format", "json")
    assert code == 0 and len(json.loads(out)) >= 20
    code, out = run("catalog", "show", "h100")
    assert code == 0 and "h100-sxm" in out and "source" in out
    code, out = run("catalog", "show", "h100-sxn")
    assert code == 2 and "did you mean" in out


def test_user_catalog_entry_overrides_a_builtin(tmp_path: Path) -> None:
    (tmp_path / "hw.yaml").write_text("""version: 1
kind: hardware
hardware:
  - name: h100-capped
    extends: h100-sxm
    bandwidth: 1.7 TB/s
""")
    code, out = run("catalog", "show", "h100-capped", str(tmp_path), "--format", "json")
    entry = json.loads(out)
    assert code == 0 and entry["bandwidth_bytes_per_s"] == 1.7e12 and entry["memory_bytes"] == 80e9


def test_fail_on_warning(tmp_path: Path) -> None:
    f = tmp_path / "b.yaml"
    f.write_text("version: 1\nbudgets: []\n")  # BL013 warning only
    # (no budget in it: BL014, the nothing-checked error, is switched off here)
    assert run("check", str(f), "--no-codeowners", "--ignore", "BL014")[0] == 0
    assert run("check", str(f), "--no-codeowners", "--ignore", "BL014", "--fail-on", "warning")[0] == 1


BAD_INPUTS = {
    "empty.yaml": b"",
    "nul.yaml": b"\x00\x01\x02binary",
    "latin1.yaml": "kind: budgets\nname: caf\xe9\n".encode("latin-1"),
    "list.yaml": b"- 1\n- 2\n",
    "scalar.yaml": b"42\n",
    "kind-list.yaml": b"version: 1\nkind: [budgets]\n",
    "budgets-scalar.yaml": b"version: 1\nkind: budgets\nbudgets: 5\n",
    "budget-scalar.yaml": b"version: 1\nkind: budgets\nbudgets: [5, null, [1]]\n",
    "deep.yaml": b"[" * 5000 + b"]" * 5000,
    "tab.yaml": b"a:\n\tb: 1\n",
    "weird-quantities.yaml": b"""version: 1
kind: budgets
budgets:
  - name: x
    owner: "@a/b"
    workload: {prompt_tokens: 100, output_tokens: 10, concurrency: 1, prefix_cache_hit: nan}
    promise: {ttft: nan ms, pace: -5 token/s, e2e: 1e400 s, tpot: 0 ms}
    deployment:
      model: {name: m, parameters: "-8B", layers: 1, hidden_size: 1, attention_heads: 1}
      hardware: {name: h, memory: 0 GB, bandwidth: 1e-30 TB/s, compute: {bf16: 0 FLOP/s}}
      weight_precision: "0 bit"
      speculative: {accepted_tokens_per_pass: 1e9}
""",
    "moe-bad.yaml": b"""version: 1
kind: budgets
budgets:
  - name: y
    owner: "@a/b"
    workload: {prompt_tokens: 0, output_tokens: 1}
    promise: {pace: 1 token/s}
    deployment:
      model: {name: m2, parameters: 1B, active_parameters: 2B, layers: 2, hidden_size: 8,
              attention_heads: 2, experts: 2, experts_per_token: 4, attention: mla}
      hardware: h100-sxm
""",
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_input_never_gives_a_traceback(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_bytes(BAD_INPUTS[name])
    for fmt in ("text", "json"):
        result = cli("check", str(tmp_path / name), "--no-codeowners", "--format", fmt)
        assert result.exit_code in (0, 1, 2), result.output
        assert "internal error" not in result.output, result.output


def test_all_bad_inputs_in_one_run_report_every_problem(tmp_path: Path) -> None:
    for name, data in BAD_INPUTS.items():
        (tmp_path / name).write_bytes(data)
    out = cli_process("check", str(tmp_path), "--no-codeowners", "--format", "json")
    assert out.returncode == 1
    files = {Path(f["file"]).name for f in json.loads(out.stdout)["findings"] if f["file"]}
    for name in ("nul.yaml", "latin1.yaml", "deep.yaml", "tab.yaml", "weird-quantities.yaml"):
        assert name in files


def test_several_formats_in_one_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    sarif, junit = tmp_path / "out.sarif", tmp_path / "out.xml"
    code, out = run("check", "budgets/", "--format", "json", "--format", "sarif", "--format", "junit",
                    "--output", "-", "--output", str(sarif), "--output", str(junit))
    assert code == 0
    assert json.loads(out)["summary"]["budgets"] >= 4
    assert json.loads(sarif.read_text())["version"] == "2.1.0"
    assert junit.read_text().startswith("<?xml")


def test_outputs_must_pair_with_formats(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    code, out = run("check", "budgets/", "--format", "github", "--format", "sarif", "--output", str(tmp_path / "x"))
    assert code == 2 and "one --output per --format" in out
    assert not (tmp_path / "x").exists()


def test_a_file_checked_alone_sees_the_definitions_beside_it(tmp_path: Path) -> None:
    (tmp_path / "teams.yaml").write_text('version: 1\nkind: teams\nteams: [{handle: "@a/b"}]\n')
    (tmp_path / "hw.yaml").write_text("version: 1\nkind: hardware\nhardware:\n"
                                      "  - {name: our-gpu, extends: h100-sxm, bandwidth: 3 TB/s}\n")
    (tmp_path / "chat.yaml").write_text("""version: 1
kind: budgets
budgets:
  - name: chat
    owner: "@a/c"
    workload: {prompt_tokens: 100, output_tokens: 100}
    promise: {pace: 10 token/s}
    deployment: {model: llama-3.1-8b, hardware: our-gpu}
""")
    code, out = run("check", str(tmp_path / "chat.yaml"), "--no-codeowners", "--format", "json")
    report = json.loads(out)
    assert [f["rule"] for f in report["findings"] if f["severity"] == "error"] == ["BL103"]  # not BL008
    assert report["summary"]["files"] == 1


def test_quiet_leaves_out_information_findings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    code, out = run("check", "budgets/", "--quiet")
    assert code == 0 and "BL304" not in out and "No problems found" in out
    code, out = run("check", "tests/examples/overpromised.yaml", "--quiet", "--format", "json")
    report = json.loads(out)
    # 4 errors: BL201, BL202, BL102, and BL302 (no sequence fits at the usable fraction, issue 23)
    assert code == 1 and report["summary"]["errors"] == 4 and report["summary"]["infos"] == 0


def test_its_own_process_collects_less_often_and_in_process_callers_are_left_alone(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Run on the process's own arguments (the console script), budgetlint does a full collection
    every 100 middle-generation passes (Python's default: 10) and never lowers a threshold nor turns
    a switched-off collector on; called with arguments (CliRunner, a program embedding it), it
    changes nothing."""
    import atexit
    import gc

    import budgetlint.run.check as check_mod

    seen: list[tuple[int, int, int]] = []
    real = check_mod.run_check

    def spy(*args, **kwargs):
        seen.append(gc.get_threshold())
        return real(*args, **kwargs)

    monkeypatch.setattr(check_mod, "run_check", spy)
    monkeypatch.setattr(atexit, "register", lambda *a, **k: None)  # no gc.freeze at this test run's exit
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        code, _ = run("check", str(REPO / "budgets"), "--no-summary", "--no-codeowners")
        assert code == 0 and seen[-1] == (700, 10, 10) and gc.get_threshold() == (700, 10, 10)
        monkeypatch.setattr(sys, "argv", ["budgetlint", "check", str(REPO / "budgets"), "--no-summary",
                                          "--no-codeowners", "-q"])
        with pytest.raises(SystemExit) as exited:
            main()
        assert exited.value.code == 0 and seen[-1] == (200_000, 10, 100)
        gc.set_threshold(700, 10, 1000)
        with pytest.raises(SystemExit):
            main()
        assert seen[-1] == (200_000, 10, 1000)
        gc.set_threshold(0, 10, 10)
        with pytest.raises(SystemExit):
            main()
        assert seen[-1] == (0, 10, 10)
    finally:
        gc.set_threshold(*before)


def test_the_heap_is_frozen_before_the_final_collection() -> None:
    """At exit the CLI freezes the heap (gc.freeze), so the interpreter's last full collection
    has nothing to traverse."""
    probe = ("import atexit, gc, sys\n"
             "atexit.register(lambda: print('frozen', gc.get_freeze_count() > 0))\n"
             "from budgetlint.cli import main\n"
             "sys.argv = ['budgetlint', 'check', 'budgets/', '--no-summary', '--no-codeowners', '-q']\n"
             "main()\n")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.rstrip().endswith("frozen True")
