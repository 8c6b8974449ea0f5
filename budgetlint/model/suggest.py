"""Did-you-mean suggestions in bounded time.

``difflib.get_close_matches`` compares a word with every candidate using
``SequenceMatcher.ratio()``, quadratic in the name lengths: 5,000 unknown
owners against 500 teams took 94 s. A :class:`Suggester` keeps the same
answer for ordinary cases and bounds the hostile ones:

* the full ``ratio()`` runs only on the ``MAX_RATIO`` candidates with the
  best cheap upper bound (``quick_ratio``, a multiset overlap);
* each distinct word is looked up once (memoised);
* at most ``MAX_WORDS`` distinct words per suggester (per run) get a
  suggestion; later unknown names are still reported, without a hint.
"""

from __future__ import annotations

from typing import Iterable

#: distinct words that get a did-you-mean per suggester (a run); later ones get none
MAX_WORDS = 200
#: candidates that get the full (quadratic) similarity ratio, per word
MAX_RATIO = 32


class Suggester:
    def __init__(self, candidates: Iterable[str], cutoff: float = 0.6) -> None:
        self.candidates = list(dict.fromkeys(candidates))  # order kept, duplicates dropped
        self.cutoff = cutoff
        self.memo: dict[str, str | None] = {}

    def __call__(self, word: str) -> str | None:
        if word in self.memo:
            return self.memo[word]
        if len(self.memo) >= MAX_WORDS:
            return None
        self.memo[word] = found = closest(word, self.candidates, self.cutoff)
        return found


def closest(word: str, candidates: list[str], cutoff: float = 0.6) -> str | None:
    """The candidate most similar to ``word`` (ratio >= cutoff), as get_close_matches(n=1) picks it."""
    import heapq  # here: a run with every owner known never asks (difflib is ~1 ms of a cold start)
    from difflib import SequenceMatcher

    s = SequenceMatcher()
    s.set_seq2(word)
    shortlist: list[tuple[float, int, str]] = []
    for i, c in enumerate(candidates):
        s.set_seq1(c)
        if s.real_quick_ratio() >= cutoff:
            q = s.quick_ratio()
            if q >= cutoff:
                shortlist.append((-q, i, c))
    best: tuple[float, str] | None = None
    for _, _, c in heapq.nsmallest(MAX_RATIO, shortlist):
        s.set_seq1(c)
        r = s.ratio()
        # get_close_matches keeps the highest ratio, and of equal ratios the greatest string
        if r >= cutoff and (best is None or (r, c) > best):
            best = (r, c)
    return best[1] if best else None


#: longest word the typo distance is computed for (it is quadratic in the lengths)
MAX_TYPO_CHARS = 100


def typo_distance(a: str, b: str) -> int:
    """Edits between ``a`` and ``b``: insertions, deletions, substitutions and swaps of two
    neighbours (optimal string alignment), as a typo makes them."""
    if len(a) > MAX_TYPO_CHARS or len(b) > MAX_TYPO_CHARS:
        return max(len(a), len(b))
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        row = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                row[j] = min(row[j], prev2[j - 2] + 1)
        prev2, prev = prev, row
    return prev[-1]


def is_typo_of(word: str, candidate: str) -> bool:
    """Whether ``word`` reads as a mistyped ``candidate``: at most 2 edits, and no more than a
    third of the shorter one's letters (``h100-sxn`` for ``h100-sxm``, not ``edge`` for ``serving``)."""
    word, candidate = word.lower(), candidate.lower()
    limit = min(2, max(1, min(len(word), len(candidate)) // 3))
    return typo_distance(word, candidate) <= limit


def near_handle(word: str, candidate: str) -> bool:
    """Whether owner ``word`` is a typo of handle ``candidate``: ``@org/team`` handles are near only
    when one part is the same and the other a typo of it (``@acme/chta`` for ``@acme/chat``); a
    different team of the same organisation is never suggested (``@platform/edge`` is not
    ``@platform/serving``)."""
    w, c = word.lower(), candidate.lower()
    if "/" in w and "/" in c:
        (wo, wt), (co, ct) = w.split("/", 1), c.split("/", 1)
        if wo == co:
            return is_typo_of(wt, ct)
        if wt == ct:
            return is_typo_of(wo, co)
        return False
    return is_typo_of(w, c)
