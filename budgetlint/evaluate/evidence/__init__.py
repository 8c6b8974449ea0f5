"""Benchmark evidence: link measurements to budgets and hold them against each promise.

Files come from two places:

* a budget's own ``bench:`` entries (paths or globs, relative to the budget
  file's directory): they are evidence for that budget;
* the run's ``--bench PATH`` files (``Options.bench``, relative to the working
  directory): they apply to the single budget of the run, or, with several
  budgets, to each budget whose deployment and workload the measurement
  matches.

Each file is read once per run (:class:`BenchStore`). Run conditions
the file lacks are filled from the budget's link (its workload and
deployment) and reported as *inferred from the budget*.

Per (budget, measurement) a :class:`Link` records whether the measurement
speaks for the budget (model, hardware, device count when known; concurrency
at least the budget's; prompt and output lengths within
:data:`LENGTH_TOLERANCE`; client edge for a client-edge promise) and, per
promise, the measured value at the budget's percentile in budgetlint's own
definitions (TPOT over all N output tokens). ``excludes_first_token`` TPOT
(vLLM style, over N - 1) converts exactly given N: ``x (N - 1) / N``;
``includes_ttft`` TPOT (LLMPerf) is refused, never mixed.

The evaluation stage calls :func:`link_budget` once per budget; the rules
BL401..BL411 read its :class:`BudgetEvidence` through ``rules/_evidence.py`` (one
iterator) and never read a file; their words are in ``rules/_messages.py``.

The package, a module per job (each imports only those above it in this list):

* :mod:`.store`: the run's benchmark files, each read once (``BenchStore``), and
  what a ``bench:`` entry or ``--bench`` glob names (``glob_entry``);
* :mod:`.records`: the data (``Reading``, ``Faster``, ``Link``, ``BudgetEvidence``);
* :mod:`.matching`: a run's conditions (read, inferred, or the budget's) and why a
  measurement does not speak for a budget (``mismatches``);
* :mod:`.readings`: each promise read at the budget's percentile, in budgetlint's
  TPOT definition (``readings_for``);
* :mod:`.trust`: sample sufficiency, run quality, age, staleness, entry expiry;
* :mod:`.bound`: the pure roofline at the run's own load, and every statistic
  faster than it (the facts; ``rules/_messages.faster_words`` says them, BL403);
* :mod:`.linking`: one budget's evidence (``link_budget``) and the ``--bench`` measurements no budget took;
* :mod:`.summary`: the report's ``analysis`` entries for the evidence.
"""
