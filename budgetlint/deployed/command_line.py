"""Engine launches in text: shell scripts and Dockerfiles.

Every ``vllm serve`` / ``python -m vllm.entrypoints.openai.api_server`` /
``python -m sglang.launch_server`` / ``python -m dynamo.vllm`` /
``trtllm-serve`` command in the text is one :class:`Deployed`. A Dockerfile's
exec-form ``ENTRYPOINT``/``CMD`` (``["vllm", "serve", ...]``) is read as the
command it runs (the last ``ENTRYPOINT`` followed by the last ``CMD``); a
``FROM vllm/vllm-openai:<tag>`` or ``FROM lmsysorg/sglang:<tag>`` base with
only a ``CMD`` runs that image's engine with the ``CMD`` as arguments, and its
tag names the engine version. ``docker run IMAGE ARGS`` in a script works the
same way.
"""

from __future__ import annotations

import json
import re

from budgetlint.deployed import Deployed, ConfigProblem, ReadResult, Setting
from budgetlint.deployed.args import Token, apply_args, find_invocations, shell_tokens
from budgetlint.deployed.images import engine_of_image

_EXEC = re.compile(r"^[ \t]*(ENTRYPOINT|CMD)[ \t]+\[", re.IGNORECASE | re.MULTILINE)
_FROM = re.compile(r"^[ \t]*FROM[ \t]+(?:--platform=\S+[ \t]+)?(\S+)", re.IGNORECASE | re.MULTILINE)
_JSON_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_DOCKERFILE = re.compile(r"^[ \t]*FROM[ \t]+\S+", re.IGNORECASE | re.MULTILINE)
_LAUNCH = re.compile(r"vllm[ \t]+serve|vllm\.entrypoints|sglang\.launch_server|sglang[ \t]+serve|dynamo\.(?:vllm|sglang|trtllm)"
                     r"|trtllm-serve|vllm/vllm-openai|lmsysorg/sglang")


def detect(text: str) -> bool:
    return bool(_LAUNCH.search(text))


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, col


def _exec_form(text: str, start: int, problems: list[ConfigProblem], display: str) -> tuple[list[Token], int]:
    """The JSON array of an exec-form instruction starting at ``start`` (its ``[``), as tokens."""
    end = start
    depth = 0
    tokens: list[Token] = []
    i = start
    while i < len(text):
        c = text[i]
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
            if depth == 0:
                end = i + 1
                break
        elif c == '"':
            m = _JSON_STRING.match(text, i)
            if m is None:
                line, col = _line_col(text, i)
                problems.append(ConfigProblem(display, line, col, "expected a JSON string, found an unterminated one"))
                return tokens, len(text)
            try:
                value = json.loads(m.group(0))
            except ValueError:
                value = m.group(1)
            line, col = _line_col(text, i)
            tokens.append(Token(value, line, col))
            i = m.end()
            continue
        elif c == "\n" and (i == 0 or text[i - 1] != "\\"):
            # exec form without its closing bracket on this line: the instruction ends here
            end = i
            break
        i += 1
    return tokens, end


def read(text: str, display: str) -> ReadResult:
    out = ReadResult()
    if _DOCKERFILE.search(text) and (_EXEC.search(text) or re.search(r"^[ \t]*(CMD|ENTRYPOINT)\b", text, re.I | re.M)):
        _dockerfile(text, display, out)
        if out.deployed:
            return out
    _script(text, display, out)
    return out


