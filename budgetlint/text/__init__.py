"""How budgetlint writes for people: the one place where numbers become text.

A leaf of the vocabulary layer (like ``findings.py``): it imports nothing of
budgetlint, so files, model, evaluate, rules, reporters, options and run may
all use it; the pure core (``physics/``, ``stats/``) may not, and returns
floats instead.
"""
