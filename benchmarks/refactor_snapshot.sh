#!/usr/bin/env bash
# Refactor safety net (issue 10): save every report format for a fixed set of
# inputs, so that a restructuring can be held byte-for-byte against the code
# before it.  Not a golden test: run it before and after, then diff.
#
#   bash benchmarks/refactor_snapshot.sh OUT_DIR [BUDGETLINT]
#   diff -r before/ after/
set -uo pipefail
out=${1:?usage: refactor_snapshot.sh OUT_DIR [BUDGETLINT]}
bl=${2:-.venv/bin/budgetlint}
cd "$(dirname "$0")/.."
mkdir -p "$out"
export BUDGETLINT_TODAY=2026-06-01 NO_COLOR=1
shared=../shared/fixtures/bench
inputs=(budgets tests/examples tests/cases/bl103_unknown_owner)
for f in tests/cases/*.yaml; do inputs+=("$f"); done
run() {  # NAME ARGS...
  local name=$1; shift
  for fmt in json sarif text markdown; do
    "$bl" check "$@" --no-summary -f "$fmt" >"$out/$name.$fmt" 2>&1
    echo "exit $?" >>"$out/$name.$fmt"
  done
  "$bl" explain "$@" >"$out/$name.explain" 2>&1; echo "exit $?" >>"$out/$name.explain"
}
for p in "${inputs[@]}"; do run "$(echo "$p" | tr / _)" "$p"; done
if [ -d "$shared" ]; then
  for f in "$shared"/*/*; do
    case $f in *.md|*config.yaml) continue;; esac
    run "bench_$(basename "$f")" budgets --bench "$f"
  done
fi
echo "wrote $(ls "$out" | wc -l) files to $out"
