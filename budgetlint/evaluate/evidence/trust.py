"""Whether a linked measurement can be trusted: samples, run quality, age, staleness, expiry."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from budgetlint.model.types import Budget

from .readings import metric_value, title

if TYPE_CHECKING:
    from .records import Link


def policy_for(b: Budget, defaults: Any = None) -> Any:
    """The budget's evidence policy, the config's evidence-* keys (``defaults``) filling the rest."""
    from budgetlint.evaluate.freshness import Policy

    own = b.evidence
    values: dict[str, Any] = {}
    for key, who in (("max_age_days", "max_age_from"), ("engine", "engine_from"),
                     ("engine_version", "version_from")):
        mine = getattr(own, key, None) if own is not None else None
        theirs = getattr(defaults, key, None) if defaults is not None else None
        values[key] = mine if mine is not None else theirs
        values[who] = "budget" if mine is not None else "config"
    return Policy(**values)


def assess_trust(link: Link, expires: str | None, on: dt.date, defaults: Any) -> None:
    """Sample sufficiency per reading, run quality, age and staleness, entry expiry."""
    from budgetlint.evaluate import freshness, run_quality, sufficiency

    b, m = link.budget, link.measurement
    for name, r in link.readings.items():
        if r.status != "compared":
            continue
        metric = m.metrics.get(name)
        raw = metric_value(metric, r.percentile)
        scale = r.measured_s / raw if raw else 1.0  # type: ignore[operator]
        # requests, not tokens: a token-weighted distribution's count (guidellm's inter-token
        # latency) can exceed the requests it came from, so the smaller of the two is used
        count, source = metric.count, f"the file's {title(name)} count"
        done = m.run.completed
        if done is not None and (count is None or done < count):
            count, source = done, m.run.sources.get("completed", "completed")
        suff = sufficiency.assess(r.percentile, metric.samples, count, source, r.measured_s, r.promised_s, scale)
        if suff is not None:
            link.sufficiency[name] = suff
    prompt = float(b.workload.prompt_tokens) if b.workload is not None and b.workload.prompt_tokens else None
    declared_prompt = link.conditions.get("prompt_tokens", (None, ""))
    if any(k == "workload.prompt_tokens" for k, _ in link.mismatches) or declared_prompt[1] == "budget":
        prompt = None  # BL404 already says it, or the file has no length of its own
    link.quality = run_quality.problems(m.run, budget_prompt_tokens=prompt, percentile=b.percentile or "p50")
    link.age_days = freshness.age_days(m.provenance, on)
    pol = policy_for(b, defaults)
    if not pol.empty:
        link.stale = freshness.check(m.provenance, pol, on)
    if expires:
        link.expires = expires
        try:
            link.expired_days = (on - dt.date.fromisoformat(expires.strip())).days
        except ValueError:
            link.expired_days = None  # not a date: the schema check reports it (BL003)
