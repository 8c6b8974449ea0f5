#!/usr/bin/env bash
# Mutation testing (issue 22): mutmut over a part of the pure core or the verdict code, run
# against that part's own fast tests, in a scratch copy of the repository.
#
#   benchmarks/mutation.sh stats      # budgetlint/stats/*            vs tests/stats
#   benchmarks/mutation.sh roofline   # budgetlint/evaluate/roofline.py vs tests/evaluate
#   benchmarks/mutation.sh physics    # budgetlint/physics/*          vs tests/physics (long)
#   benchmarks/mutation.sh physics:step   # one file, budgetlint/physics/step.py, vs tests/physics
#   benchmarks/mutation.sh physics:latency,prefill   # several files, one run (one coverage pass)
#   benchmarks/mutation.sh stats:order_stats  # one file of stats/, vs tests/stats
#   benchmarks/mutation.sh physics:step again [MUTANT...]
#       after new tests: copy tests/ into the existing work dir and re-run the named mutants
#       (default: the previous run's survivors); mutmut collects the new tests' coverage
#       first, so each mutant still runs only the tests that reach its function.
#   benchmarks/mutation.sh simulator:serving_sim sample 60 [SEED]
#       a seeded random sample of 60 of the target's mutants (a fresh work dir; the coverage pass
#       over the whole test selection still runs once): the score printed is the sample's, of the
#       checked mutants only; the rest stay "not checked". For a target whose full run does not fit
#       the time at hand (serving_sim: every simulator test reaches its one long run()).
#   benchmarks/mutation.sh calibration   # budgetlint/physics/calibration.py vs its fast tests:
#       tests/physics/test_calibration_by_hand.py and tests/calibration, less the three that run
#       `python -m budgetlint` in a subprocess (mutmut's venv has no budgetlint installed)
#   benchmarks/mutation.sh simulator   # physics/capacity.py + physics/serving_sim.py vs tests/physics, less:
#   benchmarks/mutation.sh simulator:capacity   # one of the two
#       the simulator's own suites are the slow ones MUTATION_FAST leaves out: this selection
#       keeps them with the hypothesis engine check at $BUDGETLINT_EVENT_EXAMPLES (default here
#       30 of 200) examples and without the 2-5 s Pollaczek-Khinchine runs, the property
#       suite, the llm-analysis cross-check and the calibration fits (~10 s a mutant)
#   MUTATION_FAST=1 benchmarks/mutation.sh physics:precision,traffic
#       a mutation-only selection of tests/physics without the slow simulator and property
#       suites (the files in $slow below): a surviving mutant runs every selected test that
#       reaches its function, and those suites cost up to a minute a mutant. A mutant killed
#       by the subset is killed by the whole of tests/physics, so the score is a lower bound.
#
# mutmut is test-only: it lives in its own virtual environment (benchmarks/.venv-mutmut, with
# the runtime dependencies but not budgetlint itself, so the mutated copy is what is imported).
# The work happens in benchmarks/.mutation-work/<target> (ignored by git); the score and every
# surviving mutant are printed at the end. MUTMUT_CHILDREN (default 2) workers.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${1:-stats}"
again="${2:-}"
case "$target" in
  stats) only='"budgetlint/stats/*"'; tests='"tests/stats"' ;;
  stats:*) only="\"budgetlint/stats/${target#stats:}.py\""; tests='"tests/stats"' ;;
  roofline) only='"budgetlint/evaluate/roofline.py"'; tests='"tests/evaluate"' ;;
  calibration) only='"budgetlint/physics/calibration.py"'
               tests='"tests/physics/test_calibration_by_hand.py", "tests/calibration"'
               for t in tests/calibration/test_calibrate_budget.py::test_the_command_refuses_a_mismatch_with_exit_2 \
                   tests/calibration/test_compute_defaults.py::test_a_budget_on_hopper_fp8_is_estimated_at_the_measured_fraction \
                   tests/calibration/test_compute_defaults.py::test_an_offline_shaped_budget_saturates_at_its_rows_throughput; do
                 tests="$tests, \"--deselect=$t\""  # python -m budgetlint in a subprocess (see below)
               done ;;
  physics) only='"budgetlint/physics/*"'; tests='"tests/physics"' ;;
  physics:*) only=$(IFS=,; for m in ${target#physics:}; do printf '"budgetlint/physics/%s.py", ' "$m"; done)
             only="${only%, }"; tests='"tests/physics"' ;;
  simulator) only='"budgetlint/physics/capacity.py", "budgetlint/physics/serving_sim.py"'; tests=sim ;;
  simulator:*) only="\"budgetlint/physics/${target#simulator:}.py\""; tests=sim ;;
  *) echo "usage: $0 stats|roofline|calibration|physics|physics:MODULE|stats:MODULE|simulator[:MODULE] [again [MUTANT...] | sample N [SEED]]" >&2
     exit 2 ;;
