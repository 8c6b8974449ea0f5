"""A Prometheus URL that answers slowly, or not at all, cannot hold the run (stop 47).

The socket timeout (10 s) is per read: a server that sent a byte every few seconds held `check
--prometheus` for as long as it liked, and a server that never answered cost each budget its own
timeouts. Now one query takes at most its deadline from connection to last byte, and once the server
has not answered, the later budgets are told so without another query. Local servers on 127.0.0.1,
with the deadlines shortened so that the test is quick; the counts, not the clock, are asserted.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Iterator

import pytest

from budgetlint.evaluate import prometheus_live as live


def _serve(handler) -> Iterator[tuple[str, list]]:  # type: ignore[no-untyped-def]
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    accepted: list = []
    stop = threading.Event()

    def loop() -> None:
        sock.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except OSError:
                continue
            accepted.append(conn)
            threading.Thread(target=handler, args=(conn, stop), daemon=True).start()

    t = threading.Thread(target=loop, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}", accepted
    finally:
        stop.set()
        t.join(2)
        for c in accepted:
            c.close()
        sock.close()


def _trickle(conn: socket.socket, stop: threading.Event) -> None:
    """HTTP headers at once, then one byte of a body every 0.05 s, for ever."""
    try:
        conn.recv(4096)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n")
        while not stop.is_set():
            conn.sendall(b" ")
            time.sleep(0.05)
    except OSError:
        pass


def _silent(conn: socket.socket, stop: threading.Event) -> None:
    """Accepts and never answers."""
    stop.wait(30)


@pytest.fixture()
def trickling() -> Iterator[tuple[str, list]]:
    yield from _serve(_trickle)


@pytest.fixture()
def silent() -> Iterator[tuple[str, list]]:
    yield from _serve(_silent)


def test_an_answer_that_never_ends_is_cut_at_the_deadline(trickling: tuple[str, list]) -> None:
    url, _ = trickling
    start = time.monotonic()
    with pytest.raises(live.QueryError) as got:
        live.query(url, "up", timeout=5.0, deadline_s=0.5)
    assert "took more than 500 ms to answer" in str(got.value) and got.value.unreachable
    assert time.monotonic() - start < 5.0  # each read was well inside its 5 s timeout: the deadline cut it


class _Budget:
    def __init__(self, name: str) -> None:
        self.name = name


def test_a_server_that_does_not_answer_is_asked_once_a_run(silent: tuple[str, list],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from budgetlint.evaluate import slo

    url, accepted = silent
    source = live.LiveSource(url, timeout=0.3)

    class _Metric:
        name = "vllm:time_to_first_token_seconds"

    class _Indicator:
        metric = _Metric()

    class _Plan:
        indicators = [_Indicator()]
        selectors: dict = {}

    monkeypatch.setattr(slo, "plan", lambda budget: _Plan())
    for name in ("a", "b", "c"):
        assert source.links(_Budget(name), None, None) == ()
    assert len(accepted) == 1  # until stop 47: one connection a query, two queries a budget: 6
    words = [why for _, why in source.problems]
    assert words[0].startswith(f"cannot reach {url}: ") and "timed out" in words[0]
    assert words[1:] == [words[0] + " (not asked again in this run)"] * 2
