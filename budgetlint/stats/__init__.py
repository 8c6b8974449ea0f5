"""Pure statistics on plain floats (no files, no YAML, no units).

* :mod:`budgetlint.stats.order_stats`: distribution-free confidence intervals
  for a quantile from order statistics, and how many samples a percentile needs.
"""
