"""OpenSLO v1 ``SLO`` documents (OpenSLO/OpenSLO schemas/v1), one per promise.

A ratio indicator (``ratioMetric`` with ``good`` and ``total`` Prometheus
queries), ``Occurrences`` budgeting, a rolling ``timeWindow`` of the
budget's window, the objective as ``target`` (0..1). OpenSLO has no owner
field: the owner is a label (label form) and an annotation (verbatim).
"""

from __future__ import annotations

from typing import Any

import yaml

from budgetlint.slo._common import (
    OBJECTIVE_DECIMALS, bucket_selector, count_selector, description, dns_name, exportable, k8s_label, slo_name,
)


def documents(plan: Any) -> list[dict]:
    out = []
    for ind in exportable(plan):
        name = dns_name(slo_name(plan, ind))
        lab = {"budget": k8s_label(plan.budget), "promise": k8s_label(ind.name)}
        annotations = {"budgetlint.dev/promise": ind.words}
        if ind.owner:
            lab["owner"] = k8s_label(ind.owner)
            annotations["budgetlint.dev/owner"] = ind.owner
        out.append({
            "apiVersion": "openslo/v1",
            "kind": "SLO",
            "metadata": {"name": name, "displayName": f"{plan.budget} {ind.words}", "labels": lab,
                         "annotations": annotations},
            "spec": {
                "description": description(plan, ind)[:1050],
                "service": dns_name(plan.budget),
                "indicator": {
                    "metadata": {"name": f"{name[:59]}-sli"},
                    "spec": {"ratioMetric": {
                        "counter": True,
                        "good": {"metricSource": {"type": "Prometheus",
                                                  "spec": {"query": bucket_selector(plan, ind)}}},
                        "total": {"metricSource": {"type": "Prometheus",
                                                   "spec": {"query": count_selector(plan, ind)}}},
                    }},
                },
                "timeWindow": [{"duration": plan.window, "isRolling": True}],
                "budgetingMethod": "Occurrences",
                "objectives": [{"displayName": ind.words, "target": round(plan.objective, OBJECTIVE_DECIMALS)}],
            },
        })
    return out


def render(plans: list[Any]) -> str:
    return "---\n".join(yaml.safe_dump(d, sort_keys=False, width=120, allow_unicode=True)
                        for p in plans for d in documents(p))
