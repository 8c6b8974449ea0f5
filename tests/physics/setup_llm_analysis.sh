#!/usr/bin/env bash
# Creates (or reuses) the virtual environment that the llm-analysis
# cross-check test runs in: $REPO/.venvs/llm-analysis. llm-analysis pins an
# old huggingface-hub and pulls transformers, so it stays out of budgetlint's
# own environment. Always exits 0: without it, the cross-check test skips
# and says why.
set -u
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
VENV="$REPO/.venvs/llm-analysis"
if "$VENV/bin/python" -c "import llm_analysis" >/dev/null 2>&1; then
  echo "llm-analysis: reusing $VENV"
  exit 0
fi
mkdir -p "$REPO/.venvs"
start=$(date +%s)
if python3 -m venv "$VENV" >"$REPO/.venvs/llm-analysis.log" 2>&1 &&
   "$VENV/bin/pip" install -q llm-analysis==0.2.2 >>"$REPO/.venvs/llm-analysis.log" 2>&1; then
  echo "llm-analysis: installed in $(( $(date +%s) - start )) s"
else
  echo "llm-analysis: could not be installed (see .venvs/llm-analysis.log); its cross-check test will skip"
fi
exit 0