def _dockerfile(text: str, display: str, out: ReadResult) -> None:
    stages = [m.start() for m in _FROM.finditer(text)]
    last = stages[-1] if stages else 0
    body = text[last:]
    offset = last
    base = _FROM.match(text, last)
    image = base.group(1) if base else ""
    entry: list[Token] | None = None
    cmd: list[Token] | None = None
    for m in re.finditer(r"^[ \t]*(ENTRYPOINT|CMD)[ \t]+(.*)$", body, re.IGNORECASE | re.MULTILINE):
        kind = m.group(1).upper()
        rest_at = offset + m.start(2)
        if text[rest_at:rest_at + 1] == "[":
            toks, _ = _exec_form(text, rest_at, out.problems, display)
        else:  # shell form: the rest of the instruction, with continuations
            line, col = _line_col(text, rest_at)
            chunk = text[rest_at:]
            toks = []
            for t in shell_tokens(chunk, line, col):
                if t.end and t.text == "\n":
                    break
                toks.append(t)
        if kind == "ENTRYPOINT":
            entry, cmd = toks, None  # a later ENTRYPOINT resets CMD (Docker's rule)
        else:
            cmd = toks
    tokens = (entry or []) + (cmd or [])
    invocations = find_invocations(tokens)
    base_engine = engine_of_image(image) if image else None
    if not invocations and base_engine is not None and entry is None and cmd:
        line, col = _line_col(text, last)
        dep = Deployed("command-line", display, cmd[0].line, role="", engine=Setting(
            base_engine[0], display, line, col, f"FROM {image}"))
        if base_engine[1]:
            dep.engine_version = Setting(base_engine[1], display, line, col, f"FROM {image}")
        apply_args(dep, base_engine[0], cmd, out.problems, positional_model=base_engine[0] == "vllm"
                   and "serve" in image)
        out.deployed.append(dep)
        return
    for inv in invocations:
        dep = Deployed("command-line", display, inv.start.line,
                       engine=Setting(inv.engine, display, inv.start.line, inv.start.column, inv.launcher))
        if base_engine is not None and base_engine[0] == inv.engine and base_engine[1]:
            line, col = _line_col(text, last)
            dep.engine_version = Setting(base_engine[1], display, line, col, f"FROM {image}")
        apply_args(dep, inv.engine, inv.args, out.problems, positional_model=inv.positional_model)
        out.deployed.append(dep)


def _script(text: str, display: str, out: ReadResult) -> None:
    tokens = shell_tokens(text)
    for inv in find_invocations(tokens):
        dep = Deployed("command-line", display, inv.start.line,
                       engine=Setting(inv.engine, display, inv.start.line, inv.start.column, inv.launcher))
        apply_args(dep, inv.engine, inv.args, out.problems, positional_model=inv.positional_model)
        out.deployed.append(dep)
    # `docker run ... vllm/vllm-openai:TAG ARGS`: the image's engine with ARGS
    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t.text == "docker" and i + 1 < len(tokens) and tokens[i + 1].text == "run":
            j = i + 2
            entry_override = False
            while j < len(tokens) and not tokens[j].end:
                word = tokens[j].text
                if word.startswith("-"):
                    if word == "--entrypoint" or word.startswith("--entrypoint="):
                        entry_override = True
                    takes = word in ("-v", "-e", "-p", "--name", "--entrypoint", "--shm-size", "--network",
                                     "--gpus", "--runtime", "--ipc", "-w", "--env", "--volume", "--publish",
                                     "--device", "--mount", "--env-file", "--user", "-u", "--workdir",
                                     "--cap-add", "--security-opt", "--group-add", "--ulimit", "--label")
                    j += 2 if takes and "=" not in word else 1
                    continue
                engine = engine_of_image(word)
                if engine is not None and not entry_override:
                    k = j + 1
                    args = []
                    while k < len(tokens) and not tokens[k].end:
                        args.append(tokens[k])
                        k += 1
                    if args and not find_invocations(args):
                        dep = Deployed("command-line", display, t.line, engine=Setting(
                            engine[0], display, tokens[j].line, tokens[j].column, word))
                        if engine[1]:
                            dep.engine_version = Setting(engine[1], display, tokens[j].line, tokens[j].column, word)
                        apply_args(dep, engine[0], args, out.problems)
                        out.deployed.append(dep)
                break
            i = j
        i += 1
    out.deployed.sort(key=lambda d: d.line)
