"""A small OpenAI-compatible streaming server with a known, fixed pace.

Used by tests/clients/ to drive real benchmark clients (aiperf,
inference-perf, ...) against a server whose latency is known in advance:
the first token of every stream arrives ``ttft`` after the request was read,
and each further token ``itl`` after the previous one (scheduled on absolute
deadlines, so there is no drift). Only the standard library is needed; when
``--tokenizer DIR`` is given and the ``tokenizers`` package is importable,
prompt tokens are counted with that tokenizer (the one the clients use), so
``usage.prompt_tokens`` matches what the client sent.

Endpoints: ``POST /v1/completions``, ``POST /v1/chat/completions`` (SSE
``data: {...}`` lines and a final ``data: [DONE]`` when ``stream`` is true,
one JSON body otherwise), ``GET /v1/models``, ``GET /health``.
Honoured request fields: ``max_tokens`` / ``max_completion_tokens``,
``ignore_eos`` (accepted; the server never stops early anyway),
``stream_options.include_usage`` (a final chunk with ``usage``).

It listens on 127.0.0.1 only, and stops by itself after ``--max-seconds``
and on SIGTERM / SIGINT::

    python tests/clients/fake_server.py --port 0 --ttft-ms 100 --itl-ms 20 \
        --max-seconds 300 [--tokenizer DIR]

**Batching mode** (``--batch-step-ms A``): instead of a fixed pace, one engine
thread runs iterations like a continuous-batching server. Every stream in an
iteration gets one token at its end; a request that arrives joins at the
next iteration boundary (at once when the engine is idle), and its first
iteration also makes its first token. The law, stated for the tests::

    iteration = A + B x (streams already decoding) + C x (prompt tokens of the newcomers)

with ``--batch-per-stream-ms B`` and ``--batch-prompt-token-ms C`` (defaults
0), and at most ``--batch-max-streams`` streams at once (default 1024; the
rest wait, first come first served). ``budgetlint.physics.step_cost.LinearStepCost(
decode_fixed_s=A, decode_per_seq_s=B, prefill_fixed_s=A, prefill_per_token_s=C)``
is the same law.

On start it prints one line ``LISTENING http://127.0.0.1:PORT`` (the real
port when ``--port 0`` asks for a free one). Python >= 3.10, stdlib only.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import signal
import socket
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable

HOST = "127.0.0.1"
DEFAULT_MAX_TOKENS = 16
TOKEN_CANDIDATES = (" the", " a", " and", " of", " to", " token", " x")


def whitespace_count(text: str) -> int:
    return len(text.split())


def load_token_counter(tokenizer_dir: str | None) -> tuple[Callable[[str], int], str]:
    """Return (count_tokens, description); falls back to whitespace counting."""
    if not tokenizer_dir:
        return whitespace_count, "whitespace"
    path = Path(tokenizer_dir) / "tokenizer.json"
    try:
        from tokenizers import Tokenizer  # type: ignore[import-not-found]
    except ImportError:
        return whitespace_count, "whitespace (tokenizers not importable)"
    if not path.is_file():
        return whitespace_count, f"whitespace ({path} missing)"
    tok = Tokenizer.from_file(str(path))

    def count(text: str) -> int:
        return len(tok.encode(text, add_special_tokens=False).ids)

    return count, f"tokenizers:{path}"


def pick_token_text(count: Callable[[str], int]) -> str:
    """A piece of text that is exactly one token, also when repeated."""
    for cand in TOKEN_CANDIDATES:
        if count(cand) == 1 and count(cand * 50) == 50:
            return cand
    return TOKEN_CANDIDATES[0]


class BatchingEngine(threading.Thread):
    """Iteration-level batching with the law in the module doc."""

    def __init__(self, step_s: float, per_stream_s: float, per_prompt_token_s: float,
                 max_streams: int) -> None:
        super().__init__(daemon=True, name="batching-engine")
        self.step_s = step_s
        self.per_stream_s = per_stream_s
        self.per_prompt_token_s = per_prompt_token_s
        self.max_streams = max_streams
        self.cv = threading.Condition()
        self.pending: list[list[Any]] = []  # [prompt_tokens, tokens_left, queue]
        self.stopped = False
        self.iterations = 0
        #: per iteration: (streams decoding, prompt tokens admitted, its length in s): the law's
        #: arithmetic, readable without a clock (tests/clients/test_fake_server.py)
        self.steps: list[tuple[int, int, float]] = []

    def submit(self, prompt_tokens: int, n: int) -> "queue.Queue[int]":
        q: "queue.Queue[int]" = queue.Queue()
        with self.cv:
            self.pending.append([prompt_tokens, n, q])
            self.cv.notify()
        return q

    def stop(self) -> None:
        with self.cv:
            self.stopped = True
            self.cv.notify()

    def run(self) -> None:
        # Iterations run back to back on absolute deadlines: a late wake-up (GIL,
        # a busy machine) shortens the next iteration instead of shifting all later ones.
        active: list[list[Any]] = []
        boundary = 0.0
        while True:
            with self.cv:
                idle = not self.pending and not active
                while not self.pending and not active and not self.stopped:
                    self.cv.wait(0.5)
                if self.stopped:
                    return
                room = max(0, self.max_streams - len(active))
                new, self.pending[:room] = self.pending[:room], []
            start = time.monotonic() if idle else boundary
            step = (self.step_s + self.per_stream_s * len(active)
                    + self.per_prompt_token_s * sum(s[0] for s in new))
            boundary = start + step
            self.steps.append((len(active), sum(s[0] for s in new), step))
            delay = boundary - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            self.iterations += 1
            active.extend(new)
            still = []
            for s in active:
                s[1] -= 1
                s[2].put(s[1])
                if s[1] > 0:
                    still.append(s)
            active = still


class PacedServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self,
        port: int,
        ttft_s: float,
        itl_s: float,
        model: str,
        count_tokens: Callable[[str], int],
        token_text: str,
        verbose: bool = False,
    ) -> None:
        super().__init__((HOST, port), Handler)
        self.ttft_s = ttft_s
        self.itl_s = itl_s
        self.model = model
        self.count_tokens = count_tokens
        self.token_text = token_text
        self.verbose = verbose
        self.requests_served = 0
        self._lock = threading.Lock()
        self.engine: BatchingEngine | None = None

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def served(self) -> None:
        with self._lock:
            self.requests_served += 1


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: PacedServer

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        if self.server.verbose:
            sys.stderr.write("fake_server: " + (format % args) + "\n")

    # ---- helpers -----------------------------------------------------------
    def _send_json(self, status: int, obj: Any) -> None:
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def _event(self, obj: Any) -> None:
        payload = obj if isinstance(obj, str) else json.dumps(obj)
        self._chunk(b"data: " + payload.encode() + b"\n\n")

    def _read_json(self) -> dict[str, Any] | None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            obj = json.loads(raw or b"{}")
        except ValueError:
            return None
        return obj if isinstance(obj, dict) else None

    # ---- GET ---------------------------------------------------------------
    def do_GET(self) -> None:  # noqa: N802
        path = self.path.split("?", 1)[0].rstrip("/")
        if path in ("/health", "/v1/health", "/ping"):
            self._send_json(200, {"status": "ok"})
        elif path == "/v1/models":
            self._send_json(200, {"object": "list", "data": [
                {"id": self.server.model, "object": "model", "created": 0,
                 "owned_by": "budgetlint-tests", "max_model_len": 32768}]})
        else:
            self._send_json(404, {"error": {"message": f"no route {path}"}})

    # ---- POST --------------------------------------------------------------
    def do_POST(self) -> None:  # noqa: N802
        t0 = time.monotonic()
        path = self.path.split("?", 1)[0].rstrip("/")
        body = self._read_json()
        if body is None:
            self._send_json(400, {"error": {"message": "body is not a JSON object"}})
            return
        if path == "/v1/completions":
            chat = False
            prompt_tokens = self._count_prompt(body.get("prompt", ""))
        elif path == "/v1/chat/completions":
            chat = True
            prompt_tokens = self._count_messages(body.get("messages") or [])
        else:
            self._send_json(404, {"error": {"message": f"no route {path}"}})
            return
        n = body.get("max_completion_tokens") or body.get("max_tokens") or DEFAULT_MAX_TOKENS
        try:
            n = max(1, int(n))
        except (TypeError, ValueError):
            n = DEFAULT_MAX_TOKENS
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": n,
                 "total_tokens": prompt_tokens + n}
        stream_options = body.get("stream_options") or {}
        include_usage = bool(stream_options.get("include_usage"))
        try:
            if body.get("stream"):
                self._stream(t0, n, chat, usage, include_usage)
            else:
                self._whole(t0, n, chat, usage)
        except (BrokenPipeError, ConnectionResetError):
            return
        self.server.served()

    def _count_prompt(self, prompt: Any) -> int:
        if isinstance(prompt, list):
            if prompt and all(isinstance(t, int) for t in prompt):
                return len(prompt)
            prompt = prompt[0] if prompt else ""
            if isinstance(prompt, list):
                return len(prompt)
        return self.server.count_tokens(str(prompt))

    def _count_messages(self, messages: list[Any]) -> int:
        texts = []
        for m in messages:
            content = m.get("content") if isinstance(m, dict) else m
            if isinstance(content, list):  # [{"type": "text", "text": ...}]
                content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
            texts.append(str(content or ""))
        return self.server.count_tokens("".join(texts))

    def _head(self, chat: bool) -> dict[str, Any]:
        return {
            "id": ("chatcmpl-" if chat else "cmpl-") + uuid.uuid4().hex[:16],
            "object": "chat.completion.chunk" if chat else "text_completion",
            "created": int(time.time()),
            "model": self.server.model,
        }

    def _wait_until(self, deadline: float) -> None:
        delay = deadline - time.monotonic()
        if delay > 0:
            time.sleep(delay)

    def _stream(self, t0: float, n: int, chat: bool, usage: dict[str, int],
                include_usage: bool) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        head = self._head(chat)
        text = self.server.token_text
        engine = self.server.engine
        tokens = engine.submit(usage["prompt_tokens"], n) if engine is not None else None
        for i in range(n):
            if tokens is not None:
                tokens.get()
            else:
                self._wait_until(t0 + self.server.ttft_s + i * self.server.itl_s)
            last = i == n - 1
            if chat:
                delta: dict[str, Any] = {"content": text}
                if i == 0:
                    delta = {"role": "assistant", "content": text}
                choice: dict[str, Any] = {"index": 0, "delta": delta, "logprobs": None,
                                          "finish_reason": "length" if last else None}
            else:
                choice = {"index": 0, "text": text, "logprobs": None,
                          "finish_reason": "length" if last else None}
            chunk = dict(head, choices=[choice])
            if include_usage:
                chunk["usage"] = None
            self._event(chunk)
        if include_usage:
            self._event(dict(head, choices=[], usage=usage))
        self._event("[DONE]")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _whole(self, t0: float, n: int, chat: bool, usage: dict[str, int]) -> None:
        engine = self.server.engine
        if engine is not None:
            tokens = engine.submit(usage["prompt_tokens"], n)
            for _ in range(n):
                tokens.get()
        else:
            self._wait_until(t0 + self.server.ttft_s + (n - 1) * self.server.itl_s)
        text = self.server.token_text * n
        head = self._head(chat)
        if chat:
            head["object"] = "chat.completion"
            choice: dict[str, Any] = {"index": 0, "finish_reason": "length", "logprobs": None,
                                      "message": {"role": "assistant", "content": text}}
        else:
            choice = {"index": 0, "text": text, "finish_reason": "length", "logprobs": None}
        self._send_json(200, dict(head, choices=[choice], usage=usage))


def make_server(
    port: int = 0,
    ttft_ms: float = 100.0,
    itl_ms: float = 20.0,
    model: str = "tiny-model",
    tokenizer_dir: str | None = None,
    verbose: bool = False,
    batch: tuple[float, float, float, int] | None = None,
) -> PacedServer:
    """``batch``: (A ms, B ms per stream, C ms per prompt token, max streams) for batching mode;
    the caller starts ``server.engine`` (and stops it)."""
    count, _ = load_token_counter(tokenizer_dir)
    server = PacedServer(port, ttft_ms / 1000.0, itl_ms / 1000.0, model, count,
                         pick_token_text(count), verbose)
    if batch is not None:
        a, b, c, most = batch
        server.engine = BatchingEngine(a / 1000.0, b / 1000.0, c / 1000.0, most)
    return server


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, default=0, help="0 = a free port (default)")
    ap.add_argument("--ttft-ms", type=float, default=100.0)
    ap.add_argument("--itl-ms", type=float, default=20.0)
    ap.add_argument("--max-seconds", type=float, default=300.0,
                    help="stop by itself after this many seconds (default 300)")
    ap.add_argument("--model", default="tiny-model")
    ap.add_argument("--tokenizer", default=None,
                    help="directory with tokenizer.json, to count prompt tokens")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--batch-step-ms", type=float, default=None,
                    help="batching mode: the fixed part A of an iteration (module doc)")
    ap.add_argument("--batch-per-stream-ms", type=float, default=0.0,
                    help="batching mode: B, added per stream already decoding")
    ap.add_argument("--batch-prompt-token-ms", type=float, default=0.0,
                    help="batching mode: C, added per prompt token of a newcomer")
    ap.add_argument("--batch-max-streams", type=int, default=1024)
    args = ap.parse_args(argv)

    count, how = load_token_counter(args.tokenizer)
    token_text = pick_token_text(count)
    if args.batch_step_ms is not None:
        sys.setswitchinterval(0.0005)  # the engine thread must get the GIL back promptly
    server = PacedServer(args.port, args.ttft_ms / 1000.0, args.itl_ms / 1000.0,
                         args.model, count, token_text, args.verbose)
    if args.batch_step_ms is not None:
        server.engine = BatchingEngine(args.batch_step_ms / 1000.0, args.batch_per_stream_ms / 1000.0,
                                       args.batch_prompt_token_ms / 1000.0, args.batch_max_streams)
        server.engine.start()

    def stop(*_: Any) -> None:
        if server.engine is not None:
            server.engine.stop()
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    lifetime = threading.Timer(args.max_seconds, stop)
    lifetime.daemon = True
    lifetime.start()
    # Last resort: whatever happens, the process is gone shortly after its lifetime.
    hard = threading.Timer(args.max_seconds + 10.0, lambda: os._exit(3))
    hard.daemon = True
    hard.start()

    print(f"LISTENING http://{HOST}:{server.port}", flush=True)
    mode = (f"batching A={args.batch_step_ms} ms B={args.batch_per_stream_ms} ms/stream "
            f"C={args.batch_prompt_token_ms} ms/prompt token max_streams={args.batch_max_streams}"
            if server.engine is not None else f"ttft={args.ttft_ms} ms itl={args.itl_ms} ms")
    sys.stderr.write(
        f"fake_server: {mode} model={args.model} "
        f"tokens={how} token_text={token_text!r} max_seconds={args.max_seconds}\n")
    sys.stderr.flush()
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
        lifetime.cancel()
        iterations = f", {server.engine.iterations} iterations" if server.engine is not None else ""
        sys.stderr.write(f"fake_server: stopped after {server.requests_served} requests{iterations}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
