"""An option several commands take is declared once (cli.py's shared decorators), so its help and
its type cannot drift apart between ``check``, ``explain`` and ``slo`` (issue 22: the efficiency
flags, ``--config`` and ``--no-simulate`` were copied with different help texts)."""

from __future__ import annotations

import re
from pathlib import Path

from budgetlint.cli import main

SHARED = {
    "efficiency_bandwidth": ("check", "explain"),
    "efficiency_compute": ("check", "explain"),
    "collective_overhead": ("check", "explain"),
    "config_path": ("check", "explain", "slo"),
    "no_simulate": ("check", "explain"),
    "names": ("explain", "slo"),
}


def _param(command: str, name: str):
    return next(p for p in main.commands[command].params if p.name == name)


def test_a_shared_option_reads_the_same_in_every_command() -> None:
    for name, commands in SHARED.items():
        seen = {(p.opts[0] if (p := _param(c, name)).opts else "", p.help, repr(p.type), p.default) for c in commands}
        assert len(seen) == 1, (name, seen)


def test_each_shared_option_is_written_once_in_cli_py() -> None:
    text = (Path(__file__).resolve().parents[2] / "budgetlint" / "cli.py").read_text(encoding="utf-8")
    for flag in ("--efficiency-bandwidth", "--efficiency-compute", "--collective-overhead", "--config",
                 "--no-simulate"):
        assert len(re.findall(rf'"{flag}"', text)) == 1, flag
    # explain's and slo's budget filter (dest "names"); calibrate's --budget is another option (the budget
    # whose deployment a fit is for, dest "budget_name"), declared once on calibrate
    assert len(re.findall(r'"--budget", "names"', text)) == 1
    assert len(re.findall(r'"--budget", "budget_name"', text)) == 1
