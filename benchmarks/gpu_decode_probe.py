#!/usr/bin/env python3
"""Time prefill and decode of a randomly initialised catalog-shaped model.

Builds a Llama-style model with the shape of a budgetlint catalog entry
(``budgetlint/model/catalog/models.yaml``; nothing is downloaded: weights are
random, which does not change the time of a dense forward pass), times
prefill and decode steps at a few batch sizes and context lengths on the
device it finds (CUDA if available, else the CPU) and writes budgetlint's
native benchmark format, validated against ``schemas/benchmark.schema.json``,
with the full run conditions (device name, shape, precision, batch, lengths).

    python benchmarks/gpu_decode_probe.py --model llama-3.1-8b --precision bf16 \
        --batch 1,8,32 --context 512,2048 --steps 64 -o budgets/evidence/probe.json

A tiny run for the CPU (what the tests do):

    python benchmarks/gpu_decode_probe.py --layers 2 --hidden-size 64 --heads 4 \
        --kv-heads 2 --intermediate-size 128 --vocab-size 256 --batch 1,2 \
        --context 16,32 --steps 4 --repeats 2 --precision fp32 -o /tmp/probe.json

Per (batch, context) one measurement ("one load point"): ``repeats`` times a
prefill of ``batch`` prompts of ``context`` random tokens, then ``steps``
decode steps with the KV cache. Metrics (seconds, server side, no queue):

* ``ttft`` (``first_token``): the prefill, up to the first token's logits;
* ``tpot`` (``excludes_first_token``): per repeat, the mean decode step, i.e.
  time per output token after the first (output tokens N = steps + 1), so
  budgetlint converts it exactly: x (N - 1) / N;
* ``itl`` (``pooled_gaps``): every decode step, pooled;
* ``e2e`` (``request_latency``): prefill + all decode steps.

Needs torch and transformers (the ``probe`` extra); budgetlint itself is
imported from this checkout when it is not installed.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent

PRECISIONS = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}


def _budgetlint() -> Any:
    try:
        import budgetlint.bench as bench
    except ImportError:
        sys.path.insert(0, str(REPO))
        import budgetlint.bench as bench
    return bench


def catalog_model(name: str) -> dict[str, Any]:
    """The catalog entry for ``name`` (a name or an alias, case-insensitive)."""
    import yaml

    path = REPO / "budgetlint" / "model" / "catalog" / "models.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    for entry in doc.get("models", []):
        names = [entry.get("name", ""), *(entry.get("aliases") or [])]
        if name.lower() in (n.lower() for n in names):
            return entry
    raise SystemExit(f"model {name!r} is not in {path}")


def parse_count(value: Any) -> float:
    if isinstance(value, (int, float)):
        return float(value)
    text = str(value).strip().upper()
    scale = {"K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}.get(text[-1:], 1.0)
    return float(text[:-1] if scale != 1.0 else text) * scale


def derive_intermediate(entry: dict[str, Any]) -> int:
    """The MLP width that makes a Llama shape add up to the catalog's parameter count.

    params = 2 V h (untied embedding and LM head) + L (attention + 3 h I + 2 h) + h,
    attention = h (q) + 2 kv d (k, v) columns of h rows + the h x h output;
    rounded to a multiple of 256 (llama-3.1-8b: 14336, as in its config.json).
    """
    if entry.get("intermediate_size"):
        return int(entry["intermediate_size"])
    h, layers = int(entry["hidden_size"]), int(entry["layers"])
    heads = int(entry["attention_heads"])
    kv = int(entry.get("kv_heads") or heads)
    d = int(entry.get("head_dim") or h // heads)
    vocab = int(entry.get("vocab_size") or 32000)
    params = parse_count(entry["parameters"])
    attention = h * (heads * d + 2 * kv * d) + heads * d * h
    rest = params - 2 * vocab * h - h - layers * (attention + 2 * h)
    inter = rest / (layers * 3 * h)
    if inter <= 0:
        raise SystemExit(f"cannot derive an MLP width for {entry.get('name')}: not a dense Llama shape")
    return int(round(inter / 256.0)) * 256


def build_shape(args: argparse.Namespace) -> dict[str, Any]:
    entry = catalog_model(args.model)
    if entry.get("experts") or entry.get("attention", "gqa") not in ("gqa", "mha", "mqa"):
        raise SystemExit(f"{entry['name']}: only dense Llama-style (GQA/MHA) shapes are probed")
    shape = {
        "layers": int(entry["layers"]),
        "hidden_size": int(entry["hidden_size"]),
        "attention_heads": int(entry["attention_heads"]),
        "kv_heads": int(entry.get("kv_heads") or entry["attention_heads"]),
        "head_dim": int(entry.get("head_dim") or int(entry["hidden_size"]) // int(entry["attention_heads"])),
        "intermediate_size": derive_intermediate(entry),
        "vocab_size": int(entry.get("vocab_size") or 32000),
    }
    overrides = {"layers": args.layers, "hidden_size": args.hidden_size, "attention_heads": args.heads,
                 "kv_heads": args.kv_heads, "intermediate_size": args.intermediate_size,
                 "vocab_size": args.vocab_size}
    changed = {k: v for k, v in overrides.items() if v is not None and v != shape[k]}
    shape.update(changed)
    if "hidden_size" in changed or "attention_heads" in changed:
        shape["head_dim"] = shape["hidden_size"] // shape["attention_heads"]
    label = entry["name"]
    if changed:
        label += "[" + ",".join(f"{k}={v}" for k, v in changed.items()) + "]"
    shape["catalog_name"] = entry["name"]
    shape["model_label"] = label
    shape["full_shape"] = not changed
    return shape


def build_model(shape: dict[str, Any], dtype: Any, device: Any) -> Any:
    import torch
    from transformers import AutoModelForCausalLM, LlamaConfig

    config = LlamaConfig(
        vocab_size=shape["vocab_size"], hidden_size=shape["hidden_size"],
        intermediate_size=shape["intermediate_size"], num_hidden_layers=shape["layers"],
        num_attention_heads=shape["attention_heads"], num_key_value_heads=shape["kv_heads"],
        head_dim=shape["head_dim"], max_position_embeddings=131072, tie_word_embeddings=False,
    )
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)  # parameters are created in the probe's precision
    try:
        with torch.device(device):
            model = AutoModelForCausalLM.from_config(config)
    finally:
        torch.set_default_dtype(previous)
    model.to(device=device, dtype=dtype)
    model.eval()
    return model


def _sync(device: Any) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _cache_names(model: Any) -> tuple[str, bool]:
    """The forward's KV-cache argument (``cache`` in transformers 5, ``past_key_values`` before)
    and whether it takes ``logits_to_keep`` (only the last position's logits are needed)."""
    import inspect

    params = inspect.signature(model.forward).parameters
    return ("cache" if "cache" in params else "past_key_values"), "logits_to_keep" in params


def _forward(model: Any, ids: Any, past: Any = None) -> tuple[Any, Any]:
    """One forward pass: (logits of the last position, the KV cache)."""
    name, keep = _cache_names(model)
    kwargs: dict[str, Any] = {name: past, "use_cache": True}
    if keep:
        kwargs["logits_to_keep"] = 1
    out = model(input_ids=ids, **kwargs)
    return out.logits[:, -1:], getattr(out, name)


def run_point(model: Any, device: Any, vocab: int, batch: int, context: int, steps: int,
              repeats: int, seed: int) -> dict[str, list[float]]:
    """Times of ``repeats`` prefill + decode runs at one (batch, context)."""
    import torch

    gen = torch.Generator(device="cpu").manual_seed(seed)
    prefill, step_means, e2e, pooled = [], [], [], []
    for _ in range(repeats):
        ids = torch.randint(0, vocab, (batch, context), generator=gen).to(device)
        _sync(device)
        t0 = time.perf_counter()
        logits, past = _forward(model, ids)
        nxt = logits.argmax(-1)
        _sync(device)
        t1 = time.perf_counter()
        gaps = []
        for _step in range(steps):
            s0 = time.perf_counter()
            logits, past = _forward(model, nxt, past)
            nxt = logits.argmax(-1)
            _sync(device)
            gaps.append(time.perf_counter() - s0)
        prefill.append(t1 - t0)
        step_means.append(math.fsum(gaps) / len(gaps))
        e2e.append(t1 - t0 + math.fsum(gaps))
        pooled.extend(gaps)
        del logits, past
    return {"prefill": prefill, "tpot": step_means, "e2e": e2e, "itl": pooled}


def device_description(device: Any) -> tuple[str, dict[str, Any]]:
    import torch

    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        return torch.cuda.get_device_name(device), {
            "device_memory_bytes": int(props.total_memory),
            "cuda_version": str(torch.version.cuda),
            "device_count_visible": torch.cuda.device_count(),
        }
    return f"cpu ({platform.processor() or platform.machine()})", {"cpu_threads": torch.get_num_threads()}


def measure(args: argparse.Namespace) -> dict[str, Any]:
    import torch
    import transformers

    bench = _budgetlint()
    from budgetlint import __version__
    from budgetlint.bench.measurement import Conditions, Measurement, metric_from_samples

    if args.device == "auto":
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        device = torch.device(args.device)
    if args.precision not in PRECISIONS:
        raise SystemExit(f"--precision: one of {', '.join(PRECISIONS)}")
    dtype = getattr(torch, PRECISIONS[args.precision])
    torch.manual_seed(args.seed)
    shape = build_shape(args)
    hardware, device_extra = device_description(device)
    t0 = time.perf_counter()
    model = build_model(shape, dtype, device)
    build_s = time.perf_counter() - t0
    n_params = sum(p.numel() for p in model.parameters())
    batches = [int(x) for x in args.batch.split(",")]
    contexts = [int(x) for x in args.context.split(",")]
    measurements = []
    with torch.inference_mode():
        # warm-up: kernels, allocator, autotuning
        run_point(model, device, shape["vocab_size"], min(batches), min(contexts), min(args.steps, 4), 1, args.seed)
        for batch in batches:
            for context in contexts:
                t = run_point(model, device, shape["vocab_size"], batch, context, args.steps,
                              args.repeats, args.seed + batch * 7919 + context)
                provenance = {k: "read" for k in ("model", "hardware", "devices", "concurrency",
                                                  "prompt_tokens", "output_tokens", "measured_at",
                                                  "num_requests", "successful_requests")}
                sources = {"model": "probe --model (and shape overrides)", "hardware": "torch device name",
                           "devices": "one device", "concurrency": "probe batch size",
                           "prompt_tokens": "probe context length", "output_tokens": "steps + 1",
                           "measured_at": "timed around the model's forward passes",
                           "num_requests": "batch x repeats", "successful_requests": "batch x repeats"}
                extra: dict[str, Any] = {
                    "tool": "benchmarks/gpu_decode_probe.py", "precision": args.precision,
                    "device_type": device.type, "batch": batch, "context_tokens": context,
                    "decode_steps": args.steps, "repeats": args.repeats,
                    "catalog_model": shape["catalog_name"], "full_catalog_shape": shape["full_shape"],
                    "layers": shape["layers"], "hidden_size": shape["hidden_size"],
                    "attention_heads": shape["attention_heads"], "kv_heads": shape["kv_heads"],
                    "head_dim": shape["head_dim"], "intermediate_size": shape["intermediate_size"],
                    "vocab_size": shape["vocab_size"], "parameters": int(n_params),
                    "weights": "random (no download)", "torch_version": torch.__version__,
                    "transformers_version": transformers.__version__,
                    "python_version": platform.python_version(), "model_build_s": round(build_s, 3),
                    **device_extra,
                }
                conditions = Conditions(
                    model=shape["model_label"], hardware=hardware, devices=1, concurrency=float(batch),
                    prompt_tokens=float(context), output_tokens=float(args.steps + 1), measured_at="server",
                    num_requests=batch * args.repeats, successful_requests=batch * args.repeats,
                    provenance=provenance, sources=sources, extra=extra)
                note = (f"each of the {batch} sequences of a repeat shares the batch's times; "
                        "samples are per repeat")
                metrics = {
                    "ttft": metric_from_samples(t["prefill"], "first_token", "prefill forward pass", [note]),
                    "tpot": metric_from_samples(t["tpot"], "excludes_first_token",
                                                "mean decode step per repeat", [note]),
                    "itl": metric_from_samples(t["itl"], "pooled_gaps", "every decode step"),
                    "e2e": metric_from_samples(t["e2e"], "request_latency", "prefill + decode steps", [note]),
                }
                mean_step = statistics.fmean(t["tpot"])
                measurements.append(Measurement(
                    source=str(args.output), format="gpu-decode-probe", tool_version=__version__,
                    label=f"batch {batch}, context {context}", conditions=conditions,
                    metrics={k: v for k, v in metrics.items() if v is not None},
                    output_throughput=batch / mean_step, request_throughput=None,
                    duration=math.fsum(t["e2e"]),
                    notes=("randomly initialised weights: the timing of dense kernels does not depend on "
                           "the values",)))
                print(f"batch {batch:>3} context {context:>6}: prefill {statistics.median(t['prefill']) * 1e3:9.2f} ms"
                      f"  decode step {statistics.median(t['tpot']) * 1e3:8.3f} ms"
                      f"  ({batch / mean_step:9.1f} token/s aggregate)", file=sys.stderr)
                if device.type == "cuda":
                    torch.cuda.empty_cache()
    doc = bench.to_native(measurements)
    bench.from_native(doc)  # raises ValueError if the document does not validate
    return doc


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="llama-3.1-8b", help="catalog model name or alias")
    ap.add_argument("--layers", type=int, help="keep only K layers (tiny runs)")
    ap.add_argument("--hidden-size", type=int)
    ap.add_argument("--heads", type=int)
    ap.add_argument("--kv-heads", type=int)
    ap.add_argument("--intermediate-size", type=int)
    ap.add_argument("--vocab-size", type=int)
    ap.add_argument("--precision", default="bf16", help="fp32, bf16 or fp16")
    ap.add_argument("--batch", default="1,8,32", help="comma-separated batch sizes")
    ap.add_argument("--context", default="512,2048", help="comma-separated prompt lengths (tokens)")
    ap.add_argument("--steps", type=int, default=64, help="decode steps per run")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--device", default="auto", help="auto, cuda, cuda:1, cpu")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-o", "--output", type=Path, default=Path("probe.json"))
    args = ap.parse_args(argv)
    if args.steps < 1 or args.repeats < 1:
        ap.error("--steps and --repeats must be at least 1")
    doc = measure(args)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(doc['measurements'])} measurements to {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
