"""Deployed configurations: what actually serves traffic, read with file:line for every value.

A budget declares its deployment by hand; the deployment that runs is declared
elsewhere, often in the same repository: a ``vllm serve`` command line (a shell
script, a Dockerfile, a compose file, a Kubernetes container), vLLM's
``--config`` YAML, ``sglang.launch_server`` arguments, llm-d modelservice Helm
values, a KServe ``LLMInferenceService`` or an NVIDIA Dynamo
``DynamoGraphDeployment``. Each reader (one module each, registered in
:mod:`budgetlint.deployed.detect`) turns one file into :class:`Deployed`
records of canonical :data:`FIELDS`, each value a :class:`Setting` that knows
its file, line, column and the text it came from. Bad or hostile files give
:class:`ConfigProblem` records (file:line:column, expected, found), never a traceback.
Pure: files in, records out; evaluation (``budgetlint.evaluate.deployed``)
compares them with the budget.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: The canonical fields a reader may fill, and what each means.
FIELDS: dict[str, str] = {
    "model": "the served model (name or path)",
    "tensor_parallel": "tensor-parallel degree",
    "pipeline_parallel": "pipeline-parallel degree",
    "data_parallel": "data-parallel engine copies inside one server",
    "expert_parallel": "expert parallelism on (true/false)",
    "replicas": "copies of the server behind a load balancer",
    "max_num_seqs": "most sequences an iteration runs (vLLM --max-num-seqs, SGLang --max-running-requests)",
    "max_num_batched_tokens": "token budget of one iteration / chunked-prefill size",
    "chunked_prefill": "chunked prefill on (true/false)",
    "gpu_memory_utilization": "fraction of device memory the engine takes (SGLang --mem-fraction-static)",
    "kv_cache_dtype": "KV cache data type (auto: the model's dtype)",
    "dtype": "weights and activations data type",
    "quantization": "weight quantization method",
    "prefix_caching": "prefix caching on (true/false)",
    "speculative": "speculative decoding method (or draft model)",
    "num_speculative_tokens": "tokens proposed per speculative step",
    "block_size": "KV cache block (page) size in tokens",
    "cuda_graphs": "CUDA graphs on (false: vLLM --enforce-eager, SGLang --disable-cuda-graph)",
    "scheduler_steps": "decode iterations a scheduler call (vLLM V0 --num-scheduler-steps, multi-step scheduling)",
}


@dataclass(frozen=True)
class Setting:
    """One value of a deployed configuration and where it was written."""

    value: Any
    file: str
    line: int
    column: int = 1
    text: str = ""  # as written, e.g. "--max-num-seqs 512"

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    def cite(self) -> str:
        """``--max-num-seqs 512 in deploy/serve.sh:14``"""
        return f"{self.text or self.value} in {self.where}" if self.text else f"{self.value} in {self.where}"


@dataclass(frozen=True)
class ConfigProblem:
    """Something a reader could not read: where, what was expected, what was found."""

    file: str
    line: int
    column: int
    message: str
    severity: str = "error"  # "error" | "warning"


@dataclass
class Deployed:
    """One serving configuration found in a file (one role of a disaggregated deployment, say)."""

    format: str  # the reader's name
    file: str
    line: int  # where the configuration starts
    role: str = ""  # "decode", "prefill", a service or container name; "" when the file holds one
    engine: Setting | None = None  # "vllm" | "sglang" | "trtllm" | "tgi" | "other"
    engine_version: Setting | None = None  # from an image tag, when it names one
    settings: dict[str, Setting] = field(default_factory=dict)
    unresolved: list[Setting] = field(default_factory=list)  # values left to a shell/template variable
    #: files the configuration names that were not read (a --config not there): each Setting's text says why
    unread: list[Setting] = field(default_factory=list)

    def get(self, key: str) -> Any:
        s = self.settings.get(key)
        return None if s is None else s.value

    def label(self) -> str:
        what = f"{self.file}:{self.line}"
        return f"{what} ({self.role})" if self.role else what

    def set(self, key: str, setting: Setting, *, override: bool = True) -> None:
        if override or key not in self.settings:
            self.settings[key] = setting


@dataclass
class ReadResult:
    deployed: list[Deployed] = field(default_factory=list)
    problems: list[ConfigProblem] = field(default_factory=list)


def read_deployed(path: Any, display: str, *, max_bytes: int | None = None) -> ReadResult:
    """Read one deployed-configuration file (any supported format, detected from its content)."""
    from budgetlint.deployed.detect import read_file

    return read_file(path, display, max_bytes=max_bytes)
