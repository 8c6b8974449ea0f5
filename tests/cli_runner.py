"""One way for a test to run the command line in process: ``cli(*args)`` (click's CliRunner on
``budgetlint.cli.main``), with the check every copy of this helper made: bad input never gets
a traceback. ``cli_json`` parses ``--format json`` output as well."""

from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner, Result


def cli(*args: str, input: str | None = None) -> Result:
    """``budgetlint ARGS`` in this process; no traceback in its output, no exception but its exit."""
    from budgetlint.cli import main

    result = CliRunner().invoke(main, list(args), input=input)
    assert "Traceback" not in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def cli_json(*args: str) -> tuple[int, dict[str, Any]]:
    """``budgetlint ARGS --format json``: the exit code and the report."""
    result = cli(*args, "--format", "json")
    return result.exit_code, json.loads(result.output)


def child_env() -> dict[str, str]:
    """This process's environment with PYTHONPATH leading to the budgetlint this process imported, so
    that a child's ``python -m budgetlint`` runs the same code: the checkout's, or the mutated copy a
    mutation run (benchmarks/mutation.sh, whose venv has no budgetlint) runs the tests in."""
    import os
    from pathlib import Path

    import budgetlint

    root = str(Path(budgetlint.__file__).resolve().parent.parent)
    rest = os.environ.get("PYTHONPATH")
    env = {**os.environ, "PYTHONPATH": root + (os.pathsep + rest if rest else "")}
    if env.get("MUTANT_UNDER_TEST") == "stats":  # mutmut's coverage pass records hits in its own process only
        env["MUTANT_UNDER_TEST"] = ""  # (the child would look for its config in the test's cwd): run unmutated
    return env


def cli_process(*args: str, input: str | None = None, cwd: Any = None, env: dict[str, str] | None = None,
                timeout: float = 300) -> Any:
    """``python -m budgetlint ARGS`` in a child process (what a shell runs: exit code, stdout,
    stderr apart; ``input`` on stdin, ``env`` over this process's environment); no traceback on
    stderr."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "budgetlint", *args], input=input, capture_output=True, text=True,
                          cwd=cwd, env={**child_env(), **(env or {})}, timeout=timeout)
    assert "Traceback" not in proc.stderr, proc.stderr[-4000:]
    return proc
