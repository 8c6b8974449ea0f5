"""The simulation cache between runs (evaluate/load_disk.py, issue 28): a warm run says what a cold
run said, byte for byte, without simulating; anything the simulation reads changes the key; an entry
that does not read back is a miss, never an error; the switches turn it off."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli_runner import child_env, cli

BUDGET = """version: 1
kind: budgets
budgets:
  - name: chat
    owner: "@acme/chat"
    percentile: p95
    workload:
      prompt_tokens: 800
      output_tokens: 200
      arrival_rate: {rate} request/s
    promise:
      ttft: 800 ms
      tpot: 50 ms
    deployment: {{model: llama-3.1-8b, hardware: h100-sxm, devices: 1, weight_precision: bf16}}
"""


@pytest.fixture()
def cache_on(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The cache turned on (tests/conftest.py turns it off for the suite), in a folder of the test's."""
    folder = tmp_path / "cache"
    monkeypatch.delenv("BUDGETLINT_NO_CACHE", raising=False)
    monkeypatch.setenv("BUDGETLINT_CACHE_DIR", str(folder))
    return folder


@pytest.fixture()
def streams(monkeypatch: pytest.MonkeyPatch) -> list:
    """Every simulation started in this process (serving_sim's one generator, under both its names)."""
    from budgetlint.physics import serving_sim

    started: list = []
    real = serving_sim._stream

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        started.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(serving_sim, "_stream", counted)
    monkeypatch.setattr(serving_sim, "stream", counted)
    return started


def _write(tmp_path: Path, rate: float = 2.0) -> Path:
    folder = tmp_path / "budgets"
    folder.mkdir(exist_ok=True)
    (folder / "chat.yaml").write_text(BUDGET.format(rate=rate))
    return folder


