"""Wording shared by the production-evidence rules (BL604..BL606)."""

from __future__ import annotations
from budgetlint.text import numbers


def _time(x: float) -> str:
    from budgetlint.text.numbers import quantity

    if x == float("inf"):
        return "+Inf"
    return quantity(x, "s")


def share(fraction: float) -> str:
    """A share of requests to four figures (97.00% vs 96.99% can decide a promise)."""
    from budgetlint.text.numbers import number

    return f"{number(fraction * 100.0, figures=4)}%"


def reading_words(ind, r) -> str:
    from budgetlint.text.numbers import stated

    if r.exact:
        text = f"{share(r.share_low)} of {numbers.number(r.n)} requests at or under {_time(ind.threshold_s)}"
    else:
        text = (f"{share(r.share_low)} .. {share(r.share_high)} of {numbers.number(r.n)} requests at or under "
                f"{_time(ind.threshold_s)} (not an edge: between the edges either side; linear guess "
                f"{share(r.share_interpolated)})")
    return (f"{text}; interpolated p{stated(ind.objective * 100)} {_time(r.quantile_s)} (bucket {_time(r.band[0])} .. "
            f"{_time(r.band[1])}: the true value is anywhere in it); 95% ranks {r.ranks[0]}..{r.ranks[1]} "
            f"(basis production: {r.metric} in {r.file})")


def readings(ev):
    """Each production reading of a budget with its indicator: ``(slo, indicator, reading)``;
    nothing when the budget has no SLO plan. The one loop BL604..BL606 share."""
    slo = getattr(ev, "slo", None)
    if slo is None:
        return
    for r in slo.production:
        ind = indicator(ev, r.indicator)
        if ind is not None:
            yield slo, ind, r


def indicator(ev, key):
    return next((i for i in ev.slo.plan.indicators if i.key == key), None)


def where(b, ind, r):
    return r.where if r.where is not None else ind.location
