"""docs/calibration.md "Compute efficiency per precision and generation": every row's implied
compute fraction recomputed from the figures quoted in the row (out tok/s x 2 P x (in + out) /
out / (devices x peak)), and the median the section states."""

from __future__ import annotations

import re
import statistics
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "calibration.md"
PARAMS = {"Llama-2-70B": 68.98e9, "Llama-2-13B": 13.02e9}  # the section's parameter counts
PEAK = {"Hopper (H200), fp8": 1979e12}  # the catalog's h200-sxm dense fp8


def _rows() -> list[list[str]]:
    text = DOC.read_text()
    part = text.split("## Compute efficiency per precision and generation", 1)[1].split("\n## ", 1)[0]
    return [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in part.splitlines() if re.match(r"^\| c\d+ \|", line)]


def _num(text: str) -> float:
    return float(re.search(r"[\d,.]+", text).group(0).replace(",", ""))  # type: ignore[union-attr]


@pytest.mark.parametrize("row", _rows(), ids=lambda r: r[0])
def test_each_rows_implied_compute_fraction(row: list[str]) -> None:
    _, gen, _, _, model, shape, measured, implied = row
    devices = int(shape.split(",")[1])
    lengths = shape.split(",")[2]
    inp = _num(lengths.split("/")[0])
    out = _num(lengths.split("/")[1])
    tok_s = _num(measured)
    flops = tok_s * 2 * PARAMS[model] * (inp + out) / out
    assert flops / (devices * PEAK[gen]) == pytest.approx(float(implied), abs=0.0015)


def test_the_stated_median() -> None:
    fractions = [float(r[-1]) for r in _rows() if r[1] == "Hopper (H200), fp8"]
    assert len(fractions) == 6
    assert round(statistics.median(fractions), 2) == 0.38
