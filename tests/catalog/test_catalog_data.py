"""Checks on the built-in catalog data files (budgetlint/model/catalog/*.yaml).

These read the YAML directly with ``yaml.safe_load``; the catalog loader and
lookup are tested elsewhere. Expected datasheet figures are written here by
hand, each with its source, never copied from the files under test.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest
import yaml

import budgetlint

CATALOG_DIR = Path(budgetlint.__file__).parent / "model" / "catalog"

# --------------------------------------------------------------------------
# helpers


def _load(name: str) -> dict:
    with open(CATALOG_DIR / name, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


@pytest.fixture(scope="module")
def hardware() -> list[dict]:
    doc = _load("hardware.yaml")
    assert doc["version"] == 1
    assert doc["kind"] == "hardware"
    return doc["hardware"]


@pytest.fixture(scope="module")
def models() -> list[dict]:
    doc = _load("models.yaml")
    assert doc["version"] == 1
    assert doc["kind"] == "models"
    return doc["models"]


_PREFIX = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15,
           "Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40}
_QUANTITY = re.compile(r"^(?P<num>\d+(?:\.\d+)?)\s+(?P<prefix>[kMGTP]i?)?(?P<unit>B/s|B|FLOP/s)$")


def si(text: str, unit: str) -> float:
    """A catalog quantity string -> SI float; asserts the unit kind.

    A deliberately small parser (the real one is pint in budgetlint.model.units):
    enough to check the data files without depending on the package code.
    """
    match = _QUANTITY.match(str(text))
    assert match, f"{text!r} is not '<number> <prefix><unit>'"
    assert match["unit"] == unit, f"{text!r}: expected a {unit} quantity"
    return float(match["num"]) * _PREFIX[match["prefix"] or ""]


def params(text: str) -> float:
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([MB])", str(text))
    assert match, f"parameters {text!r} is not like '70.55B'"
    return float(match[1]) * {"M": 1e6, "B": 1e9}[match[2]]


def index(entries: list[dict]) -> dict[str, dict]:
    """Lookup key (name or alias, case-insensitive) -> entry."""
    out: dict[str, dict] = {}
    for entry in entries:
        for key in [entry["name"], *entry.get("aliases", [])]:
            out[key.lower()] = entry
    return out


def by_name(entries: list[dict], name: str) -> dict:
    return index(entries)[name.lower()]


def kv_bytes_per_token(model: dict, bytes_per_value: int = 2) -> int:
    """KV-cache bytes per token over all layers, ignoring sliding windows."""
    if model["attention"] == "mla":
        return model["layers"] * (model["kv_lora_rank"] + model["qk_rope_head_dim"]) * bytes_per_value
    return 2 * model["layers"] * model["kv_heads"] * model["head_dim"] * bytes_per_value


# --------------------------------------------------------------------------
# structure


def test_counts(hardware, models):
    assert len(hardware) >= 25
    assert len(models) >= 20


@pytest.mark.parametrize("kind", ["hardware", "models"])
def test_names_sources_and_unique_keys(kind, hardware, models):
    entries = hardware if kind == "hardware" else models
    owner: dict[str, str] = {}
    for entry in entries:
        name = entry["name"]
        assert re.fullmatch(r"[a-z0-9][a-z0-9.\-]*", name), f"{name!r} is not a lowercase slug"
        assert str(entry.get("source", "")).startswith(("http://", "https://")), name
        aliases = entry.get("aliases", [])
        assert isinstance(aliases, list) and all(isinstance(a, str) and a for a in aliases), name
        # A lookup key (case-insensitive) must resolve to exactly one entry.
        for key in {k.lower() for k in [name, *aliases]}:
            assert owner.setdefault(key, name) == name, (
                f"{key!r} names both {owner[key]} and {name}"
            )


def test_hardware_quantities_have_units(hardware):
    for hw in hardware:
        assert hw["vendor"], hw["name"]
        assert si(hw["memory"], "B") > 0
        assert si(hw["bandwidth"], "B/s") > 0
        if "interconnect" in hw:
            assert si(hw["interconnect"], "B/s") > 0
        compute = hw.get("compute")
        if compute is None:
            # Omitted on purpose (no source); the entry must say why.
            assert "compute" in hw.get("notes", "").lower(), hw["name"]
            continue
        assert set(compute) <= {"fp32", "bf16", "fp16", "fp8", "int8", "int4", "fp4"}, hw["name"]
        for precision, value in compute.items():
            assert si(value, "FLOP/s") > 0, (hw["name"], precision)
        # Narrower formats are never slower than bf16 on the same part.
        bf16 = si(compute["bf16"], "FLOP/s")
        for precision in ("fp8", "int8", "fp4"):
            if precision in compute:
                assert si(compute[precision], "FLOP/s") >= bf16, (hw["name"], precision)


def test_hardware_bandwidth_is_plausible_and_decimal(hardware):
    # Catches TB/s vs GB/s slips: every listed part is between 0.1 and 10 TB/s.
    for hw in hardware:
        assert 0.1e12 <= si(hw["bandwidth"], "B/s") <= 10e12, hw["name"]
        assert 8e9 <= si(hw["memory"], "B") <= 600e9, hw["name"]


def test_model_fields(models):
    for m in models:
        name = m["name"]
        assert params(m["parameters"]) > 0
        assert m["attention"] in {"mha", "gqa", "mla"}, name
        for key in ("layers", "hidden_size", "attention_heads", "max_context", "vocab_size"):
            assert isinstance(m[key], int) and m[key] > 0, (name, key)
        if m["attention"] == "mla":
            assert m["kv_lora_rank"] > 0 and m["qk_rope_head_dim"] > 0, name
        else:
            assert m["kv_heads"] >= 1 and m["head_dim"] >= 1, name
            assert m["attention_heads"] % m["kv_heads"] == 0, name
            if m["attention"] == "mha":
                assert m["kv_heads"] == m["attention_heads"], name
            else:
                assert m["kv_heads"] < m["attention_heads"], name
        if "sliding_window" in m:
            assert 0 < m["sliding_window_layers"] <= m["layers"], name
            assert 0 < m["sliding_window"] <= m["max_context"], name


def test_moe_active_below_total(models):
    moe = [m for m in models if "experts" in m]
    assert len(moe) >= 5
    for m in moe:
        assert 0 < m["experts_per_token"] < m["experts"], m["name"]
        assert params(m["active_parameters"]) < params(m["parameters"]), m["name"]
    for m in models:
        if "active_parameters" in m:
            assert "experts" in m, f"{m['name']}: active_parameters on a dense model"


# --------------------------------------------------------------------------
# spot checks against datasheets and configs, written by hand


def test_h100_sxm_datasheet(hardware):
    # https://www.nvidia.com/en-us/data-center/h100/ : 80 GB, 3.35 TB/s, BF16
    # "1,979 TFLOPS" is with sparsity, so dense is 989 (ml-engineering "w/o
    # sparsity" table agrees; 1830 MHz x 528 TC x 1024 FLOP/clk = 989.4 TF).
    hw = by_name(hardware, "h100-sxm")
    assert si(hw["memory"], "B") == pytest.approx(80e9)
    assert si(hw["bandwidth"], "B/s") == pytest.approx(3.35e12)
    assert si(hw["compute"]["bf16"], "FLOP/s") == pytest.approx(989e12, rel=1e-3)
    assert si(hw["compute"]["fp8"], "FLOP/s") == pytest.approx(1979e12, rel=1e-3)
    # NVLink4 900 GB/s is bidirectional; the catalog stores per direction.
    assert si(hw["interconnect"], "B/s") == pytest.approx(450e9)
    assert by_name(hardware, "H100 SXM5 80GB") is hw
    assert by_name(hardware, "h100") is hw


def test_h200_datasheet(hardware):
    # https://www.nvidia.com/en-us/data-center/h200/ : 141 GB HBM3e, 4.8 TB/s.
    hw = by_name(hardware, "h200-sxm")
    assert si(hw["memory"], "B") == pytest.approx(141e9)
    assert si(hw["bandwidth"], "B/s") == pytest.approx(4.8e12)


def test_mi300x_datasheet(hardware):
    # https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html :
    # 192 GB HBM3, 5.3 TB/s; dense BF16 1307.4 TF (the sparse figure is 2x).
    hw = by_name(hardware, "mi300x")
    assert si(hw["memory"], "B") == pytest.approx(192e9)
    assert si(hw["bandwidth"], "B/s") == pytest.approx(5.3e12)
    assert si(hw["compute"]["bf16"], "FLOP/s") == pytest.approx(1307.4e12, rel=1e-3)


def test_no_sparse_headline_figures(hardware):
    # Sparse headline numbers that must never appear as dense compute:
    # H100 SXM BF16 1979 (datasheet, with sparsity), B200 BF16 4500 (HGX spec
    # table, sparse), MI355X FP8 10.1 PF (AMD page, sparse).
    assert si(by_name(hardware, "h100-sxm")["compute"]["bf16"], "FLOP/s") < 1500e12
    assert si(by_name(hardware, "b200")["compute"]["bf16"], "FLOP/s") == pytest.approx(2250e12)
    assert si(by_name(hardware, "mi355x")["compute"]["fp8"], "FLOP/s") < 6000e12


def test_llama_3_1_8b_kv_per_token(models):
    # config.json: 32 layers, 8 KV heads, head_dim 128 -> K and V, bf16:
    # 2 * 32 * 8 * 128 * 2 = 131072 bytes per token.
    m = by_name(models, "meta-llama/Llama-3.1-8B-Instruct")
    assert m["name"] == "llama-3.1-8b"
    assert kv_bytes_per_token(m) == 2 * 32 * 8 * 128 * 2 == 131072


def test_deepseek_v3_mla_latent(models):
    # github.com/deepseek-ai/DeepSeek-V3 inference/configs/config_671B.json:
    # 61 layers, kv_lora_rank 512, qk_rope_head_dim 64 -> bf16 latent cache
    # 61 * (512 + 64) * 2 = 70272 bytes per token.
    m = by_name(models, "deepseek-v3")
    assert m["attention"] == "mla"
    assert (m["kv_lora_rank"], m["qk_rope_head_dim"]) == (512, 64)
    assert kv_bytes_per_token(m) == 61 * (512 + 64) * 2 == 70272


def test_sliding_window_models(models):
    # gpt-oss config.json layer_types alternate sliding(128)/full attention;
    # Gemma 2 alternates local(4096)/global.
    expect = {"gpt-oss-20b": (128, 12), "gpt-oss-120b": (128, 18),
              "gemma-2-9b": (4096, 21), "gemma-2-27b": (4096, 23),
              "mistral-7b-v0.1": (4096, 32)}
    for name, (window, layers) in expect.items():
        m = by_name(models, name)
        assert (m["sliding_window"], m["sliding_window_layers"]) == (window, layers), name


# --------------------------------------------------------------------------
# cross-check against the shared reference tables

# CSV rows deliberately without a catalog entry: none at present. Add the
# row's name here with a comment saying why if one is ever left out.
HARDWARE_EXCLUDED: set[str] = set()
MODELS_EXCLUDED: set[str] = set()

# (CSV row, column) pairs where the catalog deliberately differs, and why.
HARDWARE_DEVIATIONS = {
    # Google's current v5p table says 95 GiB (user-allocatable of 96 GiB
    # physical); the CSV copies the older "95GB" label.
    ("Google TPU v5p", "memory_capacity_GB"),
}


def _number(cell: str) -> float | None:
    """CSV cell -> float; None for blank or pure '?'. 'x?' counts as x."""
    match = re.match(r"^\s*(\d+(?:\.\d+)?)", cell or "")
    return float(match[1]) if match else None


def _csv_lookup(entries: list[dict], row_name: str) -> dict | None:
    """Resolve a CSV name via the catalog's names and aliases.

    Tries the name as written, then without parenthesised qualifiers
    ("B200 (HGX/DGX) 180GB" -> "B200 180GB"), then each side of " / ".
    """
    keys = index(entries)
    candidates = [row_name, re.sub(r"\s*\([^)]*\)", "", row_name)]
    candidates += [part for c in list(candidates) for part in c.split(" / ")]
    for candidate in candidates:
        entry = keys.get(" ".join(candidate.split()).lower())
        if entry is not None:
            return entry
    return None


def _rows(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        return [row for row in csv.DictReader(fh) if row.get("name", "").strip()]


def test_reference_hardware_rows_are_in_catalog(shared_dir, hardware):
    rows = _rows(shared_dir / "reference" / "hardware.csv")
    assert len(rows) >= 25
    checks = [("memory_capacity_GB", "memory", "B", 1e9),
              ("memory_bandwidth_TBps", "bandwidth", "B/s", 1e12)]
    for row in rows:
        name = row["name"]
        if name in HARDWARE_EXCLUDED:
            continue
        hw = _csv_lookup(hardware, name)
        assert hw is not None, f"CSV hardware row {name!r} has no catalog entry or alias"
        for column, key, unit, scale in checks:
            expected = _number(row[column])
            if expected is None or (name, column) in HARDWARE_DEVIATIONS:
                continue
            assert si(hw[key], unit) == pytest.approx(expected * scale, rel=1e-3), (name, key)
        bf16 = _number(row["dense_bf16_TFLOPs"])
        if bf16 is None:
            # '?' in the reference: the catalog omits it rather than invent it.
            assert "bf16" not in hw.get("compute", {}), name
        else:
            assert si(hw["compute"]["bf16"], "FLOP/s") == pytest.approx(bf16 * 1e12, rel=1e-3), name
            if "?" in row["dense_bf16_TFLOPs"]:
                assert "unconfirmed" in hw.get("notes", ""), name
    for name, _column in HARDWARE_DEVIATIONS:
        hw = _csv_lookup(hardware, name)
        assert hw is not None and hw.get("notes"), f"deviation for {name} must be explained in notes"


def test_reference_model_rows_are_in_catalog(shared_dir, models):
    rows = _rows(shared_dir / "reference" / "models.csv")
    assert len(rows) >= 20
    columns = {"num_layers": "layers", "hidden_size": "hidden_size",
               "num_attention_heads": "attention_heads", "num_kv_heads": "kv_heads",
               "head_dim": "head_dim", "vocab_size": "vocab_size",
               "max_context": "max_context", "num_experts": "experts",
               "experts_per_token": "experts_per_token", "kv_lora_rank": "kv_lora_rank"}
    for row in rows:
        name = row["name"]
        if name in MODELS_EXCLUDED:
            continue
        m = _csv_lookup(models, name)
        assert m is not None, f"CSV model row {name!r} has no catalog entry or alias"
        for column, key in columns.items():
            cell = row[column].strip()
            if not re.fullmatch(r"\d+", cell):  # blank, "n/a (MLA)", "qk 192 / v 128"
                continue
            assert m.get(key) == int(cell), (name, key)
        assert params(m["parameters"]) == pytest.approx(float(row["total_params_B"]) * 1e9, rel=1e-3), name
        if "experts" in m:
            assert params(m["active_parameters"]) == pytest.approx(
                float(row["active_params_B"]) * 1e9, rel=1e-3), name
        # The reference's KV bytes/token (bf16, all layers) from our fields.
        assert kv_bytes_per_token(m) == int(row["kv_cache_bytes_per_token_bf16"]), name


def test_tie_word_embeddings_recorded(models, shared_dir):
    # Every entry records config.json's tie_word_embeddings (issue 11, point 6): a
    # decode step reads vocab x hidden fewer parameters when untied.
    for m in models:
        assert isinstance(m.get("tie_word_embeddings"), bool), m["name"]
    # shared/reference/models.csv notes "tied embeddings" for exactly the Llama-3.2 rows
    rows = _rows(shared_dir / "reference" / "models.csv")
    tied_in_reference = {row["name"] for row in rows if "tied embeddings" in row["notes"]}
    assert tied_in_reference == {"Llama-3.2-1B", "Llama-3.2-3B"}
    for name in tied_in_reference:
        assert _csv_lookup(models, name)["tie_word_embeddings"] is True, name
    # Gemma-2: Gemma2Config defaults tie_word_embeddings to True and config.json omits it
    assert by_name(models, "gemma-2-9b")["tie_word_embeddings"] is True
    assert by_name(models, "llama-3.1-8b")["tie_word_embeddings"] is False
