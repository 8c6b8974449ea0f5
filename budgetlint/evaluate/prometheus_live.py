"""``check --prometheus URL [--window 7d]``: a live Prometheus server as production evidence.

For each budget, one instant query per engine histogram its SLOs use
(evaluate/slo.py), over the window:

    sum by (le) (increase(<histogram>_bucket{<slo.selectors>}[<window>]))

The answer becomes a production measurement (bench/prometheus.py) linked to
the budget like a `bench:` file (its freshness is today's), and is judged
as a saved scrape is (evaluate/production.py). Plain ``urllib``: no new
dependency. A server that does not answer is a problem the run reports
(BL606), never a traceback.
"""

from __future__ import annotations

import json
import math
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any

from budgetlint.findings import Location
from budgetlint.text import numbers

TIMEOUT_S = 10.0
#: the most one query may take from its connection to the answer's last byte: the socket timeout above is
#: per read, so a server that sent a byte every 9 s held the run for as long as it liked (until stop 47)
ANSWER_DEADLINE_S = 30.0
MAX_ANSWER_BYTES = 8 * 1024 * 1024
_CHUNK = 64 * 1024


class QueryError(Exception):
    """A query that failed; ``unreachable``: the server did not answer at all (so no other query is sent)."""

    def __init__(self, message: str, unreachable: bool = False) -> None:
        super().__init__(message)
        self.unreachable = unreachable


def query(url: str, promql: str, timeout: float = TIMEOUT_S, deadline_s: float = ANSWER_DEADLINE_S) -> list[dict]:
    """The ``data.result`` of one instant query; QueryError on any failure (with why)."""
    full = url.rstrip("/") + "/api/v1/query?" + urllib.parse.urlencode({"query": promql})
    start = time.monotonic()
    try:
        with urllib.request.urlopen(full, timeout=timeout) as resp:  # noqa: S310 - the user's own server
            parts: list[bytes] = []
            size = 0
            while size <= MAX_ANSWER_BYTES:
                if time.monotonic() - start > deadline_s:
                    raise QueryError(f"{url} took more than {numbers.quantity(deadline_s, 's')} to answer (the answer "
                                     "is not read)", unreachable=True)
                part = resp.read1(_CHUNK)  # what has come, up to a chunk: the deadline is checked between
                if not part:
                    break
                parts.append(part)
                size += len(part)
            raw = b"".join(parts)
    except urllib.error.HTTPError as exc:
        body = exc.read(2000).decode("utf-8", "replace") if hasattr(exc, "read") else ""
        raise QueryError(f"HTTP {exc.code} from {url}: {body.strip()[:300]}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise QueryError(f"cannot reach {url}: {getattr(exc, 'reason', exc)}", unreachable=True) from None
    if len(raw) > MAX_ANSWER_BYTES:
        raise QueryError(f"the answer from {url} is over {MAX_ANSWER_BYTES} bytes")
    try:
        doc = json.loads(raw)
    except ValueError:
        raise QueryError(f"{url} did not answer with JSON (is it a Prometheus server?)") from None
    if not isinstance(doc, dict) or doc.get("status") != "success":
        raise QueryError(f"{url}: query failed: {str(doc.get('error') if isinstance(doc, dict) else doc)[:300]}")
    result = doc.get("data", {}).get("result") if isinstance(doc.get("data"), dict) else None
    if not isinstance(result, list):
        raise QueryError(f"{url}: the answer has no data.result list")
    return result


def promql_for(metric: str, selectors: dict[str, str], window: str) -> str:
    inner = ",".join(f'{k}="{v.replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"'
                     for k, v in sorted(selectors.items()))
    return f"sum by (le) (increase({metric}_bucket{{{inner}}}[{window}]))"


@dataclass
class LiveSource:
    url: str
    window: str = "7d"
    timeout: float = TIMEOUT_S
    problems: list[tuple[str, str]] = field(default_factory=list)  # (budget, why)
    _cache: dict = field(default_factory=dict)
    #: why the server did not answer, once it did not: later budgets are told so without another query
    #: (until stop 47 each budget waited out its own timeouts: 100 budgets against a server that does not
    #: answer, 100 x 2 x 10 s)
    _down: str | None = None

    def problems_for(self, name: str) -> tuple[tuple[str, str], ...]:
        return tuple(("--prometheus", why) for b, why in self.problems if b == name)

    def links(self, budget: Any, today: Any, defaults: Any) -> tuple[Any, ...]:
        from budgetlint.bench.prometheus import from_buckets
        from budgetlint.evaluate.evidence.linking import new_link
        from budgetlint.evaluate.evidence.store import BenchFile
        from budgetlint.evaluate.slo import plan

        p = plan(budget)
        buckets: dict[str, dict[float, float]] = {}
        for ind in p.indicators:
            if ind.metric is None or ind.metric.name in buckets:
                continue
            from budgetlint.model.engine_metrics import escaped

            result: list[dict] = []
            for name in (ind.metric.name, escaped(ind.metric.name)):  # as exposed, then as escaped on the way
                promql = promql_for(name, p.selectors, self.window)
                if self._down is not None:
                    self.problems.append((budget.name, f"{self._down} (not asked again in this run)"))
                    return ()
                try:
                    result = self._cache[promql] if promql in self._cache else query(self.url, promql, self.timeout)
                except QueryError as exc:
                    if exc.unreachable:
                        self._down = str(exc)
                    self.problems.append((budget.name, str(exc)))
                    return ()
                self._cache[promql] = result
                if result:
                    break
            per: dict[float, float] = {}
            for series in result:
                try:
                    le = float(str(series["metric"]["le"]).replace("+Inf", "inf"))
                    value = float(series["value"][1])
                except (KeyError, TypeError, ValueError, IndexError):
                    continue
                if math.isfinite(value) and value >= 0 and not math.isnan(le):
                    per[le] = per.get(le, 0.0) + value
            if per:
                buckets[ind.metric.name] = per
        display = f"{self.url} (last {self.window})"
        measurements, ctx = from_buckets(display, buckets, f"a live Prometheus query over {self.window}")
        if not measurements:
            self.problems.append((budget.name, f"{display}: no observations of "
                                  + ", ".join(sorted({i.metric.name for i in p.indicators if i.metric}))
                                  + (f" with {p.selectors}" if p.selectors else "")))
            return ()
        import datetime as dt
        from dataclasses import replace

        now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        measurements = [replace(m, provenance=replace(m.provenance, date=now)) for m in measurements]
        bf = BenchFile(display, measurements, list(ctx.problems))
        on = today or dt.date.today()
        return tuple(new_link(budget, bf, m, f"--prometheus {self.url}", Location(display, 1, 1), True, [],
                               (on, defaults)) for m in measurements)
