"""Fixtures for the real-benchmark-client tests (``pytest -m clients``).

The clients live in their own virtualenvs under ``<repo>/.venvs/<client>``
(or ``$BUDGETLINT_CLIENT_VENVS/<client>``), made by
``bash tests/clients/setup_clients.sh``; a test whose client venv is
absent skips with the reason. Everything talks to 127.0.0.1 only, and every
process started here is bounded in time and stopped at teardown.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Sequence

import pytest
from tool_skips import tool_missing

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent
VENVS = Path(os.environ.get("BUDGETLINT_CLIENT_VENVS") or REPO_ROOT / ".venvs")
FAKE_SERVER = HERE / "fake_server.py"
MAKE_TOKENIZER = HERE / "make_tokenizer.py"
SETUP_HINT = "bash tests/clients/setup_clients.sh"

#: client name -> its command inside the venv's bin/
CLIENTS = {"aiperf": "aiperf", "inference-perf": "inference-perf"}

#: the fake server's pace
SERVER_TTFT_MS = 100.0
SERVER_ITL_MS = 20.0
SERVER_MAX_SECONDS = 300.0
TOKENIZER_REPO_ID = "local/tiny"


@dataclass(frozen=True)
class ClientVenv:
    name: str
    root: Path

    @property
    def python(self) -> Path:
        return self.root / "bin" / "python"

    @property
    def command(self) -> Path:
        return self.root / "bin" / CLIENTS[self.name]


def client_venv_or_reason(name: str) -> tuple[ClientVenv | None, str]:
    """The client's venv, or None and why it is not usable."""
    venv = ClientVenv(name, VENVS / name)
    if venv.python.exists() and venv.command.exists():
        return venv, ""
    skip_file = VENVS / f"{name}.skip"
    if skip_file.is_file():
        why = skip_file.read_text().strip()
        return None, f"{name} is not installed: {why}"
    return None, f"{name} venv absent at {venv.root}: run `{SETUP_HINT}` first"


def require_client(name: str) -> ClientVenv:
    venv, why = client_venv_or_reason(name)
    if venv is None:
        tool_missing(why)
    return venv


@dataclass(frozen=True)
class TinyTokenizer:
    path: Path  # save_pretrained() directory
    hub_cache: Path  # the same files laid out as a hub cache (HF_HUB_CACHE)
    repo_id: str  # its id inside hub_cache


@pytest.fixture(scope="session")
def tiny_tokenizer(tmp_path_factory: pytest.TempPathFactory) -> TinyTokenizer:
    """Train and save the tiny byte-level BPE once per session, with any client venv."""
    reasons = []
    for name in CLIENTS:
        venv, why = client_venv_or_reason(name)
        if venv is None:
            reasons.append(why)
            continue
        base = tmp_path_factory.mktemp("tokenizer")
        tok = TinyTokenizer(base / "tiny", base / "hub", TOKENIZER_REPO_ID)
        proc = subprocess.run(
            [str(venv.python), str(MAKE_TOKENIZER), str(tok.path),
             "--hub-cache", str(tok.hub_cache), "--repo-id", tok.repo_id],
            env=client_env(base), capture_output=True, text=True, timeout=120,
        )
        if proc.returncode != 0:
            pytest.fail(f"making the tokenizer with {venv.python} failed:\n{proc.stderr[-3000:]}")
        return tok
    tool_missing("no client venv to build the tokenizer with: " + "; ".join(reasons))


def client_env(workdir: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """Environment for a client: offline, no telemetry, loopback never proxied."""
    env = dict(os.environ)
    for var in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"):
        env.pop(var, None)
    env.update({
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "DO_NOT_TRACK": "1",
        "HF_HOME": str(workdir / "hf-home"),
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
        "PYTHONUNBUFFERED": "1",
        "TERM": "dumb",
        "COLUMNS": "160",
    })
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    if extra:
        env.update(extra)
    return env


@dataclass(frozen=True)
class FakeServer:
    url: str  # http://127.0.0.1:PORT
    port: int
    ttft_s: float
    itl_s: float
    model: str
    log: Path


@contextlib.contextmanager
def fake_server(
    python: Path | str,
    tokenizer_dir: Path | None,
    log: Path,
    ttft_ms: float = SERVER_TTFT_MS,
    itl_ms: float = SERVER_ITL_MS,
    max_seconds: float = SERVER_MAX_SECONDS,
    model: str = "tiny-model",
    extra_args: Sequence[str] = (),
) -> Iterator[FakeServer]:
    """Run tests/clients/fake_server.py on a free 127.0.0.1 port; stop it on exit.
    ``extra_args`` go to the server as they are (e.g. its batching-mode flags)."""
    cmd = [str(python), str(FAKE_SERVER), "--port", "0", "--ttft-ms", str(ttft_ms),
           "--itl-ms", str(itl_ms), "--max-seconds", str(max_seconds), "--model", model, *extra_args]
    if tokenizer_dir is not None:
        cmd += ["--tokenizer", str(tokenizer_dir)]
    with open(log, "wb") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err,
                                env=client_env(log.parent))
    try:
        first: list[bytes] = []
        reader = threading.Thread(target=lambda: first.append(proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(30)
        line = first[0].decode().strip() if first else ""
        if not line.startswith("LISTENING "):
            pytest.fail(f"fake server did not start ({line!r}); log:\n{log.read_text()[-2000:]}")
        url = line.split(" ", 1)[1]
        port = int(url.rsplit(":", 1)[1])
        assert url.startswith("http://127.0.0.1:"), url
        yield FakeServer(url, port, ttft_ms / 1000.0, itl_ms / 1000.0, model, log)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()


@pytest.fixture()
def start_fake_server(tmp_path: Path) -> Callable[..., contextlib.AbstractContextManager[FakeServer]]:
    """Factory: ``with start_fake_server(python, tokenizer_dir) as srv: ...``."""

    def start(python: Path | str = sys.executable, tokenizer_dir: Path | None = None,
              **kw: float) -> contextlib.AbstractContextManager[FakeServer]:
        return fake_server(python, tokenizer_dir, tmp_path / "fake_server.log", **kw)

    return start


@dataclass
class Finished:
    returncode: int
    wall_s: float
    log: Path

    def tail(self, n: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-n:]


def run_bounded(cmd: Sequence[str], cwd: Path, env: dict[str, str], log: Path,
                timeout_s: float) -> Finished:
    """Run a client in its own process group; on timeout end the whole group."""
    t0 = time.monotonic()
    with open(log, "wb") as out:
        proc = subprocess.Popen(list(cmd), cwd=cwd, env=env, stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
        try:
            rc = proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            rc = -9
            _end_group(proc.pid, out)
            out.write(f"\n[run_bounded] timed out after {timeout_s} s\n".encode())
        else:
            _end_group(proc.pid, out)  # workers the client left behind, if any
    return Finished(rc, time.monotonic() - t0, log)


def _end_group(pgid: int, out) -> None:  # type: ignore[no-untyped-def]
    for sig, grace in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 0.0)):
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            return
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            try:
                os.killpg(pgid, 0)
            except (ProcessLookupError, PermissionError):
                return
            time.sleep(0.1)
