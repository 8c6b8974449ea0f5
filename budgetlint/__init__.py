"""budgetlint: a declarative latency-budget linter for LLM serving."""

__version__ = "0.1.0"
