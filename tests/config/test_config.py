"""Configuration: discovery, every key, precedence (flag over file), BL501 with positions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from budgetlint.cli import main
from budgetlint.options.config_file import find_config, load_config, parse_config
from budgetlint.findings import Severity

AT_RISK = """\
version: 1
kind: budgets
budgets:
  - name: chat
    owner: "@acme/chat"
    percentile: p95
    workload: {prompt_tokens: 1000, output_tokens: 200}
    promise: {pace: 35 token/s}
    deployment: {model: llama-3.1-70b, hardware: h100-sxm, weight_precision: bf16, devices: 2,
                 memory_overhead: 1 GiB}
"""


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git-root-like folder with one budget that is at risk (BL303 warning)."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "budgets").mkdir()
    (tmp_path / "budgets" / "chat.yaml").write_text(AT_RISK, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _check(*args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(main, ["check", "--no-codeowners", "-f", "json", *args])
    assert "Traceback" not in result.output, result.output
    return result.exit_code, json.loads(result.output)


def _rules(report: dict, *levels: str) -> list[str]:
    levels = levels or ("error", "warning")
    return sorted(f["rule"] for f in report["findings"] if f["severity"] in levels)


# -- discovery ----------------------------------------------------------------------------------


def test_found_from_a_subfolder_up_to_the_git_root(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.budgetlint]\nfail-on = 'warning'\n")
    sub = project / "a" / "b"
    sub.mkdir(parents=True)
    assert find_config(sub) == (project / "pyproject.toml").resolve()


def test_not_found_above_the_git_root(project: Path) -> None:
    inner = project / "inner"
    (inner / ".git").mkdir(parents=True)
    (project / "budgetlint.toml").write_text("fail-on = 'warning'\n")
    assert find_config(inner) is None


def test_budgetlint_toml_wins_over_pyproject(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.budgetlint]\nfail-on = 'info'\n")
    (project / "budgetlint.toml").write_text("fail-on = 'warning'\n")
    cfg = load_config(start=project)
    assert cfg.path == (project / "budgetlint.toml").resolve()
    assert cfg.fail_on == "warning"


def test_pyproject_without_the_table_is_passed_over(project: Path) -> None:
    sub = project / "pkg"
    sub.mkdir()
    (sub / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (project / "pyproject.toml").write_text("[tool.budgetlint]\nfail-on = 'info'\n")
    assert find_config(sub) == (project / "pyproject.toml").resolve()


def test_budgetlint_toml_accepts_a_tool_table(project: Path) -> None:
    (project / "budgetlint.toml").write_text("[tool.budgetlint]\nignore = ['BL3']\n")
    assert load_config(start=project).ignore == ["BL3"]


# -- every key ----------------------------------------------------------------------------------


def test_every_key_is_read(project: Path) -> None:
    (project / "budgetlint.toml").write_text("""\
paths = ["budgets"]
select = ["BL1", "BL303", "promise-cannot-be-met"]
ignore = ["BL104"]
severity = {BL303 = "error", BL1 = "info"}
fail-on = "warning"
margin-warning = 0.2
efficiency = {bandwidth = 0.8, compute = 0.6}
collective-overhead = 0.05
memory-usable-fraction = 0.85
catalog = ["hw/extra.yaml"]
teams = ["teams.yaml"]
codeowners = false
fail-on-regression = true
regression-threshold = 0.1

