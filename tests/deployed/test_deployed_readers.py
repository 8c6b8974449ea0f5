"""Each deployed-configuration reader on a real file from a public repository (tests/deployed/data/PROVENANCE.md).

Expected values and lines are read off the vendored files by eye (the line
numbers are the files' own, as `grep -n` prints them), not from the code.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from budgetlint.deployed import read_deployed
from budgetlint.deployed.detect import READERS

DATA = Path(__file__).parent / "data"


def _read(name: str):
    res = read_deployed(DATA / name, name)
    assert [p for p in res.problems if p.severity == "error"] == []
    return res.deployed


def _vals(d) -> dict:
    return {k: (s.value, s.line) for k, s in d.settings.items()}


def test_vllm_serve_in_a_shell_script() -> None:
    """Two `vllm serve` servers (prefill at line 169, decode at 197) with their own memory fractions."""
    prefill, decode = _read("vllm-disagg_example_p2p_nccl_xpyd.sh")
    assert (prefill.engine.value, prefill.line, decode.line) == ("vllm", 169, 197)
    v = _vals(prefill)
    assert v["tensor_parallel"] == (1, 173) and v["dtype"] == ("float16", 175)
    assert v["max_num_batched_tokens"] == (10000, 177) and v["max_num_seqs"] == (256, 178)
    assert v["gpu_memory_utilization"] == (0.9, 180)
    assert _vals(decode)["gpu_memory_utilization"] == (0.7, 208)
    assert "model" not in v and [u.text for u in prefill.unresolved] == ["model $MODEL"]  # left to $MODEL


def test_dockerfile_exec_form_entrypoint() -> None:
    """The last stage's ENTRYPOINT ["python3", "-m", "vllm.entrypoints.openai.api_server"] at line 179."""
    (d,) = _read("vllm-Dockerfile.cpu")
    assert (d.engine.value, d.line, d.settings) == ("vllm", 179, {})


def test_vllm_config_yaml() -> None:
    (d,) = _read("vllm-test_config.yaml")
    assert (d.format, d.engine.value) == ("vllm-config", "vllm")
    assert _vals(d) == {"tensor_parallel": (2, 3)}


def test_compose_with_sglang_launch_server() -> None:
    (d,) = _read("sglang-compose.yaml")
    assert (d.format, d.engine.value, d.engine.line) == ("compose", "sglang", 14)
    assert _vals(d) == {"model": ("meta-llama/Meta-Llama-3.1-8B-Instruct", 16)}
    assert d.engine_version is None  # lmsysorg/sglang:latest names no version


def test_kubernetes_container_command_and_args() -> None:
    (d,) = _read("sglang-k8s-sglang-service.yaml")
    assert (d.format, d.engine.value, d.engine.line) == ("kubernetes", "sglang", 34)
    assert _vals(d) == {"model": ("meta-llama/Meta-Llama-3.1-8B-Instruct", 35), "replicas": (1, 12)}


def test_llm_d_modelservice_values() -> None:
    (d,) = _read("llm-d-ms-inference-scheduling-values.yaml")  # prefill: create: false
    assert (d.format, d.role, d.engine.value) == ("llm-d", "decode", "vllm")
    v = _vals(d)
    assert v["model"] == ("Qwen/Qwen3-32B", 13) and v["tensor_parallel"] == (2, 34)
    assert v["replicas"] == (8, 36) and v["gpu_memory_utilization"] == (0.95, 49)


def test_kserve_llm_inference_service() -> None:
    decode, prefill = _read("kserve-llm-inference-service-H100-eagle3.yaml")
    assert (decode.role, prefill.role) == ("decode", "prefill")
    v = _vals(decode)
    assert v["model"] == ("RedHatAI/Qwen3-32B-FP8-dynamic", 10)
    assert v["tensor_parallel"] == (2, 20) and v["replicas"] == (2, 18)
    assert v["speculative"] == ("eagle3", 15) and v["num_speculative_tokens"] == (6, 16)
    assert _vals(prefill)["tensor_parallel"] == (2, 39) and "speculative" not in prefill.settings


def test_dynamo_graph_deployment() -> None:
    decode, prefill = _read("dynamo-vllm-disagg.yaml")  # the Frontend launches no engine
    assert [(d.role, d.engine.value) for d in (decode, prefill)] == [("decode", "vllm"), ("prefill", "vllm")]
    assert _vals(decode) == {"model": ("Qwen/Qwen3-0.6B", 33), "replicas": (1, 20)}
    assert decode.engine_version is None  # the runtime image's tag is Dynamo's version, not vLLM's


def test_every_reader_has_a_vendored_file_and_is_documented() -> None:
    formats = set()
    for f in DATA.iterdir():
        if f.suffix != ".md":
            formats.update(d.format for d in read_deployed(f, f.name).deployed)
    assert formats == {r.name for r in READERS}
    doc = (Path(__file__).resolve().parents[2] / "docs" / "deployed-config.md").read_text(encoding="utf-8")
    assert [r.name for r in READERS if f"`{r.name}`" not in doc] == []


