"""Sloth ``prometheus/v1`` specs (slok/sloth pkg/prometheus/api/v1/v1.go): one document per budget.

Sloth generates the burn-rate rules itself from its SLO period (30 d by
default, the SRE workbook windows); a budget whose ``slo.window`` is not
30 d says so in a comment: run Sloth with ``--default-slo-period``.
"""

from __future__ import annotations

from typing import Any

import yaml

from budgetlint.slo._common import count_selector, bucket_selector, description, exportable, labels, objective_percent


def spec(plan: Any) -> dict:
    slos = []
    for ind in exportable(plan):
        lab = labels(plan, ind)
        lab.pop("budget", None)
        slos.append({
            "name": ind.name,
            "objective": objective_percent(plan),
            "labels": lab,
            "sli": {"events": {
                "error_query": (f"sum(rate({count_selector(plan, ind)}[{{{{.window}}}}])) - "
                                f"sum(rate({bucket_selector(plan, ind)}[{{{{.window}}}}]))"),
                "total_query": f"sum(rate({count_selector(plan, ind)}[{{{{.window}}}}]))",
            }},
            "alerting": {
                "name": "".join(w.capitalize() for w in f"{plan.budget}-{ind.name}".replace("_", "-").split("-")
                                if w) + "BurnRate",
                "labels": {k: v for k, v in lab.items() if k in ("owner", "budget_owner", "promise")},
                "annotations": {"summary": description(plan, ind)},
                "page_alert": {"labels": {"severity": "page"}},
                "ticket_alert": {"labels": {"severity": "ticket"}},
            },
        })
    out: dict = {"version": "prometheus/v1", "service": plan.budget}
    top = {"budget": plan.budget, **({"owner": plan.owner} if plan.owner else {}), **plan.labels}
    out["labels"] = top
    out["slos"] = slos
    return out


def render(plans: list[Any]) -> str:
    docs = []
    for p in plans:
        if not exportable(p):
            continue
        text = yaml.safe_dump(spec(p), sort_keys=False, width=120, allow_unicode=True)
        if p.window != "30d":
            text = f"# slo.window is {p.window}: run sloth generate --default-slo-period={p.window}\n" + text
        docs.append(text)
    return "---\n".join(docs)
