"""Helpers for the GitHub Action and workflow tests (imported by a unique name)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from tool_skips import tool_missing

REPO_ROOT = Path(__file__).resolve().parents[2]
LINTERS_VENV = REPO_ROOT / ".venvs" / "linters"


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def workflow_files() -> list[Path]:
    return sorted((REPO_ROOT / ".github" / "workflows").glob("*.yml"))


def find_linters_bin() -> Path:
    """bin/ of the linters virtualenv (tests/action/setup_linters.sh)."""
    bin_dir = LINTERS_VENV / "bin"
    missing = [t for t in ("actionlint", "zizmor", "check-jsonschema") if not (bin_dir / t).exists()]
    if missing:
        tool_missing(
            f"workflow linters not installed ({', '.join(missing)} missing from {bin_dir}): "
            "run `bash tests/action/setup_linters.sh` first"
        )
    return bin_dir