[per-file-ignores]
"budgets/legacy/*.yaml" = ["BL101"]
""")
    cfg = load_config(start=project)
    assert cfg.findings == []
    assert cfg.paths == [str(project.resolve() / "budgets")]
    assert cfg.select == ["BL1", "BL303", "BL301"]
    assert cfg.ignore == ["BL104"]
    assert cfg.severity == {"BL303": Severity.ERROR, "BL1": Severity.INFO}
    assert cfg.fail_on == "warning" and cfg.margin_warning == 0.2
    assert (cfg.efficiency_bandwidth, cfg.efficiency_compute) == (0.8, 0.6)
    assert (cfg.collective_overhead, cfg.memory_usable_fraction) == (0.05, 0.85)
    assert cfg.catalog == [str(project.resolve() / "hw" / "extra.yaml")]
    assert cfg.teams == [str(project.resolve() / "teams.yaml")]
    assert cfg.use_codeowners is False
    assert cfg.fail_on_regression is True and cfg.regression_threshold == 0.1
    assert cfg.per_file_ignores == {"budgets/legacy/*.yaml": ["BL101"]}


# -- BL501 --------------------------------------------------------------------------------------


def test_bl501_unknown_key_with_did_you_mean_and_position(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        "[project]\nname = 'x'\n\n[tool.budgetlint]\nfail-on = 'error'\n  ingore = ['BL303']\n")
    code, report = _check()
    (f,) = [f for f in report["findings"] if f["rule"] == "BL501"]
    assert f["severity"] == "error"
    assert f["message"] == "unknown config key 'ingore'; did you mean 'ignore'?"
    assert (f["file"], f["line"], f["column"]) == ("pyproject.toml", 6, 3)
    assert code == 1


def test_bl501_nested_unknown_key_and_bad_values(project: Path) -> None:
    (project / "budgetlint.toml").write_text("""\
fail-on = "warn"
select = ["BL999"]
[efficiency]
bandwith = 0.8
compute = 1.5
[severity]
BL303 = "fatal"
""")
    cfg = load_config(start=project)
    got = {(f.location.line, f.location.column): f.message for f in cfg.findings}
    assert "did you mean 'warning'" in got[(1, 1)]
    assert "no rule code starts with 'BL999'" in got[(2, 1)]
    assert got[(4, 1)] == "unknown key 'efficiency.bandwith'; did you mean 'bandwidth'?"
    assert "'efficiency.compute' must be a number" in got[(5, 1)]
    assert "'severity.BL303' must be one of error, warning, info" in got[(7, 1)]
    assert all(f.rule == "BL501" and f.severity is Severity.ERROR for f in cfg.findings)


def test_bl501_toml_syntax_error_has_its_position(project: Path) -> None:
    path = project / "budgetlint.toml"
    path.write_text("fail-on = 'error'\nselect = [\n")
    cfg = parse_config(path)
    (f,) = cfg.findings
    assert f.rule == "BL501" and "not valid TOML" in f.message
    assert f.location is not None and f.location.line >= 2


def test_bl501_cannot_be_ignored(project: Path) -> None:
    (project / "budgetlint.toml").write_text("ignore = ['BL5']\nunknown = 1\n")
    _, report = _check()
    assert "BL501" in _rules(report)


def test_valid_config_passes(project: Path) -> None:
    (project / "budgetlint.toml").write_text("ignore = ['BL303']\n")
    code, report = _check()
    assert _rules(report) == [] and code == 0


def test_missing_config_flag_file_is_a_usage_error(project: Path) -> None:
    result = CliRunner().invoke(main, ["check", "--config", "nope.toml"])
    assert result.exit_code == 2
    assert "no such config file" in result.output


# -- applying -----------------------------------------------------------------------------------


def test_paths_default_from_config(project: Path) -> None:
    (project / "budgets").rename(project / "slo")
    (project / "budgetlint.toml").write_text("paths = ['slo']\n")
    _, report = _check()
    assert report["summary"]["budgets"] == 1
    assert _rules(report) == ["BL303"]


def test_select_and_specificity(project: Path) -> None:
    (project / "budgetlint.toml").write_text("select = ['BL303']\nignore = ['BL3']\n")
    _, report = _check()
    assert sorted({f["rule"] for f in report["findings"]}) == ["BL303"]


def test_severity_override_keeps_the_code(project: Path) -> None:
    (project / "budgetlint.toml").write_text("[severity]\nBL303 = 'error'\n")
    code, report = _check()
    (f,) = [f for f in report["findings"] if f["rule"] == "BL303"]
    assert f["severity"] == "error" and code == 1


def test_per_file_ignores(project: Path) -> None:
    (project / "budgetlint.toml").write_text("[per-file-ignores]\n'budgets/*.yaml' = ['BL303']\n")
    _, report = _check()
    assert _rules(report) == []
    (project / "budgetlint.toml").write_text("[per-file-ignores]\n'other/*.yaml' = ['BL303']\n")
    _, report = _check()
    assert _rules(report) == ["BL303"]


def test_fail_on_from_config(project: Path) -> None:
    (project / "budgetlint.toml").write_text("fail-on = 'warning'\n")
    code, _ = _check()
    assert code == 1


def test_efficiency_from_config_changes_the_verdict(project: Path) -> None:
    (project / "budgetlint.toml").write_text("efficiency = {bandwidth = 0.95}\n")
    _, report = _check()
    assert _rules(report) == []  # met at 95% of peak bandwidth


def test_catalog_and_teams_paths_relative_to_the_config(project: Path) -> None:
    (project / "conf").mkdir()
    (project / "data").mkdir()
    (project / "data" / "hw.yaml").write_text("""\
