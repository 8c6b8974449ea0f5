#!/usr/bin/env bash
# Set up what the speed benchmarks compare against, each in its own venv:
#   .venvs/bench          check-jsonschema (+ PyYAML with libyaml for the parse floor)
#   .venvs/llm-analysis   llm-analysis (tests/physics/setup_llm_analysis.sh), optional
# and budgetlint itself in .venv when that is missing. Reuses what is there.
# Then: .venv/bin/python benchmarks/bench_speed.py
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
  .venv/bin/pip install -q -e '.[test]'
fi
if [ ! -x .venvs/bench/bin/check-jsonschema ]; then
  mkdir -p .venvs
  "$PY" -m venv .venvs/bench
  .venvs/bench/bin/pip install -q 'check-jsonschema>=0.29' 'pyyaml>=6.0'
fi
if [ ! -x .venvs/llm-analysis/bin/python ] && [ -f tests/physics/setup_llm_analysis.sh ]; then
  bash tests/physics/setup_llm_analysis.sh || echo "llm-analysis not installed: its row will be skipped"
fi
echo "ready: .venv/bin/python benchmarks/bench_speed.py"
