"""Partial catalog entries never crash a command (issue 24).

Any accelerator and model entry the schema accepts (bandwidth-only,
compute-only, without memory, without compute for a precision, every
optional field absent or extreme), combined with any shipped budget pointed
at it (with and without declared traffic), ends ``check`` (every format) and
``explain`` with exit 0 or 1 and findings: one team's partial hardware entry
never takes down every other team's check. ``calibrate`` reads the built-in
catalog only, so a user's entry cannot reach it: naming one is exit 2 with
a message, never a traceback.

The crash this guards against: ``physics/levers.py`` sorted the catalog by
``(bandwidth, memory, name)`` and a bandwidth-only card (``memory: None``)
ended every run with ``TypeError`` (exit 3).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from fuzz_support import REPO_ROOT, check_in_process, count, fuzz_settings

PRECISIONS = ["fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp6", "int4", "fp4"]
BUILTIN_HW = ["h100-sxm", "a100-sxm-80gb", "a10g", "b200", "gaudi-3"]
BUILTIN_MODELS = ["llama-3.1-8b", "llama-3.1-70b", "gpt-oss-20b", "deepseek-v3"]


def _quantities(unit: str, realistic: list[str]) -> st.SearchStrategy[str]:
    extreme = [f"1e300 T{unit}", f"1e-300 {unit}", f"1 {unit}", f"0.5 {unit}"]
    return st.sampled_from(realistic + extreme)


def hardware_entry() -> st.SearchStrategy[dict]:
    fields = {
        "memory": _quantities("B", ["80 GB", "24 GB", "1 GB", "192 GB"]),
        "bandwidth": _quantities("B/s", ["3.35 TB/s", "300 GB/s", "8 TB/s"]),
        "compute": st.dictionaries(st.sampled_from(PRECISIONS),
                                   _quantities("FLOP/s", ["989 TFLOP/s", "121 TFLOP/s", "10 PFLOP/s"]), max_size=4),
        "interconnect": _quantities("B/s", ["450 GB/s", "32 GB/s"]),
        "extends": st.sampled_from(BUILTIN_HW),
        "vendor": st.just("Acme"),
    }
    return st.fixed_dictionaries({"name": st.just("team-card")},
                                 optional=fields)


def model_entry() -> st.SearchStrategy[dict]:
    ints = lambda lo, hi: st.one_of(st.integers(lo, hi), st.sampled_from([1, hi]))  # noqa: E731
    fields = {
        "parameters": st.sampled_from(["8.03B", "70.6B", "1M", "1", "405B", 1e12]),
        "active_parameters": st.sampled_from(["1B", "37B", "8.03B"]),
        "layers": ints(1, 200),
        "hidden_size": ints(1, 20000),
        "attention_heads": ints(1, 256),
        "kv_heads": ints(1, 256),
        "head_dim": ints(1, 512),
        "intermediate_size": ints(1, 60000),
        "vocab_size": ints(1, 300000),
        "max_context": ints(1, 1_000_000),
        "attention": st.sampled_from(["mha", "gqa", "mla"]),
        "kv_lora_rank": ints(1, 1024),
        "qk_rope_head_dim": ints(1, 128),
        "sliding_window": ints(1, 100000),
        "sliding_window_layers": ints(0, 200),
        "experts": ints(1, 256),
        "experts_per_token": ints(1, 16),
        "extends": st.sampled_from(BUILTIN_MODELS),
    }
    return st.fixed_dictionaries({"name": st.just("team-model")}, optional=fields)


TRAFFIC = [None, {"arrival_rate": "2 request/s"}, {"arrival_rate": "40 request/s", "arrival": "gamma",
                                                    "arrival_cv": 2.0},
           {"prompt_tokens": {"lognormal": {"mean": 800, "p95": 3000}}}]


def _shipped_budgets() -> list[dict]:
    out = []
    for path in sorted((REPO_ROOT / "budgets").glob("*.yaml")) + [REPO_ROOT / "tests" / "examples" / "overpromised.yaml"]:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        if doc.get("kind") == "budgets":
            out.extend(doc["budgets"])
    return out


BUDGETS = _shipped_budgets()


def _repo(work: Path, hw: dict, model: dict, budget: dict, which: str, traffic: dict | None) -> list[str]:
    b = json.loads(json.dumps(budget))
    dep = b.setdefault("deployment", {})
    if which in ("hardware", "both"):
        dep["hardware"] = "team-card"
    if which in ("model", "both"):
        dep["model"] = "team-model"
    if traffic:
        wl = b.setdefault("workload", {})
        wl.update(traffic)
        dep.setdefault("replicas", 2)
    files = {
        "hardware.yaml": {"version": 1, "kind": "hardware", "hardware": [hw]},
        "models.yaml": {"version": 1, "kind": "models", "models": [model]},
        "budgets.yaml": {"version": 1, "kind": "budgets", "budgets": [b]},
    }
    for name, doc in files.items():
        (work / name).write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return [str(work / n) for n in files] + [str(REPO_ROOT / "budgets" / "teams.yaml")]


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("partial-catalog")


@fuzz_settings(long_examples=3000)
@given(hardware_entry(), model_entry(), st.sampled_from(BUDGETS),
       st.sampled_from(["hardware", "model", "both"]), st.sampled_from(TRAFFIC))
def test_partial_entries_never_crash(work: Path, hw: dict, model: dict, budget: dict, which: str,
                                     traffic: dict | None) -> None:
    count("partial_catalog")
    paths = _repo(work, hw, model, budget, which, traffic)
    assert check_in_process(paths, explain=True) in (0, 1)


def test_bandwidth_only_card_beside_a_failing_budget(work: Path) -> None:
    """The issue's case, every format: exit 0 or 1 with findings (was exit 3, TypeError)."""
    overpromised = next(b for b in BUDGETS if b["name"] == "research-assistant")
    paths = _repo(work, {"name": "team-card", "bandwidth": "2 TB/s"}, {"name": "team-model", "extends": "llama-3.1-8b"},
                  overpromised, "none", None)
    assert check_in_process(paths, explain=True) == 1


def test_calibrate_names_no_user_entry(tmp_path: Path) -> None:
    """calibrate resolves --hardware in the built-in catalog only: a team's card is exit 2, said."""
    from budgetlint.run.calibrate import CalibrateError, calibrate

    run = tmp_path / "run.json"
    run.write_text("{}", encoding="utf-8")
    with pytest.raises(CalibrateError, match="not in the catalog"):
        calibrate([str(run)], model="llama-3.1-8b", hardware="team-card")
