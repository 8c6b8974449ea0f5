"""deployment.engine, deployment.engine_version and deployment.config in the schema and the model."""

from __future__ import annotations

import textwrap
from pathlib import Path

from budgetlint.files.loader import load_file
from budgetlint.model.build import Catalog, Sink, build_budget
from budgetlint.run.check import Options, run_check


def _write(tmp_path: Path, deployment: str) -> Path:
    p = tmp_path / "b.yaml"
    p.write_text(textwrap.dedent("""\
        version: 1
        kind: budgets
        budgets:
          - name: chat
            owner: "@a/b"
            workload: {prompt_tokens: 100, output_tokens: 100}
            promise: {pace: 20 token/s}
            deployment: {model: llama-3.1-8b, hardware: h100-sxm, %s}
        """) % deployment)
    return p


def test_engine_fields_reach_the_model(tmp_path: Path) -> None:
    p = _write(tmp_path, 'engine: vllm, engine_version: "0.11.0", config: [deploy/serve.sh, values.yaml]')
    (doc,) = load_file(p, "b.yaml").documents
    sink = Sink()
    b = build_budget(doc, 0, Catalog(), sink)
    assert (b.deployment.engine, b.deployment.engine_version) == ("vllm", "0.11.0")
    assert b.deployment.config == ["deploy/serve.sh", "values.yaml"]


def test_an_unknown_engine_and_an_unquoted_version_are_schema_errors(tmp_path: Path) -> None:
    report = run_check([str(_write(tmp_path, "engine: vlm, engine_version: 0.6"))], Options(use_codeowners=False))
    bad = sorted((f.rule, f.location.line) for f in report.findings if f.rule == "BL003")
    assert bad == [("BL003", 8), ("BL003", 8)]
    assert any("'vllm'" in f.message for f in report.findings if f.rule == "BL003")
