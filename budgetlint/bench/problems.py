"""What a benchmark reader found wrong in a file: the problem codes and the per-file collector."""

from __future__ import annotations

from .measurement import Problem


# Problem codes (stable; the CLI maps them to BL4xx findings)
EMPTY = "bench-empty"
TRUNCATED = "bench-truncated"
MALFORMED = "bench-malformed"
DUPLICATE_KEY = "bench-duplicate-key"
NAN = "bench-nan"
UNITLESS = "bench-unitless"
UNKNOWN_FORMAT = "bench-unknown-format"
NOT_MEASUREMENT = "bench-not-a-measurement"
NO_SUCCESS = "bench-no-successful-requests"
IO = "bench-io"
SCHEMA = "bench-schema"
IMPOSSIBLE = "bench-impossible-value"
LIMIT = "bench-limit"


class Ctx:
    """Per-file context: the path and the problems found so far."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.problems: list[Problem] = []
        self.nan_tokens = 0
        self.nan_reported = 0

    def problem(self, message: str, code: str, line: int | None = None) -> None:
        found = Problem(self.path, line, message, code)
        if found not in self.problems[-8:]:  # a key read twice by one reader is said once
            self.problems.append(found)


def finish_nan(ctx: Ctx) -> None:
    """Report NaN tokens that sat in fields no reader looked at."""
    if ctx.nan_tokens and not ctx.nan_reported:
        ctx.problem(
            f"file contains {ctx.nan_tokens} NaN value(s) in fields budgetlint does not read",
            NAN,
        )
