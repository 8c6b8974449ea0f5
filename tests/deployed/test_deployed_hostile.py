"""Bad and hostile deployed configurations: a BL702 at file:line:column, a non-zero exit, never a traceback."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cli_runner import cli

BUDGET = """\
version: 1
kind: budgets
budgets:
  - name: chat
    owner: "@a/b"
    workload: {prompt_tokens: 100, output_tokens: 100}
    promise: {pace: 20 token/s}
    deployment: {model: llama-3.1-8b, hardware: h100-sxm, config: [%s]}
"""



@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch) -> None:
    """Run where the files are: display paths are then relative, as in a repository."""
    monkeypatch.chdir(tmp_path)

def _check(tmp_path: Path, name: str, content: bytes | str | None) -> tuple[int, list[dict], str]:
    if content is not None:
        target = tmp_path / name
        target.write_bytes(content if isinstance(content, bytes) else content.encode())
    (tmp_path / "b.yaml").write_text(BUDGET % name)
    res = cli("check", "b.yaml", "--no-codeowners", "--format", "json")
    doc = json.loads(res.output)
    return res.exit_code, [f for f in doc["findings"] if f["rule"] == "BL702"], res.output


@pytest.mark.parametrize("name, content, line, column, words", [
    ("serve.sh", "#!/bin/sh\nvllm serve m --max-num-seqs lots\n", 2, 29, "expected an integer, found 'lots'"),
    ("serve.sh", "vllm serve m --gpu-memory-utilization 1.5\n", 1, 14, "expected a fraction in (0, 1]"),
    ("serve.sh", "vllm serve m --gpu-memory-utilization nan\n", 1, 39, "expected a number"),
    ("serve.sh", "vllm serve m --tensor-parallel-size 0\n", 1, 14, "expected a whole number >= 1"),
    ("serve.sh", "vllm serve m --speculative-config '{broken'\n", 1, 14, "expected JSON"),
    ("serve.sh", "vllm serve m --max-num-seqs\n", 1, 14, "expected a value after it"),
    ("serve.sh", "echo nothing to serve here\n", 1, 1, "found none"),
    ("bin.sh", b"\x00\x01\x02vllm serve", 1, 1, "NUL byte"),
    ("latin1.sh", b"vllm serve m\n# caf\xe9\n", 2, 1, "expected UTF-8"),
    ("values.yaml", "decode:\n  containers:\n    - image: x\n      args: [\"--max-num-seqs\", \"64\"\n", 5, 1, ""),
    ("isvc.yaml", "kind: LLMInferenceService\nspec: 3\n", 1, 1, "expected a `spec` mapping"),
    ("dgd.yaml", "kind: DynamoGraphDeployment\nspec: {services: []}\n", 2, 7, "expected `spec.services`"),
    ("Dockerfile", 'FROM vllm/vllm-openai:v0.11.0\nCMD ["--max-num-seqs", "64\n', 2, 24, "unterminated"),
])
def test_bad_values_are_file_line_errors(tmp_path: Path, name, content, line, column, words) -> None:
    code, found, out = _check(tmp_path, name, content)
    assert code != 0 and found, out
    assert any((f["file"], f["line"], f["column"]) == (name, line, column) and words in f["message"]
               for f in found), found


def test_a_missing_file_is_reported_at_the_budget_entry(tmp_path: Path) -> None:
    code, (f,), _ = _check(tmp_path, "deploy/nope.yaml", None)
    assert code != 0 and f["file"] == "b.yaml" and f["line"] == 8 and "names no file" in f["message"]


def test_an_alias_bomb_and_a_huge_file_are_refused_in_bounded_time(tmp_path: Path) -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, c in zip("abcdefgh", "bcdefghi"))
    code, found, out = _check(tmp_path, "bomb.yaml", bomb)
    assert code != 0 and found
    code, found, out = _check(tmp_path, "huge.sh", "#" * (3 * 1024 * 1024))
    assert code != 0 and "bytes: not read" in found[0]["message"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_is_not_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "serve.sh")
    code, found, _ = _check(tmp_path, "serve.sh", None)
    assert code != 0 and "regular file" in found[0]["message"]


def test_words_of_a_long_command_string_are_not_searched_for_one_by_one(tmp_path: Path, monkeypatch) -> None:
    """A folded `args: >` string: each word is placed on its own line by searching the raw lines, unless the
    string holds more than MAX_RELOCATED words (a hostile wall of words), which keep the string's start."""
    from budgetlint.deployed import manifests, read_deployed

    (tmp_path / "k.yaml").write_text("apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n"
                                     "      containers:\n        - image: vllm/vllm-openai:v0.11.0\n"
                                     "          args: >\n            --tensor-parallel-size 2\n"
                                     "            --max-num-seqs 8\n")
    (d,) = read_deployed(tmp_path / "k.yaml", "k.yaml").deployed
    assert (d.get("max_num_seqs"), d.settings["max_num_seqs"].line) == (8, 10)
    monkeypatch.setattr(manifests, "MAX_RELOCATED", 3)
    (d,) = read_deployed(tmp_path / "k.yaml", "k.yaml").deployed
    assert (d.get("max_num_seqs"), d.settings["max_num_seqs"].line) == (8, 8)