esac
slow="test_event_engine.py test_serving_sim_queueing.py test_serving_sim_contention.py
  test_serving_sim_mlperf.py test_capacity_search.py test_physics_properties.py
  test_physics_crosscheck_llm_analysis.py"
# a test that runs `python -m budgetlint` in a subprocess cannot import the work copy (mutmut's
# own sys.path), and mutmut cannot see what a subprocess covers: left out of every run
subprocess_tests="tests/physics/test_disaggregated.py::test_a_bandwidth_only_prefill_pool_is_never_judged_met"
if [[ "$tests" == sim ]]; then
  tests='"tests/physics"'
  for f in test_physics_properties.py test_physics_crosscheck_llm_analysis.py test_calibration_by_hand.py; do
    tests="$tests, \"--ignore=tests/physics/$f\""
  done
  tests="$tests, \"--deselect=tests/physics/test_serving_sim_queueing.py::test_mean_wait_is_pollaczek_khinchine\""
  export BUDGETLINT_EVENT_EXAMPLES="${BUDGETLINT_EVENT_EXAMPLES:-30}"
fi
if [[ "$tests" == '"tests/physics"'* ]]; then
  for t in $subprocess_tests; do tests="$tests, \"--deselect=$t\""; done
fi
suffix=""
if [[ "${MUTATION_FAST:-}" == 1 && "$tests" == '"tests/physics"'* && "$target" != simulator* ]]; then
  for f in $slow; do tests="$tests, \"--ignore=tests/physics/$f\""; done
  suffix="-fast"
