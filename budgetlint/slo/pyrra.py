"""Pyrra ``pyrra.dev/v1alpha1 ServiceLevelObjective`` objects, one per promise.

The latency indicator takes the good events as the ``_bucket`` series at
one ``le`` and the total as ``_count`` (Pyrra's examples/caddy-response-latency.yaml).
Kubernetes label values cannot hold ``@`` or ``/``: the owner handle is a
label in its label form and, verbatim, an annotation.
"""

from __future__ import annotations

from typing import Any

import yaml

from budgetlint.slo._common import (
    bucket_selector, count_selector, description, dns_name, exportable, k8s_label, slo_name, objective_percent, objective_text,
)


def objects(plan: Any) -> list[dict]:
    out = []
    for ind in exportable(plan):
        meta_labels = {"budgetlint.dev/budget": k8s_label(plan.budget), "budgetlint.dev/promise": k8s_label(ind.name)}
        annotations = {"budgetlint.dev/promise": ind.words}
        if ind.owner:
            meta_labels["budgetlint.dev/owner"] = k8s_label(ind.owner)
            annotations["budgetlint.dev/owner"] = ind.owner
        meta_labels.update({k: k8s_label(v) for k, v in plan.labels.items()})
        out.append({
            "apiVersion": "pyrra.dev/v1alpha1",
            "kind": "ServiceLevelObjective",
            "metadata": {"name": dns_name(slo_name(plan, ind)), "labels": meta_labels, "annotations": annotations},
            "spec": {
                "target": objective_text(objective_percent(plan)),
                "window": plan.window,
                "description": description(plan, ind),
                "indicator": {"latency": {
                    "success": {"metric": bucket_selector(plan, ind)},
                    "total": {"metric": count_selector(plan, ind)},
                }},
            },
        })
    return out


def render(plans: list[Any]) -> str:
    return "---\n".join(yaml.safe_dump(o, sort_keys=False, width=120, allow_unicode=True)
                        for p in plans for o in objects(p))
