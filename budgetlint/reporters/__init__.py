"""Output formats: one module per format, each with the same ``render``.

Every reporter module defines::

    def render(report: Report, *, color: bool = False) -> str

and returns the whole output as one string (ending in a newline, or empty).
A module whose output grows with the repository (json, sarif) also defines::

    def chunks(report: Report, *, color: bool = False) -> Iterator[str]

which yields the same text in pieces, so that the CLI can write a 10,000-budget
report without holding it whole (``get_chunks``).
Modules are imported lazily: the CLI builds its ``--format`` choice from
``REPORTERS`` (or ``FORMATS``) without importing any of them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Callable, Iterator, Protocol

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
    "html": "budgetlint.reporters.html",
    "gitlab": "budgetlint.reporters.gitlab",  # GitLab Code Quality
    "jsonl": "budgetlint.reporters.jsonl",  # JSON lines: one finding a line
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


def get_chunks(name: str) -> Callable[..., Iterator[str]]:
    """A function yielding format ``name``'s output in pieces (one piece for
    reporters that only ``render``); ValueError for an unknown name."""
    get_reporter(name)
    module = importlib.import_module(REPORTERS[name])
    chunks = getattr(module, "chunks", None)
    if chunks is not None:
        return chunks
    render_whole = module.render
    return lambda report, *, color=False: iter((render_whole(report, color=color),))


def render(name: str, report: Report, *, color: bool = False) -> str:
    """Render ``report`` in format ``name``."""
    return get_reporter(name)(report, color=color)


__all__ = ["DEFAULT_FORMAT", "FORMATS", "REPORTERS", "Renderer", "get_chunks", "get_reporter", "render"]
