"""One budget's evidence: its own `bench:` files, then the run's ``--bench`` files."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Any

from budgetlint.files.discovery import inside, outside_words
from budgetlint.findings import Location
from budgetlint.model.types import Budget

from .bound import bound_at_run
from .matching import effective_conditions, mismatches
from .readings import readings_for
from .records import BudgetEvidence, Link
from .store import BenchFile, BenchStore, glob_entry
from .trust import assess_trust

if TYPE_CHECKING:
    from budgetlint.bench import Measurement


#: measurement formats that are production evidence rather than a benchmark run
PRODUCTION_FORMATS = ("prometheus",)


def new_link(b: Budget, bf: BenchFile, m: Measurement, via: str, where: Location, skipped: bool,
              mism: list[tuple[str, str]], trust: tuple[dt.date, Any], expires: str | None = None) -> Link:
    link = Link(b, m, bf.path, via, where)
    link.conditions = effective_conditions(m, b)
    link.mismatches = mism
    link.readings = readings_for(link)
    assess_trust(link, expires, *trust)
    bound_at_run(link, skipped)
    return link


def link_budget(b: Budget, skipped: bool, catalog: Any, store: BenchStore,
                run_files: tuple[BenchFile, ...] = (), only_budget: bool = False,
                today: dt.date | None = None, evidence_defaults: Any = None) -> BudgetEvidence:
    """The evidence for one budget: its own `bench:` files, then the run's ``--bench`` files.

    A ``--bench`` measurement is linked to the run's only budget whatever its
    conditions (BL404 then says why it does not count), else to each budget
    it matches; a budget it does not match records why (``declined``), and
    :func:`unlinked` collects the measurements no budget took.
    ``skipped``: the budget's roofline could not be computed (no bounds).
    ``today`` dates the evidence's age and the entries' expiry;
    ``evidence_defaults`` (a :class:`~budgetlint.evaluate.freshness.Policy`)
    is the config's evidence policy, which the budget's ``evidence:`` overrides.
    """
    trust = (today or dt.date.today(), evidence_defaults)
    links: list[Link] = []
    production: list[Link] = []
    files: list[BenchFile] = []
    unmatched: list[tuple[int, str]] = []
    declined: list[tuple[str, int, str]] = []
    seen: set[tuple[str, int]] = set()
    base = Path(b.doc.file).parent if b.bench else None  # the budget file's folder, for its `bench:` entries
    capped: list[tuple[int, str, int]] = []
    refused: list[tuple[int, str, str]] = []
    cut: list[tuple[int, str, str]] = []
    roots = store.roots
    for i, pattern in enumerate(b.bench):
        globbed = glob_entry(base, pattern, roots=roots)
        if globbed.refused is not None:
            refused.append((i, pattern, globbed.refused))
            continue
        if globbed.cut is not None:
            cut.append((i, pattern, globbed.cut + "; the files past it are not read"))
        paths = globbed.files
        if roots is not None:
            outside = [p for p in paths if not inside(p, roots)]
            if outside:
                what = "it" if len(paths) == 1 else f"{len(outside)} of its {len(paths)} files"
                refused.append((i, pattern, f"{what} resolves {outside_words(roots)}"))
                paths = [p for p in paths if p not in outside]
                if not paths:
                    continue
        if not paths:
            unmatched.append((i, pattern))
            continue
        if globbed.capped:
            capped.append((i, pattern, len(paths)))
        for p in paths:
            bf = store.read(p)
            if all(f is not bf for f in files):
                files.append(bf)
            expires = b.bench_expires[i] if i < len(b.bench_expires) else None
            for m in bf.measurements:
                if (bf.path, id(m)) not in seen:
                    seen.add((bf.path, id(m)))
                    (production if m.format in PRODUCTION_FORMATS else links).append(new_link(b, bf, m, f"bench: {pattern!r}", b.loc("bench", i), skipped,
                                           mismatches(m, b, catalog), trust, expires))
    for bf in run_files:
        where = Location(bf.path, 1, 1)
        for k, m in enumerate(bf.measurements):
            if (bf.path, id(m)) in seen:
                continue
            mism = mismatches(m, b, catalog)
            if mism and not only_budget:
                declined.append((bf.path, k, f"{b.name}: " + "; ".join(r for _, r in mism)))
                continue
            seen.add((bf.path, id(m)))
            (production if m.format in PRODUCTION_FORMATS else links).append(
                new_link(b, bf, m, f"--bench {bf.path}", where, skipped, mism, trust))
    return BudgetEvidence(tuple(links), tuple(files), tuple(unmatched), tuple(declined), tuple(capped),
                          refused=tuple(refused), cut=tuple(cut), production=tuple(production))


def unlinked(run_files: tuple[BenchFile, ...], per_budget: list[BudgetEvidence]
             ) -> list[tuple[BenchFile, Measurement, list[str]]]:
    """The ``--bench`` measurements no budget took, with each budget's reason (a run-level pass)."""
    if not per_budget:
        return []
    taken = {(lk.file, id(lk.measurement)) for e in per_budget for lk in (*e.links, *e.production)}
    out = []
    for bf in run_files:
        for k, m in enumerate(bf.measurements):
            if (bf.path, id(m)) in taken:
                continue
            reasons = [why for e in per_budget for (path, idx, why) in e.declined if path == bf.path and idx == k]
            out.append((bf, m, reasons))
    return out
