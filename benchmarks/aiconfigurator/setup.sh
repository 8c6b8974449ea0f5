#!/usr/bin/env bash
# aiconfigurator in its own venv (a benchmark-only dependency, never a budgetlint one).
# Usage: benchmarks/aiconfigurator/setup.sh [VENV]   (default: benchmarks/aiconfigurator/.venv)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="${1:-$here/.venv}"
python3 -m venv "$venv"
"$venv/bin/pip" install -q aiconfigurator
"$venv/bin/aiconfigurator" version 2>/dev/null || true
