#!/usr/bin/env bash
# Creates (or reuses) $REPO/.venvs/probe: CPU torch + transformers, for the
# test that runs benchmarks/gpu_decode_probe.py on a tiny shape. torch is an
# optional extra of budgetlint, never a runtime dependency. Exits 0 when it
# cannot install them (the probe test then skips and says why), except under
# CI=true, where a failed install fails (exit 1): CI must exercise the probe.
#
# torch: PyPI serves `torch==2.13.0` (Linux wheels that pull the CUDA runtime
# packages, ~2.5 GB); the CPU-only build `2.13.0+cpu` is served only by
# PyTorch's own index or a mirror of it. The CPU build is taken where the
# configured index has it (`pip index versions torch` lists it), else PyPI's.
set -u
REPO="$(cd "$(dirname "$0")/../.." && pwd)"
VENV="$REPO/.venvs/probe"
if "$VENV/bin/python" -c "import torch, transformers, jsonschema, yaml" >/dev/null 2>&1; then
  echo "probe: reusing $VENV"
  exit 0
fi
mkdir -p "$REPO/.venvs"
start=$(date +%s)
TORCH="torch==2.13.0"
if python3 -m pip index versions torch 2>/dev/null | grep -q "2\.13\.0+cpu"; then
  TORCH="torch==2.13.0+cpu"
fi
if python3 -m venv "$VENV" >"$REPO/.venvs/probe.log" 2>&1 &&
   "$VENV/bin/pip" install -q "$TORCH" transformers jsonschema pyyaml >>"$REPO/.venvs/probe.log" 2>&1; then
  echo "probe: installed $TORCH and transformers in $(( $(date +%s) - start )) s"
else
  echo "probe: could not install $TORCH/transformers (see .venvs/probe.log); the probe test will skip"
  tail -5 "$REPO/.venvs/probe.log" || true
  rm -rf "$VENV"  # a half-made venv must not be taken for a working one
  if [[ "${CI:-}" == "true" ]]; then exit 1; fi
fi
exit 0
