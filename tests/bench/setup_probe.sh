#!/usr/bin/env bash
# Creates (or reuses) $REPO/.venvs/probe: CPU torch + transformers, for the
# test that runs benchmarks/gpu_decode_probe.py on a tiny shape. torch is an
# optional extra of budgetlint, never a runtime dependency. Always exits 0:
# without the venv the probe test skips and says why.
set -u
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
VENV="$REPO/.venvs/probe"
if "$VENV/bin/python" -c "import torch, transformers, jsonschema, yaml" >/dev/null 2>&1; then
  echo "probe: reusing $VENV"
  exit 0
fi
mkdir -p "$REPO/.venvs"
start=$(date +%s)
if python3 -m venv "$VENV" >"$REPO/.venvs/probe.log" 2>&1 &&
   "$VENV/bin/pip" install -q "torch==2.13.0+cpu" transformers jsonschema pyyaml >>"$REPO/.venvs/probe.log" 2>&1; then
  echo "probe: installed torch (CPU) and transformers in $(( $(date +%s) - start )) s"
else
  echo "probe: could not install torch/transformers (see .venvs/probe.log); the probe test will skip"
fi
exit 0
