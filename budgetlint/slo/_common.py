"""What every exporter shares: names, label values, the PromQL of one indicator."""

from __future__ import annotations

import re
from typing import Any

from budgetlint.model.engine_metrics import le_text
from budgetlint.text import numbers

_DNS = re.compile(r"[^a-z0-9-]+")
_LABEL_VALUE = re.compile(r"[^A-Za-z0-9._-]+")


def dns_name(*parts: str) -> str:
    """A Kubernetes / OpenSLO object name: lowercase letters, digits and '-' (at most 63)."""
    text = _DNS.sub("-", "-".join(parts).lower()).strip("-")
    return (text[:63].rstrip("-")) or "slo"


def k8s_label(value: str) -> str:
    """A Kubernetes label value (``@acme/chat`` -> ``acme_chat``): letters, digits, '.', '_', '-'."""
    text = _LABEL_VALUE.sub("_", value).strip("._-")
    return text[:63].strip("._-") or "none"


def slo_name(plan: Any, ind: Any) -> str:
    return f"{plan.budget}-{ind.name}"


def matchers(plan: Any, extra: dict[str, str] | None = None) -> str:
    """``{model_name="x",le="0.5"}`` from the budget's selectors (sorted) and ``extra``."""
    items = sorted(plan.selectors.items()) + sorted((extra or {}).items())
    if not items:
        return ""
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in items) + "}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def bucket_selector(plan: Any, ind: Any) -> str:
    return f"{ind.metric.name}_bucket" + matchers(plan, {"le": le_text(ind.exported_s)})


def count_selector(plan: Any, ind: Any) -> str:
    return f"{ind.metric.name}_count" + matchers(plan)


def good_rate(plan: Any, ind: Any, window: str) -> str:
    return f"sum(rate({bucket_selector(plan, ind)}[{window}]))"


def total_rate(plan: Any, ind: Any, window: str) -> str:
    return f"sum(rate({count_selector(plan, ind)}[{window}]))"


def error_rate(plan: Any, ind: Any, window: str) -> str:
    return f"({total_rate(plan, ind, window)} - {good_rate(plan, ind, window)})"


def exportable(plan: Any) -> list[Any]:
    """The indicators an SLO can be written for (a histogram and an edge to use)."""
    return [i for i in plan.indicators if i.metric is not None and i.exported_s is not None and not i.unmeasurable]


def labels(plan: Any, ind: Any) -> dict[str, str]:
    """The labels every rule / object of one SLO carries (Prometheus label values: anything)."""
    out = {"budget": plan.budget, "slo": slo_name(plan, ind), "promise": ind.key}
    if ind.owner:
        out["owner"] = ind.owner
    if plan.owner and ind.key.startswith("segment:"):
        out["budget_owner"] = plan.owner
    out.update(plan.labels)
    return out


def _edge(seconds: float) -> str:
    """A bucket edge or a threshold as written (six figures: an edge is exact)."""
    return numbers.quantity(seconds, "s", figures=numbers.STATED_FIGURES)


def description(plan: Any, ind: Any) -> str:
    how = (f"{numbers.stated_percent(ind.objective)} of requests at or under {_edge(ind.exported_s)} of "
           f"{ind.metric.name}")
    if not ind.at_edge:
        how += (f" (the promise is {_edge(ind.threshold_s)}, not a bucket edge: the nearest edge "
                f"{'below' if ind.exported_s < ind.threshold_s else 'above'} is used; see BL601)")
    return (f"budgetlint: {plan.budget} {ind.words}, objective from {plan.objective_from}: {how}, "
            f"over {plan.window}.")


#: the decimals an exported objective keeps: twelve, so that 99.9999999 % stays itself (six rounded it
#: to 100, an SLO with no error budget, in the Sloth, Pyrra and OpenSLO exports until stop 47) while a
#: float's last bit (0.95 x 100 = 95.00000000000001) is dropped
OBJECTIVE_DECIMALS = 12


def objective_percent(plan: Any) -> float:
    return round(plan.objective * 100.0, OBJECTIVE_DECIMALS - 2)


def objective_text(value: float) -> str:
    """An objective as a plain decimal (Pyrra's target is a string): as many figures as it has, up to
    :data:`OBJECTIVE_DECIMALS` (``f"{x:g}"`` printed 99.9999999 as "100")."""
    return format(value, f".{OBJECTIVE_DECIMALS}g")