@pytest.mark.parametrize("text, flag, value", [
    ("vllm serve m --tensor-parallel-size=4\n", "tensor_parallel", 4),
    ("vllm serve m -tp 8\n", "tensor_parallel", 8),
    ("vllm serve m --max_num_seqs 64\n", "max_num_seqs", 64),
    ("vllm serve m --enable-prefix-caching False\n", "prefix_caching", False),
    ("vllm serve m --no-enable-prefix-caching\n", "prefix_caching", False),
    ("vllm serve m --max-num-seqs ${SEQS:-48}\n", "max_num_seqs", 48),
    ("python3 -m sglang.launch_server --model-path m --max-running-requests 96\n", "max_num_seqs", 96),
    ("python3 -m sglang.launch_server --model-path m --chunked-prefill-size 4096\n", "max_num_batched_tokens", 4096),
    ("python3 -m sglang.launch_server --model-path m --chunked-prefill-size -1\n", "chunked_prefill", False),
    ("python3 -m sglang.launch_server --model-path m --disable-radix-cache\n", "prefix_caching", False),
    ("python -m sglang.launch_server --model-path m --mem-fraction-static 0.8\n", "gpu_memory_utilization", 0.8),
    ("vllm serve m \\\n  --speculative-config '{\"method\": \"eagle3\", \"num_speculative_tokens\": 3}'\n",
     "num_speculative_tokens", 3),
])
def test_flags(tmp_path: Path, text: str, flag: str, value) -> None:
    (tmp_path / "serve.sh").write_text(text)
    (d,) = read_deployed(tmp_path / "serve.sh", "serve.sh").deployed
    assert d.get(flag) == value


def test_docker_cmd_after_an_image_entrypoint(tmp_path: Path) -> None:
    (tmp_path / "Dockerfile").write_text('FROM vllm/vllm-openai:v0.11.0\nENTRYPOINT ["vllm", "serve"]\n'
                                         'CMD ["org/m", \\\n     "--max-num-seqs", "64"]\n')
    (d,) = read_deployed(tmp_path / "Dockerfile", "Dockerfile").deployed
    assert (d.engine_version.value, d.get("model"), d.settings["max_num_seqs"].line) == ("0.11.0", "org/m", 4)


def test_a_config_file_named_by_the_command_line_fills_what_the_line_leaves_out(tmp_path: Path) -> None:
    """vLLM: command-line arguments override the --config file's."""
    (tmp_path / "cfg.yaml").write_text("max-num-seqs: 32\ntensor_parallel_size: 2\n")
    (tmp_path / "serve.sh").write_text("vllm serve m --config cfg.yaml --tensor-parallel-size 4\n")
    (d,) = read_deployed(tmp_path / "serve.sh", "serve.sh").deployed
    assert (d.get("max_num_seqs"), d.get("tensor_parallel")) == (32, 4)
    assert d.settings["max_num_seqs"].line == 1 and d.settings["max_num_seqs"].file.endswith("cfg.yaml")


def test_a_config_file_over_the_limit_is_said_not_read_in_part(tmp_path: Path) -> None:
    """The --config file was read whole and then cut at 2 MiB (a larger file in memory first; the values past
    the cut silently gone). Now a file over the limit is a problem naming both sizes, and nothing of it is read."""
    from budgetlint.deployed.detect import MAX_CONFIG_BYTES

    assert MAX_CONFIG_BYTES == 2 * 1024 * 1024
    body = "max-num-seqs: 32\n" + "# padding\n" * (MAX_CONFIG_BYTES // 10)
    (tmp_path / "cfg.yaml").write_text(body)
    size = len(body.encode())
    (tmp_path / "serve.sh").write_text("vllm serve m --config cfg.yaml --tensor-parallel-size 4\n")
    res = read_deployed(tmp_path / "serve.sh", "serve.sh")
    (d,) = res.deployed
    assert d.get("max_num_seqs") is None and d.get("tensor_parallel") == 4
    (problem,) = res.problems
    assert f"of at most 2,097,152 bytes, found {size:,} bytes: not read" in problem.message
    assert (problem.file, problem.line) == ("serve.sh", 1)


def test_a_config_file_of_exactly_the_limit_is_read(tmp_path: Path) -> None:
    """The limit is "at most" (stop 46's message said "under" where a file of exactly 2,097,152 bytes is
    read): 2 MiB by hand, the first line's value read, no problem."""
    head = "max-num-seqs: 32\n"
    pad = 2 * 1024 * 1024 - len(head)
    body = head + "#" * (pad - 1) + "\n"
    assert len(body.encode()) == 2_097_152
    (tmp_path / "cfg.yaml").write_text(body)
    (tmp_path / "serve.sh").write_text("vllm serve m --config cfg.yaml\n")
    res = read_deployed(tmp_path / "serve.sh", "serve.sh")
    (d,) = res.deployed
    assert res.problems == [] and d.get("max_num_seqs") == 32


@pytest.mark.parametrize("given,words", [
    ("nothere.yaml", "--config nothere.yaml: not found beside serve.sh, so the values it holds are not read "
                     "(a file mounted where the engine runs? give it beside the command line to have it read)"),
    ("/etc/vllm/cfg.yaml", "--config /etc/vllm/cfg.yaml: outside the folder of serve.sh, so the values it holds are "
                           "not read"),
])
def test_a_config_file_that_is_not_read_is_said(tmp_path: Path, given: str, words: str) -> None:
    """Until stop 47 a --config file that was not there (or outside the folder) was listed by explain alone, and
    check passed in silence with the values it holds (max-num-seqs, ...) compared with nothing. Now a warning
    (the file may be mounted where the engine runs), at the flag; a shell variable stays unresolved, not said."""
    (tmp_path / "serve.sh").write_text(f"vllm serve m --config {given} --tensor-parallel-size 4\n")
    res = read_deployed(tmp_path / "serve.sh", "serve.sh")
    (d,) = res.deployed
    (problem,) = res.problems
    assert problem.severity == "warning" and problem.message.startswith(words), problem.message
    assert (problem.file, problem.line) == ("serve.sh", 1) and d.get("tensor_parallel") == 4
    (tmp_path / "serve.sh").write_text("vllm serve m --config $CFG\n")
    assert read_deployed(tmp_path / "serve.sh", "serve.sh").problems == []
