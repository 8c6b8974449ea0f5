"""Every rule says what it reads: ``check(budget: Budget, evaluation: BudgetEvaluation, ctx: RuleContext)``."""

from __future__ import annotations

import inspect
import typing

from budgetlint.evaluate import BudgetEvaluation
from budgetlint.model.types import Budget
from budgetlint.rules import RuleContext, all_rules


def test_every_budget_rule_is_typed() -> None:
    untyped = []
    for rule in all_rules():
        if rule.check is None:
            continue
        module = inspect.getmodule(rule.check)
        hints = typing.get_type_hints(rule.check, {**vars(module), "Budget": Budget,
                                                   "BudgetEvaluation": BudgetEvaluation,
                                                   "RuleContext": RuleContext})
        params = list(inspect.signature(rule.check).parameters)
        if len(params) != 3 or [hints.get(p) for p in params] != [Budget, BudgetEvaluation, RuleContext]:
            untyped.append(rule.code)
    assert untyped == []
