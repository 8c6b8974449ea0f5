"""Identical deployments share their physics (evaluate/analysis_cache.py), and sharing changes no number."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from budgetlint.evaluate import analysis_cache
from budgetlint.physics.shapes import Accelerator, Deployment, Efficiency, ModelShape, Workload
from budgetlint.reporters import get_reporter
from budgetlint.run import check as checker
from budgetlint.run.check import Options

ROOT = Path(__file__).resolve().parents[2]

MODEL = ModelShape(total_params=8e9, layers=32, hidden_size=4096, attention_heads=32, kv_heads=8)
ACC = Accelerator(memory_bytes=80e9, bandwidth_bytes_per_s=3.35e12, compute_flop_per_s={"bf16": 989e12})


def _dep(**kw) -> Deployment:
    return Deployment(model=MODEL, accelerator=ACC, **kw)


def test_equal_inputs_share_one_analysis_and_different_inputs_do_not() -> None:
    analysis_cache._ANALYSES.clear()
    wl = Workload(prompt_tokens=1000, output_tokens=200)
    a = analysis_cache.analyse(_dep(), wl, Efficiency(0.7, 0.5))
    # equal inputs built separately: the same object back
    assert analysis_cache.analyse(_dep(), Workload(prompt_tokens=1000, output_tokens=200), Efficiency(0.7, 0.5)) is a
    # any field different: computed again
    assert analysis_cache.analyse(_dep(devices=2), wl, Efficiency(0.7, 0.5)) is not a
    assert analysis_cache.analyse(_dep(), Workload(prompt_tokens=1001, output_tokens=200), Efficiency(0.7, 0.5)) is not a
    assert analysis_cache.analyse(_dep(), wl, Efficiency(0.7, 0.5), queue_s=0.01) is not a


def test_keys_tell_apart_what_equality_does_not() -> None:
    # 1 == 1.0 and 0.0 == -0.0 in Python, but they print differently in a report: not the same key
    assert analysis_cache.key(Workload(prompt_tokens=1000, output_tokens=200)) != analysis_cache.key(
        Workload(prompt_tokens=1000.0, output_tokens=200))
    assert analysis_cache.key(0.0) != analysis_cache.key(-0.0)
    assert analysis_cache.key(_dep(), 1) == analysis_cache.key(_dep(), 1)


def test_the_caches_stay_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(analysis_cache, "LIMIT", 3)
    analysis_cache._ANALYSES.clear()
    for n in range(10):
        analysis_cache.analyse(_dep(), Workload(prompt_tokens=100 + n, output_tokens=20), Efficiency())
        assert len(analysis_cache._ANALYSES) <= 3
    cache: dict = {}
    for n in range(10):
        assert analysis_cache.shared(cache, str(n), lambda: n) == n
        assert len(cache) <= 3


class _Forgetful(dict):
    """A cache that never keeps anything: every budget computed from scratch."""

    def __setitem__(self, key, value) -> None:
        pass


def test_sharing_changes_no_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from bench_speed import generate
    finally:
        sys.path.pop(0)
    generate(tmp_path / "repo", 12, per_file=10, configs=5)  # 120 budgets on 5 configurations
    monkeypatch.chdir(tmp_path / "repo")
    analysis_cache._ANALYSES.clear()
    from budgetlint.physics import analysis

    calls = {"asked": 0, "computed": 0}
    real_share, real_compute = analysis_cache.analyse, analysis.analyse

    def asked(*a, **k):
        calls["asked"] += 1
        return real_share(*a, **k)

    def computed(*a, **k):
        calls["computed"] += 1
        return real_compute(*a, **k)

    monkeypatch.setattr(analysis_cache, "analyse", asked)
    monkeypatch.setattr(analysis, "analyse", computed)
    shared = checker.run_check(["."], Options(use_codeowners=False))
    assert calls["asked"] >= 2 * len(shared.budgets) == 240
    assert calls["computed"] < calls["asked"] / 2  # most budgets shared another's analyses
    monkeypatch.setattr(analysis_cache, "_ANALYSES", _Forgetful())
    monkeypatch.setattr(analysis_cache, "shared", lambda cache, k, compute: compute())
    alone = checker.run_check(["."], Options(use_codeowners=False))
    for fmt in ("json", "text", "sarif"):
        assert get_reporter(fmt)(shared) == get_reporter(fmt)(alone)


def test_a_catalog_entry_has_one_physics_view_and_an_equal_entry_its_own() -> None:
    """physics_inputs.shape_of/accelerator_of: one view per catalog entry (by identity), a Skip never kept,
    and the view's repr (the shared analyses' key) is the dataclass's own text."""
    from budgetlint.evaluate import physics_inputs
    from budgetlint.files.loader import Document
    from budgetlint.model.types import HardwareDef, ModelDef

    doc = Document("t.yaml", {})
    m = ModelDef(doc, (), name="m", parameters=8e9, layers=32, hidden_size=4096, attention_heads=32, kv_heads=8)
    twin = ModelDef(doc, (), name="m", parameters=8e9, layers=32, hidden_size=4096, attention_heads=32, kv_heads=8)
    assert physics_inputs.shape_of(m) is physics_inputs.shape_of(m)
    assert physics_inputs.shape_of(twin) is not physics_inputs.shape_of(m) and physics_inputs.shape_of(twin) == physics_inputs.shape_of(m)
    assert physics_inputs.shape_of(m) == physics_inputs.model_shape(m) == MODEL
    assert repr(physics_inputs.shape_of(m)) == repr(MODEL) and repr(MODEL).startswith("ModelShape(total_params=8000000000.0,")
    hw = HardwareDef(doc, (), name="h", memory_bytes=80e9, bandwidth_bytes_per_s=3.35e12,
                     compute_flop_per_s={"bf16": 989e12})
    assert physics_inputs.accelerator_of(hw) is physics_inputs.accelerator_of(hw) and physics_inputs.accelerator_of(hw) == ACC
    assert repr(physics_inputs.accelerator_of(hw)) == ("Accelerator(bandwidth_bytes_per_s=3350000000000.0, memory_bytes="
                                                "80000000000.0, compute_flop_per_s={'bf16': 989000000000000.0}, "
                                                "interconnect_bytes_per_s=None)")
    bare = HardwareDef(doc, (), name="bare")
    for _ in range(2):  # raised every time, never cached as a view
        with pytest.raises(physics_inputs.Skip, match="lacks bandwidth"):
            physics_inputs.accelerator_of(bare)
