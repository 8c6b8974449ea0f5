"""Share physics between budgets with identical inputs.

Real repositories hold many budgets on a few deployments: the same model on
the same hardware, the same traffic, only the promises, names and owners
differ. The roofline analysis and the levers are pure functions of their
physics inputs, so a budget whose inputs equal an earlier budget's reuses
that result instead of computing it again.

Keys are the inputs' ``repr``: the physics inputs are frozen dataclasses of
plain numbers and strings, whose ``repr`` names every field and writes each
float so that it reads back exactly (``1`` and ``1.0``, ``0.0`` and ``-0.0``
stay apart), so equal keys mean equal inputs, never just similar ones; never
a budget's name. The results are frozen dataclasses and are shared, not
copied. Each cache is bounded (cleared when full) so memory stays flat.
"""

from __future__ import annotations

from typing import Any, Callable

#: entries per cache before it is cleared: a few MiB of analyses
LIMIT = 4096

_ANALYSES: dict[str, Any] = {}


def key(*inputs: Any) -> str:
    """A key that equals another only when every input does, field by field."""
    return repr(inputs)


def analyse(deployment: Any, workload: Any, efficiency: Any, queue_s: float = 0.0, edge: Any = None) -> Any:
    """:func:`budgetlint.physics.analysis.analyse`, once per distinct set of inputs."""
    from budgetlint.physics.analysis import analyse as compute

    k = key(deployment, workload, efficiency, queue_s, edge)
    found = _ANALYSES.get(k)
    if found is None:
        found = compute(deployment, workload, efficiency, queue_s, edge)  # a ValueError is not cached
        if len(_ANALYSES) >= LIMIT:
            _ANALYSES.clear()
        _ANALYSES[k] = found
    return found


def shared(cache: dict, k: str, compute: Callable[[], Any]) -> Any:
    """``cache[k]``, computed by ``compute()`` the first time (bounded like the analyses)."""
    if k in cache:
        return cache[k]
    value = compute()
    if len(cache) >= LIMIT:
        cache.clear()
    cache[k] = value
    return value