fi
if [[ "$target" == *:* ]]; then
  for f in ${only//[\",]/ }; do [[ -f "$f" ]] || { echo "no file $f" >&2; exit 2; }; done
fi
venv=benchmarks/.venv-mutmut
if [[ ! -x "$venv/bin/mutmut" ]]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "mutmut==3.8.1" pytest hypothesis pyyaml jsonschema click pint pathspec \
    ruamel.yaml
fi
work="benchmarks/.mutation-work/$(echo "$target" | tr ':,' '-+')$suffix"
if [[ "$again" == again ]]; then
  [[ -f "$work/results.txt" ]] || { echo "no earlier run in $work" >&2; exit 2; }
  shift 2
  names=("$@")
  if [[ ${#names[@]} -eq 0 ]]; then
    mapfile -t names < <(grep -E ': (survived|no tests)$' "$work/results.txt" | sed -E 's/: (survived|no tests)$//; s/^ *//')
  fi
  rm -rf "$work/tests"
  cp -r tests "$work/"
  find "$work" -name __pycache__ -prune -exec rm -rf {} +
  cd "$work"
  start=$(date +%s)
  echo "re-running ${#names[@]} mutants with the current tests"
  "../../.venv-mutmut/bin/mutmut" run --max-children "${MUTMUT_CHILDREN:-2}" "${names[@]}" || true
  echo "mutmut re-ran ${#names[@]} mutants in $(( $(date +%s) - start )) s over $only against $tests"
else
rm -rf "$work"
mkdir -p "$work"
cp -r budgetlint tests schemas pyproject.toml "$work/"
[[ -d docs ]] && cp -r docs "$work/"
mkdir -p "$work/benchmarks" && cp benchmarks/*.py "$work/benchmarks/"  # tests import bench_speed
cp -r benchmarks/validation "$work/benchmarks/"  # tests/calibration reads its held-out MLPerf summaries
find "$work" -name __pycache__ -prune -exec rm -rf {} +
cat >> "$work/pyproject.toml" <<TOML

[tool.mutmut]
source_paths = ["budgetlint"]
only_mutate = [$only]
also_copy = ["schemas", "docs", "benchmarks"]
pytest_add_cli_args_test_selection = [$tests]
pytest_add_cli_args = ["-p", "no:cacheprovider", "-q", "-x"]
TOML
cd "$work"
# ../shared beside the work copy, as beside the checkout
[[ -e ../shared ]] || { [[ -d ../../../../shared ]] && ln -s "$(cd ../../../../shared && pwd)" ../shared; } || true
# and beside mutants/, where mutmut runs the tests
[[ -e shared ]] || { [[ -d ../../../../shared ]] && ln -s "$(cd ../../../../shared && pwd)" shared; } || true
start=$(date +%s)
if [[ "$again" == sample ]]; then
  n="${3:?sample needs a count}"
  seed="${4:-0}"
  # generate the mutants and collect coverage (a pattern matching no mutant stops mutmut there)
  "../../.venv-mutmut/bin/mutmut" run --max-children "${MUTMUT_CHILDREN:-2}" "no-such-mutant-*" >/dev/null 2>&1 || true
  mapfile -t names < <("../../.venv-mutmut/bin/mutmut" results --all true | sed -E 's/: [a-z ]+$//; s/^ *//' \
    | python3 -c "import random, sys; ns = sorted(l.strip() for l in sys.stdin if l.strip());
print(f'{len(ns)} mutants in all', file=sys.stderr)
print('\n'.join(random.Random($seed).sample(ns, min($n, len(ns)))))")
  echo "sampled ${#names[@]} mutants (seed $seed)"
  "../../.venv-mutmut/bin/mutmut" run --max-children "${MUTMUT_CHILDREN:-2}" "${names[@]}" || true
  echo "mutmut ran a sample of ${#names[@]} in $(( $(date +%s) - start )) s over $only against $tests"
else
"../../.venv-mutmut/bin/mutmut" run --max-children "${MUTMUT_CHILDREN:-2}" || true
echo "mutmut ran $(( $(date +%s) - start )) s over $only against $tests"
fi
fi
"../../.venv-mutmut/bin/mutmut" results --all true > results.txt || true
python3 - <<'PY'
import re
lines = [l.strip() for l in open("results.txt") if ":" in l]
status = [l.rsplit(":", 1)[1].strip() for l in lines]
# a timeout is a detected mutant (the tests do not pass: an endless loop), as killed
caught = ("killed", "timeout")
killed = sum(s in caught for s in status)
survived = [l for l in lines if l.endswith("survived") or l.endswith("no tests")]
other = {s: status.count(s) for s in set(status) if s not in caught + ("survived", "no tests")}
total = killed + len(survived)
print(f"score: {killed}/{total} killed or timed out = {100 * killed / max(total, 1):.1f}% "
      f"(timeouts {status.count('timeout')}, no tests {status.count('no tests')} counted as survivors; "
      f"not counted: {other})")
by_module = {}
for l, st in zip(lines, status):
    module = re.split(r"\.x_|\.x\u01c1", l.rsplit(":", 1)[0].strip())[0]
    k, t = by_module.get(module, (0, 0))
    by_module[module] = (k + (st in caught), t + (st in caught + ("survived", "no tests")))
for module, (k, t) in sorted(by_module.items()):
    print(f"  {module}: {k}/{t} killed = {100 * k / max(t, 1):.1f}%")
print("surviving mutants:")
for l in survived:
    print("  " + l)
PY
