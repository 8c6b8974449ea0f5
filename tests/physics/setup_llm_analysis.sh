#!/usr/bin/env bash
# Creates (or reuses) the virtual environment that the llm-analysis
# cross-check test runs in: $REPO/.venvs/llm-analysis. llm-analysis pins an
# old huggingface-hub and pulls transformers, so it stays out of budgetlint's
# own environment. Exits 0 when it cannot be installed (the cross-check test
# then skips and says why), except under CI=true, where that fails (exit 1).
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
  tail -5 "$REPO/.venvs/llm-analysis.log" || true
  rm -rf "$VENV"
  if [[ "${CI:-}" == "true" ]]; then exit 1; fi
fi
exit 0
