"""deployment.parallelism in a budget file: a DeepSeek-R1 deployment with expert parallelism 8
and attention data parallelism 8 is expressible, its step carries the all-to-all worked by hand,
and contradictions are errors at their line."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from budgetlint.model.links import LINKS, link_named
from budgetlint.reporters import get_reporter
from budgetlint.run.check import Options, run_check


def _check(tmp_path: Path, deployment: str) -> tuple[dict, list]:
    text = "version: 1\nkind: budgets\nbudgets:\n" + textwrap.indent(textwrap.dedent("""\
        - name: r1
          owner: "@a/b"
          workload: {prompt_tokens: 2000, output_tokens: 100, concurrency: 8}
          promise: {ttft: 2 s, pace: 20 token/s}
          deployment:
        """) + textwrap.indent(textwrap.dedent(deployment), "    "), "  ")
    (tmp_path / "b.yaml").write_text(text)
    doc = json.loads(get_reporter("json")(run_check([str(tmp_path / "b.yaml")], Options(use_codeowners=False))))
    return doc["budgets"][0], doc["findings"]


R1_EP8_DP8 = """\
model: deepseek-r1
hardware: h200-sxm
weight_precision: fp8
parallelism: {tensor: 1, data: 8, expert: 8}
"""


def test_deepseek_r1_ep8_dp8_carries_the_all_to_all(tmp_path: Path) -> None:
    b, findings = _check(tmp_path, R1_EP8_DP8 + "alltoall_latency: 10 us\n")
    assert not [f for f in findings if f["severity"] == "error"]
    terms = b["analysis"]["bound"]["decode_terms"]
    # 8 tokens over 8 ranks: 1 per device, to 7 x (1 - (7/8)^8) other ranks, 7168 x 2 B each way,
    # in the 58 MoE layers of the catalog entry, over the H200's NVLink 4 (450 GB/s a direction),
    # plus 2 x 10 us per MoE layer
    want = 58 * 2 * 7168 * 2 * 7 * (1 - (7 / 8) ** 8) / 450e9 + 58 * 2 * 10e-6
    assert terms["alltoall_s"] == pytest.approx(want, rel=1e-9)
    # the realistic pass also carries the other 7 sequences' prefill, 7 x 2000 / 100 = 140 tokens
    # a pass (continuous batching): 148 tokens dispatched, the latency the same
    realistic = 148 / 8 * (want - 58 * 2 * 10e-6) + 58 * 2 * 10e-6
    assert b["analysis"]["realistic"]["decode_terms"]["alltoall_s"] == pytest.approx(realistic, rel=1e-9)


def test_a_named_link_sets_the_all_to_all_bandwidth(tmp_path: Path) -> None:
    b, _ = _check(tmp_path, R1_EP8_DP8 + "interconnect: infiniband-ndr\n")
    want = 58 * 2 * 7168 * 2 * 7 * (1 - (7 / 8) ** 8) / 50e9  # 400 Gb/s = 50 GB/s
    assert b["analysis"]["bound"]["decode_terms"]["alltoall_s"] == pytest.approx(want, rel=1e-9)
    b, _ = _check(tmp_path, R1_EP8_DP8 + "interconnect: infiniband-ndr\nalltoall_bandwidth: 25 GB/s\n")
    assert b["analysis"]["bound"]["decode_terms"]["alltoall_s"] == pytest.approx(want * 2, rel=1e-9)


def test_devices_and_parallelism_tensor_that_disagree_are_an_error_at_the_line(tmp_path: Path) -> None:
    _, findings = _check(tmp_path, "model: deepseek-r1\nhardware: h200-sxm\ndevices: 4\n"
                                   "parallelism:\n  tensor: 8\n")
    (f,) = [f for f in findings if f["rule"] == "BL003"]
    assert "contradicts deployment.devices 4" in f["message"]
    assert f["line"] == 13  # the tensor: line (budgets: 3, deployment: 8, devices: 11, parallelism: 12)


def test_expert_parallelism_needs_experts_and_must_divide(tmp_path: Path) -> None:
    _, findings = _check(tmp_path, "model: llama-3.1-70b\nhardware: h100-sxm\nparallelism: {tensor: 8, expert: 8}\n")
    assert any(f["rule"] == "BL003" and "no routed experts" in f["message"] for f in findings)
    _, findings = _check(tmp_path, "model: deepseek-r1\nhardware: h200-sxm\nparallelism: {tensor: 2, data: 2, expert: 8}\n")
    assert any(f["rule"] == "BL003" and "does not divide" in f["message"] for f in findings)


def test_an_unknown_link_is_named(tmp_path: Path) -> None:
    _, findings = _check(tmp_path, R1_EP8_DP8 + "interconnect: nvlink-9\n")
    assert any(f["rule"] == "BL008" and "nvlink-9" in f["message"] for f in findings)


def test_links_are_per_direction_with_sources() -> None:
    # vendors quote NVLink bidirectional: 900 GB/s H100 -> 450 a direction; 1.8 TB/s Blackwell -> 900
    assert link_named("NVLink 4").bandwidth_bytes_per_s == 450e9  # type: ignore[union-attr]
    assert link_named("nvlink5").bandwidth_bytes_per_s == 900e9  # type: ignore[union-attr]
    assert link_named("ib-ndr").bandwidth_bytes_per_s == 400e9 / 8  # type: ignore[union-attr]
    assert all(link.source for link in LINKS.values())


@pytest.mark.parametrize("link", ["50", "{latency: 1 ms}"])
def test_a_kv_link_without_a_bandwidth_is_an_error_at_its_line(tmp_path: Path, link: str) -> None:
    _, findings = _check(tmp_path, "model: llama-3.1-70b\nhardware: h100-sxm\ndisaggregated:\n"
                                   "  prefill: {devices: 4}\n  decode: {devices: 4}\n"
                                   f"  kv_link: {link}\n")
    (f,) = [f for f in findings if f["rule"] == "BL003"]
    assert f["line"] == 14 and "kv_link: expected a link name" in f["message"]


def test_the_more_devices_lever_keeps_the_topology(tmp_path: Path) -> None:
    """tensor 2 x data 2, experts over 4: the lever tries tensor degrees whose tensor x data the
    4 expert ranks divide (3 x 2 = 6 does not: skipped, not a crash), and says the whole count."""
    # each of 4 devices holds (2 ranks x 16.55e9 shared + 654.5e9 of experts) / 4 = 171.9 GB in fp8: BL302
    b, findings = _check(tmp_path, "model: deepseek-r1\nhardware: h200-sxm\nweight_precision: fp8\n"
                                   "parallelism: {tensor: 2, data: 2, expert: 4}\n")
    (f,) = [f for f in findings if f["rule"] == "BL302"]
    assert "needs 172 GB per device" in f["message"]
    words = [lv["description"] for lv in b["analysis"]["levers"] if lv["name"] == "more-devices"]
    assert words and all(w.startswith("tensor ") and " x data 2 x pipeline 1 = " in w for w in words)
    assert not any(w.startswith("tensor 3 ") for w in words)
