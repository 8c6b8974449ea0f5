"""Wording shared by the production-evidence rules (BL604..BL606)."""

from __future__ import annotations


def _s(x: float) -> str:
    if x != x:  # NaN
        return "?"
    if x == float("inf"):
        return "+Inf"
    return f"{x * 1e3:.4g} ms" if x < 1 else f"{x:.4g} s"


def reading_words(ind, r) -> str:
    if r.exact:
        share = f"{r.share_low:.2%} of {r.n} requests at or under {ind.threshold_s:g} s"
    else:
        share = (f"{r.share_low:.2%} .. {r.share_high:.2%} of {r.n} requests at or under {ind.threshold_s:g} s "
                 f"(not an edge: between the edges either side; linear guess {r.share_interpolated:.2%})")
    return (f"{share}; interpolated p{ind.objective * 100:g} {_s(r.quantile_s)} (bucket {_s(r.band[0])} .. "
            f"{_s(r.band[1])}: the true value is anywhere in it); 95% ranks {r.ranks[0]}..{r.ranks[1]} "
            f"(basis production: {r.metric} in {r.file})")


def indicator(ev, key):
    return next((i for i in ev.slo.plan.indicators if i.key == key), None)


def where(b, ind, r):
    return r.where if r.where is not None else ind.location
