"""Output formats: one module per format, each with the same ``render``.

Every reporter module defines::

    def render(report: Report, *, color: bool = False) -> str

and returns the whole output as one string (ending in a newline, or empty).
Modules are imported lazily: the CLI builds its ``--format`` choice from
``REPORTERS`` (or ``FORMATS``) without importing any of them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # pragma: no cover
    from budgetlint.report import Report

#: format name -> module that renders it (``render(report, *, color=False)``)
REPORTERS: dict[str, str] = {
    "text": "budgetlint.reporters.text",
    "json": "budgetlint.reporters.json_report",
    "sarif": "budgetlint.reporters.sarif",
    "github": "budgetlint.reporters.github",
    "junit": "budgetlint.reporters.junit",
    "markdown": "budgetlint.reporters.markdown",
}

#: the format names, in the order help texts should list them
FORMATS: tuple[str, ...] = tuple(REPORTERS)

DEFAULT_FORMAT = "text"


class Renderer(Protocol):
    def __call__(self, report: Report, *, color: bool = False) -> str: ...


def get_reporter(name: str) -> Renderer:
    """The ``render`` function of format ``name``; ValueError for an unknown name."""
    try:
        module_path = REPORTERS[name]
    except KeyError:
        raise ValueError(
            f"unknown output format {name!r}; expected one of: {', '.join(FORMATS)}"
        ) from None
    render: Renderer = importlib.import_module(module_path).render
    return render


def render(name: str, report: Report, *, color: bool = False) -> str:
    """Render ``report`` in format ``name``."""
    return get_reporter(name)(report, color=color)


__all__ = ["DEFAULT_FORMAT", "FORMATS", "REPORTERS", "Renderer", "get_reporter", "render"]