version: 1
kind: hardware
hardware:
  - name: big-gpu
    memory: 200 GB
    bandwidth: 10 TB/s
    compute: {bf16: 2000 TFLOP/s}
    source: https://example.com/big-gpu
""")
    (project / "data" / "teams.yaml").write_text("version: 1\nkind: teams\nteams:\n  - handle: '@acme/chat'\n")
    (project / "budgets" / "chat.yaml").write_text(AT_RISK.replace("h100-sxm", "big-gpu"))
    (project / "conf" / "budgetlint.toml").write_text(
        "catalog = ['../data/hw.yaml']\nteams = ['../data/teams.yaml']\n")
    code, report = _check("--config", "conf/budgetlint.toml", "budgets")
    rules = {f["rule"] for f in report["findings"]}
    assert "BL008" not in rules  # big-gpu resolved from the config's catalog
    assert "BL104" not in rules  # the teams registry was read
    assert code == 0


# -- precedence: flags over file --------------------------------------------------------------


def test_flag_fail_on_overrides_config(project: Path) -> None:
    (project / "budgetlint.toml").write_text("fail-on = 'warning'\n")
    code, _ = _check("--fail-on", "error")
    assert code == 0


def test_flag_select_and_ignore_override_config(project: Path) -> None:
    (project / "budgetlint.toml").write_text("ignore = ['BL303']\n")
    _, report = _check("--ignore", "BL104")
    assert _rules(report) == ["BL303"]
    (project / "budgetlint.toml").write_text("select = ['BL1']\n")
    _, report = _check("--select", "BL3,BL1")
    assert _rules(report) == ["BL303"]


def test_flag_efficiency_overrides_config(project: Path) -> None:
    (project / "budgetlint.toml").write_text("efficiency = {bandwidth = 0.95}\n")
    _, report = _check("--efficiency-bandwidth", "0.7")
    assert _rules(report) == ["BL303"]


def test_flag_paths_override_config_paths(project: Path) -> None:
    (project / "budgetlint.toml").write_text("paths = ['nowhere']\n")
    code, report = _check("budgets")
    assert report["summary"]["budgets"] == 1 and code == 0


def test_unknown_select_flag_is_a_usage_error(project: Path) -> None:
    result = CliRunner().invoke(main, ["check", "--select", "BL3O3"])
    assert result.exit_code == 2
    assert "did you mean" in result.output


def test_config_schema_matches_the_keys(repo_root: Path) -> None:
    import jsonschema

    from budgetlint.options.config_file import KEYS

    schema = json.loads((repo_root / "schemas" / "config.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    assert sorted(schema["properties"]) == sorted(KEYS)
    jsonschema.Draft202012Validator(schema).validate(
        {"select": ["BL3"], "severity": {"BL303": "error"}, "codeowners": False,
         "efficiency": {"bandwidth": 0.8}, "per-file-ignores": {"a/*.yaml": ["BL101"]}})
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema).validate({"ingore": ["BL3"]})


def test_a_leading_tilde_in_a_path_setting_is_the_home_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`~` and `~/...` are the home folder in every path setting (as in ruff's); until stop 46 they were a
    folder named `~` beside the config. Other names that begin with `~` stay relative to the config."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    (tmp_path / "budgetlint.toml").write_text(
        'allow-read = ["~/shared", "~"]\ncatalog = ["~/catalogs/gpus.yaml", "~notes/x.yaml"]\n'
        'cache-dir = "~/.cache/bl"\n')
    cfg = parse_config(tmp_path / "budgetlint.toml")
    assert cfg.allow_read == [str(home / "shared"), str(home)]
    assert cfg.catalog == [str(home / "catalogs" / "gpus.yaml"), str(tmp_path / "~notes" / "x.yaml")]
    assert cfg.cache_dir == str(home / ".cache" / "bl")
