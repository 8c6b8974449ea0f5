"""``html``: one self-contained page with charts (``--format html -o report.html``).

Inline CSS and SVG, no network fetch of any kind (a Content-Security-Policy
forbids it), readable without JavaScript (a few lines of it make the summary
table sortable). It renders the JSON report (``Report.as_dict()``, with
non-finite numbers as ``null`` exactly as the ``json`` format writes them),
so every number on the page is a number of the JSON report:

* a summary: the counts, budgets by verdict and owner, a headroom chart and
  a table of the budgets, failing first, then smallest (judged) headroom first; the errors and warnings;
* per budget (in the same order) a card: owner, percentile, each promise
  with its bound, estimate, measured value and headroom; a roofline chart
  (``analysis.bound`` / ``analysis.realistic``: arithmetic intensity against
  attainable FLOP/s, the decode and prefill points); a latency waterfall per
  promise (queue, connection, prefill, decode, proxy flush) against the
  promise line; the memory per device against what is available;
* with traffic (``load`` in the budget or its analysis): the predicted
  latency CDF per promise (``load.predicted.<promise>_s.p50..p99``) with the
  declared percentile, the promise and the measured percentile marked, and
  the capacity curve (``load.curve``: ``[{"request_per_s": r, "ttft_s": ..}]``,
  latency at the declared percentile) with ``load.arrival_rate_request_per_s``
  and ``load.capacity_request_per_s`` marked.

Each chart has a ``<title>``/``<desc>`` and its numbers in a table beside it.
Cards with charts are drawn for the first :data:`MAX_CARDS` budgets (smallest
headroom first); the summary table lists every budget.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterable
from xml.sax.saxutils import escape, quoteattr

from budgetlint.report import BudgetResult, Report
from budgetlint.reporters.wording import (TOOL_NAME, analysis_value, assumed_efficiency_words, calibration_words, cost_words, format_quantity, promise_rows,
                                          worst_first)
from budgetlint.reporters.wording import estimate_value, format_headroom_cell, judged, judged_headroom, measured_value
from budgetlint.reporters.wording import smallest_judged_headroom
from budgetlint.reporters.wording import smallest_headroom as _smallest
from budgetlint.reporters.svg import (
    PALETTE,
    VERDICT_COLOURS,
    Axis,
    BarRow,
    Rule,
    Series,
    axis_for,
    bar_chart,
    format_value,
    xy_chart,
)
from budgetlint.text import numbers

#: budgets drawn as cards with charts (the summary table lists them all)
MAX_CARDS = 200

VERDICT_ORDER = ("cannot-be-met", "at-risk", "not-shown", "unknown", "met")
VERDICT_WORDS = {"cannot-be-met": "cannot be met", "at-risk": "at risk", "not-shown": "not shown", "unknown": "unknown",
                 "met": "met"}
#: a budget's status: its worst finding after suppressions and policy (``budgets[].status``)
STATUS_ORDER = ("fail", "warn", "pass")
STATUS_WORDS = {"fail": "fail", "warn": "warn", "pass": "pass"}
_RANK = {v: i for i, v in enumerate(VERDICT_ORDER)}
#: reports written before compute was left unknown (``compute_known``) carried this stand-in peak
_UNLIMITED = 1e29

#: (promise, SI key, unit) for the latency promises the physics speaks for
LATENCY_PROMISES = (("ttft", "ttft_s", "s"), ("tpot", "tpot_s", "s"), ("e2e", "e2e_s", "s"))
PERCENTILES = ("p50", "p90", "p95", "p99")

CSS = """
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; color: #111; background: #f6f6f4; }
header, main { max-width: 1180px; margin: 0 auto; padding: 0 20px; }
header { padding-top: 18px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 28px 0 8px; }
h3 { font-size: 16px; margin: 0; }
h4 { font-size: 14px; margin: 14px 0 6px; }
.sub { color: #444; margin: 0 0 10px; }
table { border-collapse: collapse; background: #fff; margin: 4px 0 10px; }
th, td { border: 1px solid #d6d6d6; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #eeeeea; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.badge { display: inline-block; padding: 0 7px; border-radius: 9px; font-size: 12px; font-weight: 600; color: #000; white-space: nowrap; }
.v-met { background: #bfe7da; } .v-at-risk { background: #f7dca0; }
.v-cannot-be-met { background: #f3c1a3; } .v-unknown, .v-not-shown { background: #dddddd; }
.s-fail { background: #f3c1a3; } .s-warn { background: #f7dca0; } .s-pass { background: #bfe7da; }
.card { background: #fff; border: 1px solid #d6d6d6; border-radius: 6px; padding: 12px 16px; margin: 14px 0; }
.card-head { display: flex; gap: 12px; align-items: baseline; flex-wrap: wrap; }
.meta { color: #444; font-size: 13px; }
figure.chart { display: flex; flex-wrap: wrap; gap: 12px; align-items: flex-start; margin: 8px 0 14px; }
figure.chart figcaption { flex-basis: 100%; font-weight: 600; }
figure.chart table { font-size: 12px; }
svg.bl-chart { background: #fff; border: 1px solid #e0e0e0; max-width: 100%; height: auto; }
.note { color: #5a4a00; background: #fff8d6; border-left: 4px solid #E69F00; padding: 4px 10px; margin: 6px 0; }
.summary-grid { display: flex; flex-wrap: wrap; gap: 24px; align-items: flex-start; }
th[data-sort] { cursor: pointer; }
a { color: #0058a0; }
footer { max-width: 1180px; margin: 30px auto; padding: 0 20px; color: #666; font-size: 12px; }
"""

# progressive: sorts the summary table by a column when its header is clicked
SCRIPT = """
document.querySelectorAll('table.sortable th[data-sort]').forEach(function (th, col) {
  th.addEventListener('click', function () {
    var body = th.closest('table').tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var dir = th.getAttribute('data-dir') === 'asc' ? -1 : 1;
    th.setAttribute('data-dir', dir === 1 ? 'asc' : 'desc');
    rows.sort(function (a, b) {
      var x = a.cells[col].getAttribute('data-key') || a.cells[col].textContent;
      var y = b.cells[col].getAttribute('data-key') || b.cells[col].textContent;
      var nx = parseFloat(x), ny = parseFloat(y);
      if (!isNaN(nx) && !isNaN(ny)) { return dir * (nx - ny); }
      return dir * x.localeCompare(y);
    });
    rows.forEach(function (r) { body.appendChild(r); });
  });
});
"""

CSP = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; "
       "base-uri 'none'; form-action 'none'")


#: findings listed on the page, per group (errors and warnings; infos): the JSON and SARIF have them all
MAX_FINDINGS = 1000


def render(report: Report, *, color: bool = False) -> str:
    """The page for ``report``: the numbers of ``Report.as_dict()``. Only the
    budgets drawn as cards are expanded whole (their two ``Analysis``
    objects); the summary needs their top-level analysis keys alone."""
    from budgetlint import __version__
    from budgetlint.findings import Severity
    from budgetlint.reporters.json_report import _finite

    light, whole = [], {}
    for b in report.sorted_budgets():
        d = _finite({"name": b.name, "file": b.file, "line": b.line, "owner": b.owner, "percentile": b.percentile,
                     "promises": dict(b.promises), "verdicts": dict(b.verdicts),
                     "judgement": dict(b.judgement), "status": b.status or "pass",
                     "analysis": {k: v for k, v in b.analysis.items() if not hasattr(v, "as_dict")}})
        light.append(d)
        whole[id(d)] = b
    problems, infos = [], []
    for f in worst_first(report.sorted_findings()):  # errors before warnings: those are what a capped list keeps
        group = problems if f.severity >= Severity.WARNING else infos
        if len(group) < MAX_FINDINGS:
            group.append(_finite(f.as_dict()))
    data = {"version": 1, "tool": {"name": TOOL_NAME, "version": __version__}, "summary": report.summary(),
            "findings": problems + infos, "budgets": light}
    if getattr(report, "history", None):
        data["history"] = report.history
    return render_dict(data, expand=lambda d: _finite(whole[id(d)].as_dict()) if id(d) in whole else d)


# --------------------------------------------------------------------------- helpers

def _escape(text: object) -> str:
    return escape("" if text is None else str(text))


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _budget_result(b: dict) -> BudgetResult:
    return BudgetResult(name=str(b.get("name", "")), file=str(b.get("file", "")), line=int(b.get("line") or 1),
                        owner=b.get("owner"), percentile=b.get("percentile"),
                        promises=dict(b.get("promises") or {}), analysis=dict(b.get("analysis") or {}),
                        verdicts=dict(b.get("verdicts") or {}), judgement=dict(b.get("judgement") or {}),
                        status=b.get("status"))


def worst_verdict(b: dict) -> str:
    verdicts = [v for v in (b.get("verdicts") or {}).values() if v in _RANK]
    return min(verdicts, key=_RANK.__getitem__) if verdicts else "unknown"


def smallest_headroom(b: dict) -> tuple[str | None, float | None]:
    """The promise with the smallest judged headroom (``judgement.<promise>.headroom``) and that
    headroom; the analysis's ``headroom_<promise>`` for a report without a judgement."""
    if b.get("judgement"):
        return smallest_judged_headroom(_budget_result(b))
    return _smallest(b.get("analysis") or {})


def status_of(b: dict) -> str:
    s = b.get("status")
    return s if s in STATUS_ORDER else "pass"


def _status_badge(status: str) -> str:
    return f'<span class="badge s-{status}" title="worst finding after suppressions and policy">{_escape(status)}</span>'


def _colour(verdict: str) -> str:
    return VERDICT_COLOURS.get(verdict, VERDICT_COLOURS["unknown"])


def _order(budgets: list[dict]) -> list[dict]:
    """Smallest headroom first; budgets without any headroom after, worst verdict first."""
    def key(b: dict) -> tuple:
        _, h = smallest_headroom(b)
        return (STATUS_ORDER.index(status_of(b)), h is None, h if h is not None else 0.0, _RANK[worst_verdict(b)],
                str(b.get("file")), b.get("line") or 0, str(b.get("name")))
    return sorted(budgets, key=key)


def _badge(verdict: str | None) -> str:
    v = verdict if verdict in _RANK else "unknown"
    return f'<span class="badge v-{v}">{_escape(VERDICT_WORDS.get(verdict or "", verdict or "—"))}</span>'


def _table(header: list[str], rows: Iterable[list[str]], *, cls: str = "", numeric: Iterable[int] = ()) -> str:
    nums = set(numeric)
    out = [f'<table class="{cls}">' if cls else "<table>", "<thead><tr>"]
    out += [f"<th>{h}</th>" for h in header]
    out.append("</tr></thead><tbody>")
    for row in rows:
        out.append("<tr>" + "".join(f'<td class="num">{c}</td>' if i in nums else f"<td>{c}</td>"
                                    for i, c in enumerate(row)) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _figure(caption: str, svg: str, table: str, chart_id: str) -> str:
    return (f'<figure class="chart" id="fig-{chart_id}"><figcaption>{_escape(caption)}</figcaption>{svg}'
            f'<div class="data">{table}</div></figure>')


def _value_cell(value: float | None, unit: str) -> str:
    return "—" if value is None else _escape(format_value(value, unit))


# --------------------------------------------------------------------------- summary

def _summary(data: dict, ordered: list[dict], anchors: dict[int, str]) -> str:
    s = data.get("summary") or {}
    out = ['<section id="summary"><h2>Summary</h2>']
    counts = {v: 0 for v in VERDICT_ORDER}
    statuses = {v: 0 for v in STATUS_ORDER}
    by_owner: dict[str, dict[str, int]] = {}
    for b in ordered:
        v = worst_verdict(b)
        counts[v] += 1
        statuses[status_of(b)] += 1
        owner = b.get("owner") or "(no owner)"
        row = by_owner.setdefault(owner, {k: 0 for k in (*STATUS_ORDER, *VERDICT_ORDER)})
        row[v] += 1
        row[status_of(b)] += 1
    out.append('<div class="summary-grid"><div>')
    out.append("<h4>Budgets by status (the worst finding of each, after suppressions and policy)</h4>")
    out.append(_table(["Status", "Budgets"], ([_status_badge(v), str(statuses[v])] for v in STATUS_ORDER),
                      cls="bl-status-counts", numeric=[1]))
    out.append("<h4>Budgets by verdict (each budget counted at its worst promise)</h4>")
    out.append(_table(["Verdict", "Budgets"], ([_badge(v), str(counts[v])] for v in VERDICT_ORDER),
                      cls="bl-verdict-counts", numeric=[1]))
    out.append("<h4>By owner</h4>")
    cols = (*STATUS_ORDER, *VERDICT_ORDER)
    header = ["Owner"] + [_status_badge(v) for v in STATUS_ORDER] + [_badge(v) for v in VERDICT_ORDER]
    out.append(_table(header, ([_escape(o)] + [str(c[v]) for v in cols] for o, c in sorted(by_owner.items())),
                      cls="bl-owner-counts", numeric=list(range(1, len(cols) + 1))))
    out.append("</div><div>")
    out.append(_headroom_chart(ordered))
    out.append("</div></div>")

    out.append("<h4>Budgets: failing first, then warnings, each smallest headroom first</h4>")
    rows = []
    for i, b in enumerate(ordered):
        promise, h = smallest_headroom(b)
        name = _escape(b.get("name"))
        link = f'<a href="#{anchors[i]}">{name}</a>' if i in anchors else name
        rows.append([
            link, _escape(b.get("owner") or "—"), _escape(b.get("percentile") or "—"), _escape(promise or "—"),
            f'<span data-key="{repr(h) if h is not None else "Infinity"}">'
            f'{_escape(format_headroom_cell(h))}</span>',
            _badge(worst_verdict(b)), _status_badge(status_of(b)), _escape(f"{b.get('file')}:{b.get('line')}"),
        ])
    out.append(_sortable(["Budget", "Owner", "Percentile", "Tightest promise", "Headroom", "Verdict", "Status", "Where"],
                         rows))
    out.append(f'<p class="sub">{_escape(s.get("files", 0))} files, {_escape(s.get("budgets", 0))} budgets; '
               f'{_escape(s.get("errors", 0))} errors, {_escape(s.get("warnings", 0))} warnings, '
               f'{_escape(s.get("infos", 0))} infos, {_escape(s.get("suppressed", 0))} suppressed.</p>')
    out.append("</section>")
    return "".join(out)


def _sortable(header: list[str], rows: list[list[str]]) -> str:
    out = ['<table class="sortable bl-budgets"><thead><tr>']
    out += [f'<th data-sort="1">{h}</th>' for h in header]
    out.append("</tr></thead><tbody>")
    for row in rows:
        cells = []
        for i, c in enumerate(row):
            key = ""
            if c.startswith('<span data-key="'):
                key = f' data-key="{c.split(chr(34))[1]}"'
            cells.append(f'<td{key}{" class=num" if i == 4 else ""}>{c}</td>')
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


HEADROOM_CHART_LIMIT = 40


def _headroom_chart(ordered: list[dict]) -> str:
    shown = [(b, *smallest_headroom(b)) for b in ordered]
    shown = [(b, p, h) for b, p, h in shown if h is not None][:HEADROOM_CHART_LIMIT]
    if not shown:
        return '<p class="note">No budget has a computed headroom: nothing to chart.</p>'
    axis = axis_for([h for _, _, h in shown] + [0.0], "headroom of the tightest promise", "%")
    rows = [BarRow(f"{b.get('name')} ({p})", [("headroom", 0.0, h, _colour(worst_verdict(b)))])
            for b, p, h in shown]
    svg = bar_chart(chart_id="headroom", title="Headroom per budget, smallest first",
                    desc=("Each bar is a budget's smallest headroom on its judged basis (promise / the value that "
                          "decided its verdict - 1, docs/judgement.md); negative means that value is over the "
                          "promise. The table beside lists the numbers."),
                    x=axis, rows=rows, rules=[Rule("x", 0.0, "", PALETTE["black"], dash=False)],
                    legend=[(VERDICT_WORDS[v], _colour(v)) for v in VERDICT_ORDER])
    table = _table(["Budget", "Promise", "Headroom"],
                   ([_escape(b.get("name")), _escape(p), _escape(format_headroom_cell(h))] for b, p, h in shown), numeric=[2])
    more = len([b for b in ordered if smallest_headroom(b)[1] is not None]) - len(shown)
    tail = f'<p class="sub">{more} more budgets are in the table below.</p>' if more > 0 else ""
    return _figure("Headroom per budget", svg, table, "headroom") + tail


def _findings(data: dict) -> str:
    s = data.get("summary") or {}
    findings = [f for f in data.get("findings") or [] if f.get("severity") in ("error", "warning")]
    infos = [f for f in data.get("findings") or [] if f.get("severity") not in ("error", "warning")]
    findings.sort(key=lambda f: 0 if f.get("severity") == "error" else 1)
    findings, infos = findings[:MAX_FINDINGS], infos[:MAX_FINDINGS]
    out = ['<section id="findings"><h2>Findings</h2>']
    if not findings:
        out.append("<p>No errors or warnings.</p>")
    else:
        out.append(_finding_table(findings))
    more = (s.get("errors", 0) or 0) + (s.get("warnings", 0) or 0) - len(findings)
    if more > 0:
        out.append(f'<p class="note">{more} more errors and warnings are not listed here: the JSON and SARIF '
                   "outputs have all of them.</p>")
    if infos:
        total = max(s.get("infos", 0) or 0, len(infos))
        tail = f" (the first {len(infos)})" if total > len(infos) else ""
        out.append(f"<details><summary>{total} informational findings{tail}</summary>"
                   f"{_finding_table(infos)}</details>")
    out.append("</section>")
    return "".join(out)


def _finding_table(findings: list[dict]) -> str:
    def where(f: dict) -> str:
        if not f.get("file"):
            return "—"
        return f"{f.get('file')}:{f.get('line')}:{f.get('column')}"

    def message(f: dict) -> str:
        text = _escape(f.get("message"))
        return text + (f"<br><em>help:</em> {_escape(f['fix'])}" if f.get("fix") else "")

    return _table(["Severity", "Rule", "Where", "Budget", "Message"],
                  ([_escape(f.get("severity")), f"<code>{_escape(f.get('rule'))}</code>", _escape(where(f)),
                    _escape(f.get("budget") or "—"), message(f)] for f in findings))


# --------------------------------------------------------------------------- per budget

def _card(b: dict, anchor: str, index: int, history: list | None = None) -> str:
    br = _budget_result(b)
    analysis = b.get("analysis") or {}
    out = [f'<section class="card budget" id="{anchor}" data-budget={quoteattr(str(b.get("name")))}>',
           f'<div class="card-head"><h3>{_escape(b.get("name"))}</h3>{_badge(worst_verdict(b))}'
           f'{_status_badge(status_of(b))}'
           f'<span class="meta">owner {_escape(b.get("owner") or "—")} · {_escape(b.get("percentile") or "no percentile")} · '
           f'{_escape(b.get("file"))}:{_escape(b.get("line"))}</span></div>']
    bound, real = analysis.get("bound"), analysis.get("realistic")
    if isinstance(bound, dict):
        serving = f'{_escape(analysis["model"])} on ' if isinstance(analysis.get("model"), str) else ""
        hardware = f' {_escape(analysis["hardware"])}' if isinstance(analysis.get("hardware"), str) else ""
        out.append(f'<p class="meta">{serving}{_escape(bound.get("devices"))}{hardware} {numbers.plural(bound.get("devices"), "device")} at '
                   f'{_escape(bound.get("compute_precision_key"))}, '
                   f'{_escape(bound.get("concurrency"))} {numbers.plural(bound.get("concurrency"), "sequence")}, {_escape(_int(bound.get("prompt_tokens")))} prompt tokens, '
                   f'{_escape(_int(bound.get("output_tokens")))} output tokens; realistic efficiency: '
                   + (_escape(assumed_efficiency_words(analysis)) if assumed_efficiency_words(analysis) else
                      f'{_value_cell(_num(analysis.get("efficiency_bandwidth")), "%")} of bandwidth, '
                      f'{_value_cell(_num(analysis.get("efficiency_compute")), "%")} of compute')
                   + '.</p>')
    rows = []
    for p in promise_rows(br):
        promised = format_quantity(p.value, p.unit) + (f" ({p.also})" if p.also else "")
        rows.append([_escape(p.name), _escape(promised),
                     _escape(format_quantity(analysis_value(br, "bound", p), p.unit)),
                     _escape(format_quantity(estimate_value(br, p), p.unit)),
                     _escape(format_quantity(measured_value(br, p), p.unit)),
                     _escape(format_headroom_cell(judged_headroom(br, p))), _badge(p.verdict), _escape(judged(br, p).get("basis") or "—")])
    out.append(_table(["Promise", "Promised", "Bound (100 %)", "Estimate", "Measured", "Headroom", "Verdict", "Basis"],
                      rows, cls="bl-promises", numeric=[1, 2, 3, 4, 5]))
    cal_words = calibration_words(analysis, b.get("percentile"))
    if cal_words:
        out.append(f'<p class="meta bl-calibration">Estimate: {_escape(cal_words)}.</p>')
    c_words = cost_words(analysis)
    if c_words:
        c_owner = analysis.get("owner_cost")  # a cost_owner of its own (else the card's owner)
        c_owner = f" (owner {c_owner})" if isinstance(c_owner, str) else ""
        out.append(f'<p class="meta bl-cost">Cost and energy{_escape(c_owner)}: {_escape(c_words)}.</p>')
    if analysis.get("skipped"):
        out.append(f'<p class="note">No charts: the physics was not run ({_escape(analysis["skipped"])}).</p>')
    elif isinstance(bound, dict) and isinstance(real, dict):
        cid = f"b{index}"
        out.append(_roofline(cid, b, bound, real))
        for name, key, unit in LATENCY_PROMISES:
            promised = _num((b.get("promises") or {}).get(key))
            if promised is not None:
                out.append(_waterfall(cid, b, name, key, promised, bound, real, analysis))
        out.append(_memory(cid, b, bound, real))
    else:
        out.append('<p class="note">No charts: the analysis has no roofline figures.</p>')
    load = b.get("load") if isinstance(b.get("load"), dict) else analysis.get("load")
    if isinstance(load, dict):
        out.append(_load(f"b{index}", b, load, analysis))
    if history:
        out.append(_history(f"b{index}", b, history))
    out.append("</section>")
    return "".join(out)


def _int(value: Any) -> str:
    v = _num(value)
    return "—" if v is None else f"{v:g}"


def _roofline(cid: str, b: dict, bound: dict, real: dict) -> str:
    name = str(b.get("name"))
    hardware = (b.get("analysis") or {}).get("hardware")
    hw = f" ({hardware})" if isinstance(hardware, str) else ""
    peak_f, peak_bw = _num(bound.get("compute_peak_flop_per_s")), _num(bound.get("bandwidth_peak_bytes_per_s"))
    real_f, real_bw = _num(real.get("compute_effective_flop_per_s")), _num(real.get("bandwidth_effective_bytes_per_s"))
    ridge, real_ridge = _num(bound.get("ridge_intensity_flop_per_byte")), _num(real.get("ridge_intensity_flop_per_byte"))
    pts = {k: (_num(bound.get(f"{k}_intensity_flop_per_byte")), _num(bound.get(f"{k}_attainable_flop_per_s")),
               _num(real.get(f"{k}_attainable_flop_per_s"))) for k in ("decode", "prefill")}
    if bound.get("compute_known") is False or (peak_f is not None and peak_f >= _UNLIMITED):
        return ('<p class="note">No roofline chart: the hardware lists no compute peak, so there is no compute '
                'roof to draw (only bandwidth and memory are checked).</p>')
    needed = [peak_f, peak_bw, real_f, real_bw, ridge, real_ridge] + [v for p in pts.values() for v in p]
    if any(v is None or v <= 0 for v in needed):
        return '<p class="note">No roofline chart: the analysis lacks the roofline figures.</p>'
    if peak_f >= _UNLIMITED:
        return ('<p class="note">No roofline chart: the hardware lists no compute peak, so there is no compute '
                'roof to draw (only bandwidth and memory are checked).</p>')
    xs = [pts["decode"][0], pts["prefill"][0], ridge, real_ridge]
    x = axis_for([min(xs) / 3, max(xs) * 3], "arithmetic intensity (FLOP per byte moved)", "FLOP/B", log=True)
    ys = [x.lo * real_bw, peak_f] + [p[1] for p in pts.values()] + [p[2] for p in pts.values()]
    y = axis_for(ys, "attainable FLOP/s per device", "FLOP/s", log=True)

    def roof(f: float, bw: float, rdg: float) -> list[tuple[float, float]]:
        line = [(x.lo, x.lo * bw)] if x.lo < rdg else []
        return line + [(max(rdg, x.lo), f), (x.hi, f)]

    series = [
        Series("roof at 100 %", roof(peak_f, peak_bw, ridge), "line", PALETTE["black"]),
        Series("realistic roof", roof(real_f, real_bw, real_ridge), "line", PALETTE["grey"], dash=True),
        Series("decode at 100 %", [(pts["decode"][0], pts["decode"][1])], "points", PALETTE["blue"], shape="circle",
               labels=["decode"]),
        Series("prefill at 100 %", [(pts["prefill"][0], pts["prefill"][1])], "points", PALETTE["vermillion"],
               shape="square", labels=["prefill"]),
        Series("decode, realistic", [(pts["decode"][0], pts["decode"][2])], "points", PALETTE["sky"], shape="circle"),
        Series("prefill, realistic", [(pts["prefill"][0], pts["prefill"][2])], "points", PALETTE["orange"],
               shape="square"),
    ]
    chart_id = f"{cid}-roofline"
    desc = (f"Roofline of {name}'s hardware{hw}: peak {format_value(peak_f, 'FLOP/s')} and "
            f"{format_value(peak_bw, 'B/s')}, ridge at {format_value(ridge, 'FLOP/B')}. A decode step has "
            f"{format_value(pts['decode'][0], 'FLOP/B')} and attains {format_value(pts['decode'][1], 'FLOP/s')}; "
            f"the prefill has {format_value(pts['prefill'][0], 'FLOP/B')} and attains "
            f"{format_value(pts['prefill'][1], 'FLOP/s')}.")
    svg = xy_chart(chart_id=chart_id, title=f"Roofline{hw}: {name}", desc=desc, x=x, y=y, series=series)
    table = _table(["", "Intensity", "At 100 %", "Realistic"], [
        ["roof (compute)", "—", _value_cell(peak_f, "FLOP/s"), _value_cell(real_f, "FLOP/s")],
        ["roof (bandwidth)", "—", _value_cell(peak_bw, "B/s"), _value_cell(real_bw, "B/s")],
        ["ridge", "—", _value_cell(ridge, "FLOP/B"), _value_cell(real_ridge, "FLOP/B")],
        ["decode step", _value_cell(pts["decode"][0], "FLOP/B"), _value_cell(pts["decode"][1], "FLOP/s"), _value_cell(pts["decode"][2], "FLOP/s")],
        ["prefill", _value_cell(pts["prefill"][0], "FLOP/B"), _value_cell(pts["prefill"][1], "FLOP/s"), _value_cell(pts["prefill"][2], "FLOP/s")],
    ], numeric=[1, 2, 3])
    return _figure(f"Roofline{hw} per device", svg, table, chart_id)


#: waterfall segments: (label, analysis field, colour) per promise
_STAGES = {
    "ttft": (("queue", "queue_s", PALETTE["grey"]), ("connection", "connection_setup_s", PALETTE["purple"]),
             ("prefill", "prefill_s", PALETTE["vermillion"]), ("proxy flush", "proxy_delay_s", PALETTE["yellow"])),
    "e2e": (("queue", "queue_s", PALETTE["grey"]), ("connection", "connection_setup_s", PALETTE["purple"]),
            # prefill makes the first token: the reply's other N - 1 tokens are decode steps
            ("prefill", "prefill_s", PALETTE["vermillion"]), ("decode", "decode_after_first_s", PALETTE["blue"])),
    "tpot": (("decode per token", "tpot_s", PALETTE["blue"]),),
}


def _stages(promise: str, a: dict) -> list[tuple[str, float, float, str]]:
    out, t = [], 0.0
    for label, key, colour in _STAGES[promise]:
        v = _num(a.get(key)) or 0.0
        out.append((label, t, t + v, colour))
        t += v
    return out


def _waterfall(cid: str, b: dict, promise: str, key: str, promised: float, bound: dict, real: dict,
               analysis: dict) -> str:
    name = str(b.get("name"))
    rows = [BarRow("bound (100 %)", _stages(promise, bound)), BarRow("estimate", _stages(promise, real))]
    measured = _num(analysis.get(f"measured_{key}"))
    if measured is not None:
        label = f"measured {analysis.get('measured_percentile') or ''}".strip()
        rows.append(BarRow(label, [], marker=(label, measured)))
    totals = [r.segments[-1][2] for r in rows if r.segments] + [promised] + ([measured] if measured else [])
    x = axis_for(totals, f"{promise} (time)", "s")
    chart_id = f"{cid}-{promise}"
    desc = (f"{promise} of {name}: promised {format_value(promised, 's')}; the bound adds up to "
            f"{format_value(rows[0].segments[-1][2], 's')} and the realistic estimate to "
            f"{format_value(rows[1].segments[-1][2], 's')}"
            + (f"; measured {format_value(measured, 's')}." if measured is not None else "."))
    legend = [(label, colour) for label, _, colour in _STAGES[promise]]
    svg = bar_chart(chart_id=chart_id, title=f"{promise} waterfall: {name}", desc=desc, x=x, rows=rows,
                    rules=[Rule("x", promised, f"promise {format_value(promised, 's')}", PALETTE["black"])],
                    legend=legend + ([("measured (diamond)", PALETTE["black"])] if measured is not None else []))
    header = ["Stage", "Bound (100 %)", "Estimate"]
    trows = [[_escape(label), _value_cell(s0[2] - s0[1], "s"), _value_cell(s1[2] - s1[1], "s")]
             for (label, _, _), s0, s1 in zip(_STAGES[promise], rows[0].segments, rows[1].segments)]
    trows.append(["<strong>total</strong>", _value_cell(_num(bound.get(key)), "s"), _value_cell(_num(real.get(key)), "s")])
    trows.append(["promise", _value_cell(promised, "s"), ""])
    if measured is not None:
        trows.append([_escape(f"measured {analysis.get('measured_percentile') or ''}"), "", _value_cell(measured, "s")])
    return _figure(f"{promise}: where the time goes", svg, _table(header, trows, numeric=[1, 2]), chart_id)


def _memory(cid: str, b: dict, bound: dict, real: dict) -> str:
    parts = (("weights", "memory_weight_bytes_per_device", PALETTE["blue"]),
             ("KV cache", "memory_kv_bytes_per_device", PALETTE["sky"]),
             ("draft model", "memory_draft_bytes_per_device", PALETTE["purple"]),
             ("runtime overhead", "memory_overhead_bytes_per_device", PALETTE["grey"]))
    t, segs = 0.0, []
    for label, key, colour in parts:
        v = _num(real.get(key)) or 0.0
        segs.append((label, t, t + v, colour))
        t += v
    physical = _num(bound.get("memory_available_bytes_per_device"))
    usable = _num(real.get("memory_available_bytes_per_device"))
    if physical is None or usable is None:
        return ""
    x = axis_for([t, physical, usable], "memory per device", "B")
    chart_id = f"{cid}-memory"
    rules = [Rule("x", physical, f"device {format_value(physical, 'B')}", PALETTE["black"]),
             Rule("x", usable, "usable", PALETTE["vermillion"])] if usable != physical else \
        [Rule("x", physical, f"device {format_value(physical, 'B')}", PALETTE["black"])]
    svg = bar_chart(chart_id=chart_id, title=f"Memory per device: {b.get('name')}",
                    desc=(f"Required {format_value(t, 'B')} per device (weights, KV cache at the longest context, "
                          f"draft, overhead) against {format_value(physical, 'B')} on the device and "
                          f"{format_value(usable, 'B')} usable."),
                    x=x, rows=[BarRow("required", segs)], rules=rules,
                    legend=[(label, colour) for label, _, colour in parts])
    trows = [[_escape(label), _value_cell(s[2] - s[1], "B")] for (label, _, _), s in zip(parts, segs)]
    trows += [["<strong>required</strong>", _value_cell(_num(real.get("memory_required_bytes_per_device")), "B")],
              ["usable", _value_cell(usable, "B")], ["on the device", _value_cell(physical, "B")]]
    return _figure("Memory per device", svg, _table(["Part", "Bytes"], trows, numeric=[1]), chart_id)


# --------------------------------------------------------------------------- under load

def _pct(label: str) -> float | None:
    try:
        return float(label.lstrip("pP")) / 100.0
    except ValueError:
        return None


def _declared_rate(load: dict) -> float | None:
    """The declared arrival rate per replica (``arrival_rate_request_per_s``, or ``arrival_rate_per_s``)."""
    for key in ("arrival_rate_request_per_s", "arrival_rate_per_s"):
        v = _num(load.get(key))
        if v is not None:
            return v
    return None


def _load(cid: str, b: dict, load: dict, analysis: dict) -> str:
    out = ["<h4>Under load</h4>"]
    facts = []
    rate = _declared_rate(load)
    if rate is not None:
        facts.append(["declared rate", _value_cell(rate, "request/s")])
    for key, unit, label in (("capacity_request_per_s", "request/s", "capacity"),
                             ("goodput_request_per_s", "request/s", "goodput"),
                             ("utilisation", "%", "utilisation"), ("slo_attainment", "%", "SLO attainment"),
                             ("replicas_needed", "", "replicas needed"),
                             ("preemptions_per_request", "", "preemptions per request")):
        v = _num(load.get(key))
        if v is not None:
            facts.append([_escape(label), _value_cell(v, unit)])
    if facts:
        out.append(_table(["", "Value"], facts, cls="bl-load", numeric=[1]))
    predicted = load.get("predicted") if isinstance(load.get("predicted"), dict) else {}
    declared = _pct(str(b.get("percentile") or "")) if b.get("percentile") else None
    for name, key, unit in LATENCY_PROMISES + (("queue", "queue_s", "s"),):
        dist = predicted.get(key)
        if isinstance(dist, dict):
            out.append(_cdf(cid, b, name, key, dist, declared, analysis, load))
    curve = load.get("curve")
    if isinstance(curve, list) and curve:
        for name, key, unit in LATENCY_PROMISES:
            if any(isinstance(p, dict) and _num(p.get(key)) is not None for p in curve):
                out.append(_capacity(cid, b, name, key, curve, load))
    elif _num(load.get("capacity_request_per_s")) is not None:
        out.append(_capacity_bars(cid, b, load))
    return "".join(out)


def _cdf_rows(load: dict, key: str) -> list[tuple[float, float, float | None, float | None]]:
    """(value, share, low, high) of ``load.cdf[key]``: the simulated requests' CDF and its band."""
    rows = (load.get("cdf") or {}).get(key) if isinstance(load.get("cdf"), dict) else None
    out = []
    for r in rows if isinstance(rows, list) else ():
        if isinstance(r, dict) and _num(r.get("p")) is not None and _num(r.get("value")) is not None:
            out.append((_num(r["value"]), _num(r["p"]) / 100.0, _num(r.get("low")), _num(r.get("high"))))
    return sorted(out, key=lambda t: t[1])


def _cdf(cid: str, b: dict, name: str, key: str, dist: dict, declared: float | None, analysis: dict,
         load: dict | None = None) -> str:
    pts = sorted((v, q) for q, v in ((_pct(k), _num(val)) for k, val in dist.items()) if q is not None and v is not None)
    if not pts:
        return ""
    curve = _cdf_rows(load or {}, key)
    band = [(lo, q) for _, q, lo, hi in curve if lo is not None and hi is not None]
    band += [(hi, q) for _, q, lo, hi in reversed(curve) if lo is not None and hi is not None]
    promised = _num((b.get("promises") or {}).get(key))
    measured = _num(analysis.get(f"measured_{key}"))
    m_pct = _pct(str(analysis.get("measured_percentile") or "")) if analysis.get("measured_percentile") else None
    x = axis_for([v for v, _ in pts] + [v for v, _, _, _ in curve] + [v for v, _ in band]
                 + ([promised] if promised else []) + ([measured] if measured else []), f"{name} (time)", "s")
    y = Axis("share of requests", "%", 0.0, 1.0)
    series = []
    if len(band) >= 3:
        series.append(Series("95% interval", band, "band", PALETTE["sky"]))
    line = [(v, q) for v, q, _, _ in curve] if len(curve) >= 2 else pts
    series += [Series("simulated requests" if len(curve) >= 2 else "predicted", line, "line", PALETTE["blue"]),
               Series("predicted percentiles", pts, "points", PALETTE["blue"], shape="circle")]
    if measured is not None and m_pct is not None:
        series.append(Series(f"measured {analysis.get('measured_percentile')}", [(measured, m_pct)], "points",
                             PALETTE["vermillion"], shape="diamond"))
    rules = []
    if declared is not None:
        rules.append(Rule("y", declared, f"declared p{declared * 100:g}", PALETTE["grey"], at_end=True))
    if promised is not None:
        rules.append(Rule("x", promised, f"promise {format_value(promised, 's')}", PALETTE["black"]))
    chart_id = f"{cid}-cdf-{name}"
    desc = (f"Predicted {name} distribution of {b.get('name')} under the declared traffic: "
            + ", ".join(f"p{q * 100:g} {format_value(v, 's')}" for v, q in pts)
            + (f"; promise {format_value(promised, 's')}" if promised is not None else "") + ".")
    svg = xy_chart(chart_id=chart_id, title=f"{name} under load (CDF): {b.get('name')}", desc=desc, x=x, y=y,
                   series=series, rules=rules)
    if len(curve) >= 2:
        trows = [[f"p{q * 100:g}", _value_cell(v, "s"), "—" if lo is None or hi is None else f"{_value_cell(lo, 's')} – {_value_cell(hi, 's')}"]
                 for v, q, lo, hi in curve]
    else:
        trows = [[f"p{q * 100:g}", _value_cell(v, "s"), ""] for v, q in pts]
    if measured is not None:
        trows.append([_escape(f"measured {analysis.get('measured_percentile') or ''}"), _value_cell(measured, "s"), ""])
    if promised is not None:
        trows.append(["promise", _value_cell(promised, "s"), ""])
    caption = (f"{name} under load: the simulated requests' distribution with its 95% interval" if len(curve) >= 2
               else f"{name} under load: predicted distribution")
    return _figure(caption, svg, _table(["Percentile", name, "95% interval"], trows, numeric=[1, 2]), chart_id)


def _capacity(cid: str, b: dict, name: str, key: str, curve: list, load: dict) -> str:
    at = b.get("percentile") or "the declared percentile"
    pts = sorted((r, v) for r, v in ((_num(p.get("request_per_s")), _num(p.get(key))) for p in curve
                                     if isinstance(p, dict)) if r is not None and v is not None)
    promised = _num((b.get("promises") or {}).get(key))
    rate, cap = _declared_rate(load), _num(load.get("capacity_request_per_s"))
    replicas = _num(load.get("replicas"))
    if rate is not None and replicas and replicas > 0:
        rate = rate / replicas  # the curve and the capacity are per replica
    at_rate = _num(((load.get("predicted") or {}).get(key) or {}).get(str(load.get("percentile") or at)))
    declared_pt = []  # the declared rate's own (longer) simulation: a point beside the search's curve
    if rate is not None and at_rate is not None and not any(math.isclose(r, rate, rel_tol=1e-9) for r, _ in pts):
        declared_pt = [(rate, at_rate)]
    x = axis_for([r for r, _ in pts] + [v for v in (rate, cap) if v is not None], "arrival rate per replica",
                 "request/s")
    y = axis_for([v for _, v in pts + declared_pt] + ([promised] if promised else []), f"{name} at {at}", "s")
    rules = []
    if promised is not None:
        rules.append(Rule("y", promised, f"promise {format_value(promised, 's')}", PALETTE["black"]))
    if rate is not None:
        rules.append(Rule("x", rate, "declared", PALETTE["grey"]))
    if cap is not None:
        rules.append(Rule("x", cap, "capacity", PALETTE["vermillion"]))
    chart_id = f"{cid}-capacity-{name}"
    svg = xy_chart(chart_id=chart_id, title=f"Capacity: {name} against arrival rate, {b.get('name')}",
                   desc=(f"{name} at {at} against the arrival rate per replica"
                         + (f"; declared {format_value(rate, 'request/s')}" if rate is not None else "")
                         + (f"; capacity {format_value(cap, 'request/s')}" if cap is not None else "") + "."),
                   x=x, y=y, series=[Series(f"{name} at {at}", pts, "line", PALETTE["blue"]),
                                     Series("simulated rates", pts, "points", PALETTE["blue"])]
                   + ([Series("at the declared rate", declared_pt, "points", PALETTE["vermillion"], shape="diamond")]
                      if declared_pt else []), rules=rules)
    trows = [[_value_cell(r, "request/s"), _value_cell(v, "s")] for r, v in sorted(pts + declared_pt)]
    trows += [[f"{label}: {_value_cell(v, 'request/s')}", ""] for label, v in (("declared", rate), ("capacity", cap))
              if v is not None]
    if promised is not None:
        trows.append(["promise", _value_cell(promised, "s")])
    return _figure(f"Capacity ({name})", svg, _table(["Rate", name], trows, numeric=[0, 1]), chart_id)


def _capacity_bars(cid: str, b: dict, load: dict) -> str:
    rate, cap = _declared_rate(load), _num(load.get("capacity_request_per_s"))
    rows = [BarRow("capacity", [("capacity", 0.0, cap, PALETTE["green"])])]
    if rate is not None:
        rows.insert(0, BarRow("declared rate", [("declared rate", 0.0, rate, PALETTE["blue"])]))
    x = axis_for([cap] + ([rate] if rate is not None else []), "arrival rate per replica", "request/s")
    chart_id = f"{cid}-capacity"
    svg = bar_chart(chart_id=chart_id, title=f"Declared rate and capacity: {b.get('name')}",
                    desc=f"Capacity {format_value(cap, 'request/s')}"
                         + (f" against a declared {format_value(rate, 'request/s')}." if rate is not None else "."),
                    x=x, rows=rows)
    trows = [[_escape(r.label), _value_cell(r.segments[0][2], "request/s")] for r in rows]
    return _figure("Capacity", svg, _table(["", "Rate"], trows, numeric=[1]), chart_id)


# --------------------------------------------------------------------------- over commits

_HISTORY_SHAPES = ("circle", "square", "diamond", "triangle")
_HISTORY_COLOURS = ("blue", "orange", "green", "purple", "vermillion", "sky", "black")


def _history(cid: str, b: dict, history: list) -> str:
    """Each promise's headroom over the past reports (``--history``) and this run."""
    name = b.get("name")
    now = {k[len("headroom_"):]: v for k, v in (b.get("analysis") or {}).items()
           if isinstance(k, str) and k.startswith("headroom_") and _num(v) is not None}
    for promise, j in (b.get("judgement") or {}).items():  # the judged headroom, as every output shows
        if isinstance(j, dict) and _num(j.get("headroom")) is not None:
            now[promise] = j["headroom"]
    past = [(e.get("label", ""), (e.get("budgets") or {}).get(name)) for e in history if isinstance(e, dict)]
    labels = [str(label) for label, _ in past] + ["this run"]
    runs = [(entry or {}).get("headroom", {}) for _, entry in past] + [now]
    if not any(runs[:-1]):
        return ""  # the budget is in no past report: nothing to draw against
    promises = [p for p in dict.fromkeys(k for r in runs for k in r)]
    series, values = [], []
    for i, p in enumerate(promises):
        pts = [(float(x + 1), float(r[p])) for x, r in enumerate(runs) if _num(r.get(p)) is not None]
        values += [v for _, v in pts]
        colour = PALETTE[_HISTORY_COLOURS[i % len(_HISTORY_COLOURS)]]
        series.append(Series(f"{p} line", pts, "line", colour, dash=i % 2 == 1, legend=False))
        series.append(Series(p, pts, "points", colour, shape=_HISTORY_SHAPES[i % len(_HISTORY_SHAPES)]))
    x = Axis("report (oldest first; the last is this run)", "", 0.5, len(runs) + 0.5)
    y = axis_for(values + [0.0], "headroom (0 % = the promise)", "%")
    chart_id = f"{cid}-history"
    svg = xy_chart(chart_id=chart_id, title=f"Headroom over commits: {name}",
                   desc=(f"Headroom (promise / realistic estimate - 1) of each promise of {name} in "
                         f"{len(runs) - 1} past reports and this run; below 0 the estimate is over the promise."),
                   x=x, y=y, series=[s for s in series if not s.legend] + [s for s in series if s.legend],
                   rules=[Rule("y", 0.0, "", PALETTE["black"], dash=False)])
    header = ["#", "Report"] + [_escape(p) for p in promises]
    trows = [[str(i + 1), _escape(label)] + [_value_cell(_num(r.get(p)), "%") for p in promises]
             for i, (label, r) in enumerate(zip(labels, runs))]
    return _figure("Headroom over commits", svg, _table(header, trows, numeric=list(range(2, 2 + len(promises)))),
                   chart_id)


# --------------------------------------------------------------------------- page

def render_dict(data: dict, expand: Callable[[dict], dict] | None = None) -> str:
    """The page for a JSON report (``Report.as_dict()`` as the json format
    writes it); ``expand`` gives the whole budget for a card when ``data``
    holds a shortened one."""
    budgets = [b for b in data.get("budgets") or [] if isinstance(b, dict)]
    ordered = _order(budgets)
    anchors = {i: f"budget-{i + 1}" for i in range(min(len(ordered), MAX_CARDS))}
    s = data.get("summary") or {}
    errors, warnings = s.get("errors", 0), s.get("warnings", 0)
    state = "errors" if errors else "warnings" if warnings else "clean"
    tool = data.get("tool") or {}
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{TOOL_NAME} report: {_escape(errors)} errors, {_escape(warnings)} warnings</title>",
        f"<style>{CSS}</style></head><body>",
        f'<header data-state="{state}"><h1>{TOOL_NAME} report</h1>',
        f'<p class="sub">{_escape(s.get("budgets", 0))} budgets in {_escape(s.get("files", 0))} files: '
        f'{_escape(errors)} errors, {_escape(warnings)} warnings. Numbers are those of the JSON report '
        f'(<code>--format json</code>); bounds at 100 % of the hardware, estimates at the realistic efficiency.</p>'
        "</header><main>",
        _summary(data, ordered, anchors),
        _findings(data),
        '<section id="budgets"><h2>Budgets</h2>',
    ]
    if not ordered:
        out.append("<p>No budgets were checked.</p>")
    for i, b in enumerate(ordered[:MAX_CARDS]):
        out.append(_card(expand(b) if expand else b, anchors[i], i + 1, data.get("history")))
    if len(ordered) > MAX_CARDS:
        out.append(f'<p class="note">{len(ordered) - MAX_CARDS} more budgets (those with the most headroom) '
                   "have no card here: they are in the summary table, and the JSON report has everything.</p>")
    out.append("</section></main>")
    out.append(f'<footer>{TOOL_NAME} {_escape(tool.get("version", ""))} · report contract version '
               f'{_escape(data.get("version", ""))}</footer>')
    out.append(f"<script>{SCRIPT}</script></body></html>")
    return "\n".join(out) + "\n"
