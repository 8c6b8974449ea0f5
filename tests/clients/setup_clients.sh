#!/usr/bin/env bash
# Create (or reuse) one virtual environment per real benchmark client, for
# tests/clients/test_real_clients.py (pytest -m clients).
#
#   bash tests/clients/setup_clients.sh [client ...]     # default: all
#
# Environments live in "$REPO/.venvs/<client>" (gitignored; or in
# "$BUDGETLINT_CLIENT_VENVS/<client>" when that is set), never in
# budgetlint's own .venv. A venv that is present and working is reused. A
# client that cannot be installed is reported and skipped: this script exits
# 0, and the tests then skip with the reason (written to
# .venvs/<client>.skip), except under CI=true, where it exits 1 after trying
# every client: CI must exercise the real clients. Pip output goes to
# .venvs/<client>.log.
#
# Clients (both need no torch):
#   aiperf          aiperf==0.13.0, Python 3.10-3.13 (3.11 preferred)
#   inference-perf  inference-perf==0.7.0, Python >= 3.12
# Each venv also gets `tokenizers` and `transformers`, used to train and save
# the tiny tokenizer (tests/clients/make_tokenizer.py) and by the fake server.
set -u

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENVS="${BUDGETLINT_CLIENT_VENVS:-$REPO/.venvs}"
PYENV_DIR="${PYENV_ROOT:-$HOME/.pyenv}"
mkdir -p "$VENVS"

AIPERF_SPEC="aiperf==0.13.0"
INFERENCE_PERF_SPEC="inference-perf==0.7.0"
EXTRA_SPECS="tokenizers transformers"

say() { printf 'setup_clients: %s\n' "$*"; }

# find_python MIN_MINOR MAX_MINOR PREFERRED... -> prints a working interpreter
# with 3.MIN <= version <= 3.MAX that can create a venv, or nothing.
find_python() {
    local min="$1" max="$2"; shift 2
    local cand c d
    local -a cands=()
    for c in "$@"; do
        cands+=("python3.$c" "/usr/bin/python3.$c" "/usr/local/bin/python3.$c")
        for d in "$PYENV_DIR"/versions/3."$c".*/bin/python; do
            [ -x "$d" ] && cands+=("$d")
        done
    done
    cands+=("python3" "python")
    for cand in "${cands[@]}"; do
        command -v "$cand" >/dev/null 2>&1 || [ -x "$cand" ] || continue
        if "$cand" - "$min" "$max" >/dev/null 2>&1 <<'PY'
import sys, venv, ensurepip  # noqa: F401  (venv with pip must work)
lo, hi = int(sys.argv[1]), int(sys.argv[2])
sys.exit(0 if sys.version_info[0] == 3 and lo <= sys.version_info[1] <= hi else 1)
PY
        then
            "$cand" -c 'import sys; print(sys.executable)'
            return 0
        fi
    done
    return 1
}

# venv_ok NAME DIST VERSION -> 0 when the venv has DIST==VERSION, tokenizers
# and transformers installed and importable.
venv_ok() {
    local py="$VENVS/$1/bin/python"
    [ -x "$py" ] || return 1
    "$py" - "$2" "$3" >/dev/null 2>&1 <<'PY'
import sys
from importlib.metadata import version
assert version(sys.argv[1]) == sys.argv[2]
import tokenizers, transformers  # noqa: F401
from transformers import PreTrainedTokenizerFast  # noqa: F401
PY
}

# setup NAME DIST VERSION SPEC PYTHON_MIN PYTHON_MAX PREFERRED_MINORS...
setup() {
    local name="$1" dist="$2" ver="$3" spec="$4" min="$5" max="$6"; shift 6
    local dir="$VENVS/$name" log="$VENVS/$name.log" skip="$VENVS/$name.skip"
    local t0=$SECONDS py
    if venv_ok "$name" "$dist" "$ver"; then
        rm -f "$skip"
        say "$name: reusing $dir ($dist $ver)"
        return 0
    fi
    if ! py="$(find_python "$min" "$max" "$@")"; then
        echo "no Python 3.$min-3.$max interpreter found (tried python3.X on PATH, /usr/bin, pyenv versions)" > "$skip"
        say "$name: SKIPPED: $(cat "$skip")"
        return 0
    fi
    rm -rf "$dir"
    : > "$log"
    if "$py" -m venv "$dir" >>"$log" 2>&1 \
        && "$dir/bin/python" -m pip install -q --disable-pip-version-check \
               "$spec" $EXTRA_SPECS >>"$log" 2>&1 \
        && venv_ok "$name" "$dist" "$ver"; then
        rm -f "$skip"
        say "$name: installed $spec with $("$dir/bin/python" -V 2>&1) into $dir in $((SECONDS - t0)) s"
    else
        echo "installing $spec with $py failed; see $log" > "$skip"
        say "$name: SKIPPED: $(cat "$skip")"
        tail -n 5 "$log" | sed 's/^/    /'
        rm -rf "$dir"
    fi
    return 0
}

clients=("$@")
[ ${#clients[@]} -eq 0 ] && clients=(aiperf inference-perf)
for c in "${clients[@]}"; do
    case "$c" in
        aiperf)         setup aiperf aiperf 0.13.0 "$AIPERF_SPEC" 10 13 11 12 10 13 ;;
        inference-perf) setup inference-perf inference-perf 0.7.0 "$INFERENCE_PERF_SPEC" 12 14 12 13 14 ;;
        *)              say "unknown client '$c' (known: aiperf inference-perf)" ;;
    esac
done
failed=()
for c in "${clients[@]}"; do
    [ -f "$VENVS/$c.skip" ] && failed+=("$c")
done
if [ ${#failed[@]} -gt 0 ] && [ "${CI:-}" = "true" ]; then
    say "CI=true: not installed: ${failed[*]}; failing (their tests would only skip)"
    exit 1
fi
exit 0