def _entries(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.json")) if folder.exists() else []


def test_a_warm_run_reports_what_the_cold_run_did_without_simulating(tmp_path, cache_on, streams):
    budgets = _write(tmp_path)
    cold = cli("check", str(budgets), "--format", "json")
    assert streams, "the cold run simulates"
    assert len(_entries(cache_on)) == 1
    assert (cache_on / ".gitignore").read_text().splitlines()[-1] == "*"
    streams.clear()
    warm = cli("check", str(budgets), "--format", "json")
    assert streams == [], "the warm run read the kept evaluation"
    assert warm.output == cold.output and warm.exit_code == cold.exit_code
    load = json.loads(warm.output)["budgets"][0]["load"]
    assert load["simulated"] is True and load["requests_simulated"] > 0


def test_warm_equals_cold_in_every_format_over_several_teams_files(tmp_path, cache_on, repo_root):
    budgets = _write(tmp_path)
    (budgets / "search.yaml").write_text(BUDGET.format(rate=0.5).replace("name: chat", "name: search")
                                         .replace("@acme/chat", "@acme/search").replace("p95", "p99"))
    for shipped in (repo_root / "budgets").glob("*.yaml"):  # the shipped files beside them (no traffic)
        (budgets / f"shipped-{shipped.name}").write_text(shipped.read_text())
    for fmt in ("json", "text", "sarif", "github", "markdown"):
        first = cli("check", str(budgets), "--format", fmt, "--no-summary")
        second = cli("check", str(budgets), "--format", fmt, "--no-summary")
        assert second.output == first.output, fmt
    assert len(_entries(cache_on)) == 2


def test_a_changed_rate_is_another_entry(tmp_path, cache_on, streams):
    budgets = _write(tmp_path, rate=2.0)
    at2 = json.loads(cli("check", str(budgets), "--format", "json").output)
    _write(tmp_path, rate=4.0)
    streams.clear()
    at4 = json.loads(cli("check", str(budgets), "--format", "json").output)
    assert streams, "a budget whose traffic changed is simulated again"
    assert len(_entries(cache_on)) == 2
    assert at4["budgets"][0]["load"]["arrival_rate_request_per_s"] == 4.0
    assert at2["budgets"][0]["load"]["arrival_rate_request_per_s"] == 2.0


def test_another_budgetlint_misses(tmp_path, cache_on, streams, monkeypatch):
    from budgetlint.evaluate import load_disk

    budgets = _write(tmp_path)
    cli("check", str(budgets), "--format", "json")
    monkeypatch.setattr(load_disk, "_DIGEST", {"sha256": "0" * 64})  # as after an upgrade or an edit of the code
    streams.clear()
    cli("check", str(budgets), "--format", "json")
    assert streams, "a different code digest is a different key"
    assert len(_entries(cache_on)) == 2


@pytest.mark.parametrize("damage", [
    b"",  # cut short
    b"{not json",
    b'{"key": "x", "value": null}',  # another entry's name inside
    b"\xff\xfe\x00",  # not UTF-8
    None,  # a foreign class tag: os.system, never built
])
def test_an_entry_that_does_not_read_back_is_a_miss_and_is_written_again(tmp_path, cache_on, streams, damage):
    budgets = _write(tmp_path)
    cold = cli("check", str(budgets), "--format", "json")
    (entry,) = _entries(cache_on)
    if damage is None:
        damage = json.dumps({"key": entry.stem, "value": {"c": "system", "f": {"command": "touch /tmp/owned"}}}).encode()
    entry.write_bytes(damage)
    streams.clear()
    again = cli("check", str(budgets), "--format", "json")
    assert again.output == cold.output
    assert streams, "simulated again"
    assert json.loads(entry.read_text())["key"] == entry.stem, "the entry is whole again"


def test_an_oversized_entry_is_not_read(tmp_path, cache_on, streams, monkeypatch):
    from budgetlint.evaluate import load_disk

    budgets = _write(tmp_path)
    cli("check", str(budgets), "--format", "json")
    monkeypatch.setattr(load_disk, "MAX_ENTRY_BYTES", 10)
    streams.clear()
    cli("check", str(budgets), "--format", "json")
    assert streams


@pytest.mark.parametrize("how", ["flag", "env", "config", "no-simulate"])
def test_the_switches_keep_nothing(tmp_path, cache_on, monkeypatch, how):
    budgets = _write(tmp_path)
    args = ["check", str(budgets), "--format", "json"]
    if how == "flag":
        args.append("--no-cache")
    elif how == "env":
        monkeypatch.setenv("BUDGETLINT_NO_CACHE", "1")
    elif how == "config":
        (tmp_path / "budgetlint.toml").write_text("cache = false\n")
        args += ["--config", str(tmp_path / "budgetlint.toml")]
    else:
        args.append("--no-simulate")
    cli(*args)
    assert _entries(cache_on) == []


def test_cache_dir_flag_and_config(tmp_path, cache_on, monkeypatch):
    budgets = _write(tmp_path)
    flag_dir = tmp_path / "flag"
    cli("check", str(budgets), "--format", "json", "--cache-dir", str(flag_dir))
    assert len(_entries(flag_dir)) == 1 and _entries(cache_on) == []
    monkeypatch.delenv("BUDGETLINT_CACHE_DIR")
    (tmp_path / "budgetlint.toml").write_text('cache-dir = ".budgetlint_cache"\n')
    cli("check", str(budgets), "--format", "json", "--config", str(tmp_path / "budgetlint.toml"))
    assert len(_entries(tmp_path / ".budgetlint_cache")) == 1, "relative to the config file"


@pytest.mark.parametrize("line", ['cache = "yes"', "cache-dir = 3", 'cache-dir = ""'])
def test_a_bad_cache_setting_is_a_config_finding(tmp_path, line):
    budgets = _write(tmp_path)
    (tmp_path / "budgetlint.toml").write_text(f"{line}\n")
    result = cli("check", str(budgets), "--config", str(tmp_path / "budgetlint.toml"))
    assert result.exit_code != 0
    name = line.split(" ")[0]
    assert "budgetlint.toml:1" in result.output and f"'{name}' must be" in result.output, result.output


def test_an_unwritable_folder_leaves_the_run_as_without_it(tmp_path, cache_on):
    budgets = _write(tmp_path)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    plain = cli("check", str(budgets), "--format", "json", "--no-cache")
    blocked = cli("check", str(budgets), "--format", "json", "--cache-dir", str(blocker / "cache"))
    assert blocked.stdout == plain.stdout and blocked.exit_code == plain.exit_code
    # and said, on standard error alone (until stop 47 in silence: every run simulated afresh)
    assert plain.stderr == ""
    assert blocked.stderr == (f"budgetlint: warning: the simulation cache {blocker / 'cache'} keeps nothing ({blocker} "
                              "is a file, not a folder): every budget with traffic is simulated afresh; give "
                              "--cache-dir a folder this run may write in, or --no-cache\n")


def test_a_cache_folder_that_is_a_device_is_said_and_not_used(tmp_path, cache_on, monkeypatch):
    """BUDGETLINT_CACHE_DIR=/dev/null (a workflow's way to turn a cache off that does not): said, not used."""
    monkeypatch.setenv("BUDGETLINT_CACHE_DIR", "/dev/null")
    result = cli("check", str(_write(tmp_path)), "--format", "json")
    assert "the simulation cache /dev/null keeps nothing (/dev/null is a character device, not a folder)" in \
        result.stderr
    assert result.exit_code in (0, 1) and json.loads(result.stdout)["budgets"]


def test_explain_says_it_too(tmp_path, cache_on, monkeypatch):
    monkeypatch.setenv("BUDGETLINT_CACHE_DIR", "/dev/null")
    result = cli("explain", str(_write(tmp_path)))
    assert result.stderr.startswith("budgetlint: warning: the simulation cache /dev/null keeps nothing")
    assert result.exit_code == 0 and "budgetlint: warning" not in result.stdout


def test_a_folder_not_made_yet_is_no_notice(tmp_path, cache_on):
    """A cache folder that is not there yet (its parent is a folder): made by the first entry, no word said."""
    from budgetlint.evaluate import load_disk

    assert load_disk.why_not_kept(tmp_path / "not" / "yet") is None
    result = cli("check", str(_write(tmp_path)), "--format", "json")
    assert result.stderr == "" and _entries(cache_on)


def test_a_skipped_evaluation_is_not_kept(tmp_path, cache_on):
    budgets = tmp_path / "budgets"
    budgets.mkdir()
    # bandwidth only, no memory: the simulation is skipped (BL309 says why); nothing to keep
    (budgets / "hw.yaml").write_text("""version: 1
kind: hardware
hardware:
  - name: bw-only
    bandwidth: 3 TB/s
    compute: {bf16: 900 TFLOPS}
""")
    (budgets / "chat.yaml").write_text(BUDGET.format(rate=2.0).replace("hardware: h100-sxm", "hardware: bw-only"))
    out = json.loads(cli("check", str(budgets), "--format", "json").output)
    (chat,) = [b for b in out["budgets"] if b["name"] == "chat"]
    assert chat["load"]["simulated"] is False
    assert _entries(cache_on) == []


def _child_check(budgets: Path, cache: Path) -> subprocess.CompletedProcess:
    env = {**child_env(), "BUDGETLINT_CACHE_DIR": str(cache)}
    env.pop("BUDGETLINT_NO_CACHE", None)
    return subprocess.run([sys.executable, "-m", "budgetlint", "check", str(budgets), "--format", "json"],
                          capture_output=True, text=True, env=env, timeout=300)


def test_a_child_process_reads_what_another_wrote(tmp_path, cache_on):
    """The user's path: two `python -m budgetlint check` processes, the second reading the first's
    entries (and the package digest computed in each)."""
    budgets = _write(tmp_path)
    runs = [_child_check(budgets, cache_on) for _ in range(2)]
    assert runs[0].stdout == runs[1].stdout and runs[0].returncode == runs[1].returncode
    assert len(_entries(cache_on)) == 1


def test_round_trip_keeps_nan_infinities_signed_zero_tuples_and_keys():
    from budgetlint.evaluate import load_disk
    from budgetlint.evaluate.load import LoadEvaluation
    from budgetlint.physics.capacity import Capacity

    classes = load_disk._classes(LoadEvaluation)
    value = Capacity(0.0, math.inf, -0.0, 3, None,
                     ((1.5, {"ttft_s.p95": math.nan, "tpot_s.p95": 1e-300}), (2.0, {"ttft_s.p95": -math.inf})))
    back = load_disk.decode(json.loads(json.dumps(load_disk.encode(value, classes))), classes)
    assert load_disk.same(back, value)
    assert isinstance(back.points, tuple) and isinstance(back.points[0], tuple)
    assert math.copysign(1, back.failing_request_per_s) == -1.0
    assert not load_disk.same(Capacity(0.0, 1.0, 0.0, 3, None), Capacity(0.0, 1.0, -0.0, 3, None))
    with pytest.raises(load_disk.NotKept):
        load_disk.encode(object(), classes)
    with pytest.raises(load_disk.NotKept):
        load_disk.decode({"c": "Capacity", "f": {"request_per_s": 1.0}}, classes)  # fields missing


def test_code_digest_covers_the_package_files(tmp_path):
    from budgetlint.evaluate import load_disk

    first = load_disk.code_digest()
    assert len(first) == 64 and load_disk.code_digest() == first
    root = Path(load_disk.__file__).resolve().parents[1]
    # a second digest by hand over the same files, in the same order
    import hashlib

    h = hashlib.sha256()
    for p in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        h.update(p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    assert h.hexdigest() == first
    assert os.path.basename(root) == "budgetlint"


def test_explain_reads_what_check_kept(tmp_path, cache_on, streams):
    budgets = _write(tmp_path)
    cold = cli("explain", str(budgets), "--no-cache")
    cli("check", str(budgets), "--format", "json")
    streams.clear()
    warm = cli("explain", str(budgets))
    assert streams == [] and warm.output == cold.output
    assert "request/s" in warm.output


# ---- the folder does not grow without end (load_disk.prune) ----------------------------------------

DAY = 86400


def _age(path: Path, days: float) -> None:
    then = __import__("time").time() - days * DAY
    os.utime(path, (then, then))


def test_a_check_removes_entries_no_run_read_for_a_month_and_keeps_the_ones_it_reads(tmp_path, cache_on, streams):
    """What an edit or an upgrade leaves behind (an entry of old code or an old budget) goes after 30 days
    unread; the entry a run reads is touched by the read, so a month-old one still in use stays. Only names
    the cache writes are touched."""
    from budgetlint.evaluate import load_disk

    budgets = _write(tmp_path)
    cold = cli("check", str(budgets), "--format", "json")
    (used,) = _entries(cache_on)
    layout = cache_on / load_disk.LAYOUT
    stale = layout / "ab" / ("ab" + "0" * 62 + ".json")
    stale.parent.mkdir(exist_ok=True)
    stale.write_text("{}")
    tmp = layout / "ab" / ".killed-writer.tmp"
    tmp.write_text("half")
    strays = [layout / "ab" / "notes.json", layout / "README", cache_on / "mine.json", layout / "xyz" / ("c" * 64 + ".json")]
    for stray in strays:
        stray.parent.mkdir(exist_ok=True)
        stray.write_text("the user's")
    for path in [used, stale, tmp, *strays]:
        _age(path, 31)
    _age(layout / load_disk.STAMP, 2)  # the cold run swept; the next sweep is due a day later
    streams.clear()
    warm = cli("check", str(budgets), "--format", "json")
    assert streams == [] and warm.output == cold.output, "the month-old entry in use was read"
    assert used.exists() and __import__("time").time() - used.stat().st_mtime < DAY, "and touched"
    assert not stale.exists() and not tmp.exists()
    assert all(stray.exists() for stray in strays), "names the cache does not write are left alone"
    assert (layout / load_disk.STAMP).exists()


def test_the_sweep_runs_at_most_once_a_day(tmp_path, cache_on):
    from budgetlint.evaluate import load_disk

    budgets = _write(tmp_path)
    cli("check", str(budgets), "--format", "json")  # the first run sweeps (no stamp yet)
    stale = cache_on / load_disk.LAYOUT / "cd" / ("cd" + "1" * 62 + ".json")
    stale.parent.mkdir(exist_ok=True)
    stale.write_text("{}")
    _age(stale, 40)
    cli("check", str(budgets), "--format", "json")
    assert stale.exists(), "swept less than a day ago: not again"
    _age(cache_on / load_disk.LAYOUT / load_disk.STAMP, 1.01)
    cli("check", str(budgets), "--format", "json")
    assert not stale.exists()


def test_prune_by_age_at_its_edges(tmp_path):
    """By hand: 30 days = 2,592,000 s. An entry written 29.99 days before ``now`` stays, one 30.01 days
    before goes; a temporary file goes after a day (86,400 s); the stamp then holds ``now``."""
    from budgetlint.evaluate import load_disk

    now = 2_000_000_000.0
    shard = tmp_path / load_disk.LAYOUT / "0f"
    shard.mkdir(parents=True)
    files = {"0f" + "a" * 62 + ".json": 29.99, "0f" + "b" * 62 + ".json": 30.01, ".x.tmp": 0.99, ".y.tmp": 1.01}
    for name, days in files.items():
        (shard / name).write_text("{}")
        os.utime(shard / name, (now - days * DAY, now - days * DAY))
    assert load_disk.prune(tmp_path, now=now) == 2
    assert sorted(p.name for p in shard.iterdir()) == [".x.tmp", "0f" + "a" * 62 + ".json"]
    assert (tmp_path / load_disk.LAYOUT / load_disk.STAMP).stat().st_mtime == now
    assert load_disk.prune(tmp_path, now=now + 86_399) == 0  # within the day: no sweep


def test_prune_of_a_folder_that_is_not_there_or_not_a_folder_does_nothing(tmp_path):
    from budgetlint.evaluate import load_disk

    assert load_disk.prune(tmp_path / "absent") == 0
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    assert load_disk.prune(blocker) == 0



@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
@pytest.mark.parametrize("what", ["named pipe", "link to /dev/zero", "link to a folder"])
def test_whatever_sits_at_an_entrys_name_in_a_restored_folder_is_a_miss_in_bounded_time(tmp_path, cache_on, what):
    """A folder restored from elsewhere may hold anything at an entry's name: before, a named pipe there
    waited for a writer for ever and a link to /dev/zero was read without end (both ran into the child's
    timeout). Now each is a miss: the run says what the cold run did, and the entry is a plain file again."""
    budgets = _write(tmp_path)
    cold = _child_check(budgets, cache_on)
    (entry,) = _entries(cache_on)
    entry.unlink()
    if what == "named pipe":
        os.mkfifo(entry)
    elif what == "link to /dev/zero":
        entry.symlink_to("/dev/zero")
    else:
        entry.symlink_to(tmp_path)
    warm = _child_check(budgets, cache_on)
    assert warm.stdout == cold.stdout and warm.returncode == cold.returncode
    assert entry.is_file() and not entry.is_symlink() and json.loads(entry.read_text())["key"] == entry.stem


def test_links_at_the_caches_own_files_are_replaced_never_written_through(tmp_path, cache_on):
    """The sweep's stamp is written as a new file renamed into place: a link a restored folder holds at its
    name (to a file of the user's) is replaced, its target untouched. The .gitignore is written only where
    nothing is at its name: a dangling link there stays, and a plain write would have created its target."""
    from budgetlint.evaluate import load_disk

    budgets = _write(tmp_path)
    mine = tmp_path / "mine.txt"
    mine.write_text("the user's file")
    absent = tmp_path / "absent.txt"
    (cache_on / load_disk.LAYOUT).mkdir(parents=True)
    (cache_on / ".gitignore").symlink_to(absent)  # dangling: a plain write would create absent.txt
    stamp = cache_on / load_disk.LAYOUT / load_disk.STAMP
    stamp.symlink_to(mine)
    _age(mine, 2)  # the stamp (through the link) says the last sweep was two days ago: one is due
    cli("check", str(budgets), "--format", "json")
    assert mine.read_text() == "the user's file" and not absent.exists()
    assert not stamp.is_symlink() and stamp.is_file()
    assert (cache_on / ".gitignore").is_symlink()


# ---- budgetlint clean ---------------------------------------------------------------------------------


def test_clean_removes_the_entries_and_leaves_the_users_files(tmp_path, cache_on, streams):
    budgets = _write(tmp_path)
    (budgets / "search.yaml").write_text(BUDGET.format(rate=0.5).replace("name: chat", "name: search"))
    cli("check", str(budgets), "--format", "json")
    entries = _entries(cache_on)
    assert len(entries) == 2
    size = sum(p.stat().st_size for p in entries)
    result = cli("clean")
    assert result.exit_code == 0
    # the size through the one formatter, computed here from the files: e.g. "(8.29 kB)"
    from budgetlint.text.numbers import quantity

    assert result.output.strip() == f"budgetlint: removed 2 simulation cache entries ({quantity(size, 'B')}) from {cache_on}"
    assert not cache_on.exists(), "nothing else was there: the folder goes too"
    again = cli("clean")
    assert again.exit_code == 0 and again.output.strip() == f"budgetlint: no simulation cache entries in {cache_on}"
    streams.clear()
    cli("check", str(budgets), "--format", "json")
    assert streams, "simulated afresh after clean"
    (cache_on / "notes.txt").write_text("the user's")
    (cache_on / "load-v1" / "README").write_text("the user's too")
    cli("clean")
    assert _entries(cache_on) == []
    assert (cache_on / "notes.txt").exists() and (cache_on / "load-v1" / "README").exists()


def test_clean_finds_the_folder_as_check_does(tmp_path, cache_on, monkeypatch):
    budgets = _write(tmp_path)
    monkeypatch.delenv("BUDGETLINT_CACHE_DIR")
    (tmp_path / "budgetlint.toml").write_text('cache-dir = ".budgetlint_cache"\n')
    config = str(tmp_path / "budgetlint.toml")
    cli("check", str(budgets), "--format", "json", "--config", config)
    assert len(_entries(tmp_path / ".budgetlint_cache")) == 1
    assert "removed 1 simulation cache entry" in cli("clean", "--config", config).output
    assert _entries(tmp_path / ".budgetlint_cache") == []
    flag = tmp_path / "flag"
    cli("check", str(budgets), "--format", "json", "--cache-dir", str(flag))
    assert "removed 1 simulation cache entry" in cli("clean", "--cache-dir", str(flag)).output


def test_clean_of_a_file_is_a_usage_error(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    result = cli("clean", "--cache-dir", str(blocker))
    assert result.exit_code == 2 and f"the cache folder {blocker} is not a folder" in result.output
    assert blocker.read_text() == "x"


@pytest.mark.parametrize("how", ["config", "flag", "env"])
def test_a_tilde_in_the_cache_folder_is_the_home_folder(tmp_path, cache_on, monkeypatch, how):
    """As ruff's cache-dir ("~/.cache/ruff"): a "~" the shell did not expand (a config value, --cache-dir=~/x, a
    workflow's env:) is the home folder, not a folder named "~" beside the config or in the working folder."""
    budgets = _write(tmp_path)
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("BUDGETLINT_CACHE_DIR")
    monkeypatch.chdir(tmp_path)
    args = ["check", str(budgets), "--format", "json"]
    if how == "config":
        (tmp_path / "budgetlint.toml").write_text('cache-dir = "~/bl-cache"\n')
        args += ["--config", str(tmp_path / "budgetlint.toml")]
    elif how == "flag":
        args.append("--cache-dir=~/bl-cache")
    else:
        monkeypatch.setenv("BUDGETLINT_CACHE_DIR", "~/bl-cache")
    cli(*args)
    assert len(_entries(home / "bl-cache")) == 1
    assert not (tmp_path / "~").exists()
