"""The one iterator the evidence rules (BL401-BL411) use over a budget's evaluation.

``links(evaluation)`` yields the budget's linked measurements, by default those that speak for
its promises (``Link.counts``: conditions match, entry not expired); ``counting=False``
gives the ones that do not, ``counting=None`` all. ``promises(budget, evaluation)`` is the same walk
one promise deeper: each counting link's readings as a :class:`PromiseEvidence`, with
what the messages need (the reading, its sufficiency, pace or time, the YAML position).
The rules keep only their condition and their words; nothing here computes a number.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator

from budgetlint.rules import _messages

if TYPE_CHECKING:
    from budgetlint.evaluate import BudgetEvaluation
    from budgetlint.evaluate.evidence.records import Link, Reading
    from budgetlint.findings import Location
    from budgetlint.model.types import Budget


def links(evaluation: BudgetEvaluation, *, counting: bool | None = True) -> Iterator[Link]:
    """The budget's links, in the evaluation's order: counting (default), not counting
    (``False``) or all (``None``)."""
    for link in evaluation.links:
        if counting is None or link.counts == counting:
            yield link


@dataclass(frozen=True)
class PromiseEvidence:
    """One promise held against one counting measurement."""

    budget: Budget
    link: Link
    promise: str  # ttft | tpot | e2e
    reading: Reading
    sufficiency: Any  # evaluate.sufficiency.Sufficiency, or None (not compared, no count)

    @property
    def pace(self) -> bool:
        """A TPOT promised as a pace (token/s): its values read as rates."""
        return self.promise == "tpot" and self.budget.promise.pace_given

    @property
    def compared(self) -> bool:
        return self.reading.status == "compared"

    @property
    def what(self) -> str:
        return _messages.promise_words(self.budget, self.promise)

    @property
    def where(self) -> Location:
        """The promise's YAML position (``promise.pace`` for a pace)."""
        return promise_loc(self.budget, self.promise)

    def figures(self, *extra_s: float | None) -> int:
        """Figures that tell the measurement, the promise and ``extra_s`` apart."""
        return _messages.evidence_figures(self.promise, self.pace, self.reading.measured_s,
                                          self.reading.promised_s, *extra_s)

    def value(self, seconds: float, figures: int) -> str:
        return _messages.evidence_value(self.promise, seconds, self.pace, figures)


def promises(budget: Budget, evaluation: BudgetEvaluation) -> Iterator[PromiseEvidence]:
    """Every reading of every counting link, in order."""
    for link in links(evaluation):
        for name, reading in link.readings.items():
            yield PromiseEvidence(budget, link, name, reading, link.sufficiency.get(name))


def promise_loc(b: Budget, promise: str) -> Location:
    key = "pace" if promise == "tpot" and b.promise.pace_given else promise
    return b.loc("promise", key)


def conditions_loc(b: Budget, key: str) -> Location:
    """The YAML position of a workload/deployment key (``workload.concurrency``)."""
    parts = tuple(key.split("."))
    if b.has(*parts):
        return b.loc(*parts)
    if b.has(parts[0]):
        return b.loc(parts[0])
    return b.loc()
