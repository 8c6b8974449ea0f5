"""Options: what a run assumes and asks for, resolved once for every command.

:func:`resolve` is the one place where a command's flags, the config file
(``[tool.budgetlint]`` in pyproject.toml or ``budgetlint.toml``) and the
defaults meet: a flag beats the file, the file beats the default. ``check``,
``explain`` and every command to come call it, so the same inputs and
config give the same verdicts everywhere.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Options:
    """What a run assumes; the CLI and config file fill it in."""

    #: None: the deployment class's default (physics.default_efficiency, docs/calibration.md)
    efficiency_bandwidth: float | None = None
    efficiency_compute: float | None = None
    collective_overhead: float | None = None
    memory_usable_fraction: float = 0.9
    memory_reserve_bytes: float | None = None  # None: the default runtime reserve (evaluate.physics_inputs)
    teams_files: list[str] = field(default_factory=list)
    codeowners: str | None = None
    use_codeowners: bool = True
    bench: list[str] = field(default_factory=list)
    bench_format: str | None = None
    margin_warning: float = 0.10
    config: Any = None  # budgetlint.options.config_file.Config: select/ignore, per-file ignores, severity overrides
    base_ref: str | None = None  # compare with the budgets at this git ref (budgetlint.run.diff)
    fail_on_regression: bool = False
    #: with --base: the share of a still-met headroom that may shrink before BL505 (None: the
    #: default, budgetlint.run.diff.DEFAULT_REGRESSION_THRESHOLD, which never fails a run alone)
    regression_threshold: float | None = None
    jobs: int = 1  # worker processes for pass 2; 0: one per core (the CLI's default); 1: one process
    simulate: bool = True  # the load simulation (docs/load.md): --no-simulate or `simulate = false`
    #: the simulation cache between runs (evaluate/load_disk.py): the command line's default; off for
    #: callers of the API that do not ask (--no-cache, `cache = false`, BUDGETLINT_NO_CACHE=1 turn it off)
    cache: bool = False
    cache_dir: str | None = None  # --cache-dir (then $BUDGETLINT_CACHE_DIR, the config's cache-dir, the default)
    #: extra folders a run may read in (--allow-read, config allow-read); see files.discovery.read_roots
    allow_read: list[str] = field(default_factory=list)
    #: the folders this run reads in, set by run_check from its paths (None: not set yet)
    roots: list[str] | None = None
    #: benchmark files larger than this are refused unread (None: bench.MAX_BENCH_BYTES)
    max_bench_bytes: int | None = None
    prometheus: str | None = None  # check --prometheus URL: production evidence from a live server
    prometheus_window: str = "7d"
    slo_export: bool = False  # `budgetlint slo`: the bucket rules speak for every budget

    def cache_folder(self) -> Any:
        """The simulation cache's folder (a :class:`pathlib.Path`), or None when the run keeps none: off
        by option or ``BUDGETLINT_NO_CACHE``, or the simulation itself off."""
        if not (self.cache and self.simulate):
            return None
        from budgetlint.evaluate import load_disk

        if load_disk.disabled_by_environment():
            return None
        return self.cache_location()

    def cache_location(self) -> Any:
        """Where the simulation cache lives, whether or not this run keeps one (``budgetlint clean``):
        ``--cache-dir``, then ``$BUDGETLINT_CACHE_DIR``, then the config's ``cache-dir``, then the default."""
        from pathlib import Path

        from budgetlint.evaluate import load_disk

        if self.cache_dir:  # a "~" the shell left (--cache-dir=~/x, a workflow's env:) is the home folder
            return Path(os.path.expanduser(self.cache_dir))
        configured = getattr(self.config, "cache_dir", None) if self.config is not None else None
        if configured and not os.environ.get("BUDGETLINT_CACHE_DIR"):
            return Path(configured)
        return load_disk.default_dir()

    def evidence_defaults(self) -> Any:
        """The config's evidence policy (``evidence-max-age``, ``-engine``, ``-engine-version``); None
        when it sets none of them (a budget's own ``evidence:`` then decides alone, as with no config)."""
        cfg = self.config
        if cfg is None:
            return None
        values = (getattr(cfg, "evidence_max_age_days", None), getattr(cfg, "evidence_engine", None),
                  getattr(cfg, "evidence_engine_version", None))
        if all(v is None for v in values):
            return None
        from budgetlint.evaluate.freshness import Policy

        return Policy(*values, "config", "config", "config")

    def deployed_discovery(self) -> tuple:
        """(the folder the globs are relative to, the config's `deployed-config` globs); () when none."""
        globs = list(getattr(self.config, "deployed_config", []) or []) if self.config is not None else []
        return (self.config.base_dir, tuple(globs)) if globs else ()

    def prices(self) -> dict[str, float]:
        """The config's price list (``prices``): hardware name (lower case) -> USD/s per device."""
        return dict(getattr(self.config, "prices", {}) or {}) if self.config is not None else {}

    def calibration_max_age_days(self) -> float:
        """How old a calibration may be before BL311 (``calibration-max-age``, default 180 days)."""
        days = getattr(self.config, "calibration_max_age_days", None) if self.config is not None else None
        return 180.0 if days is None else days

    def assumptions(self) -> Any:
        """The realistic efficiencies the evaluation assumes where a deployment does not say."""
        from budgetlint.evaluate import Assumptions

        return Assumptions(self.efficiency_bandwidth, self.efficiency_compute, self.collective_overhead,
                           self.memory_usable_fraction, self.memory_reserve_bytes)


#: options the config file and the flags share, by name
ASSUMPTION_KEYS = ("efficiency_bandwidth", "efficiency_compute", "collective_overhead",
                   "memory_usable_fraction", "memory_reserve_bytes", "margin_warning")


def resolve(config: Any, **flags: Any) -> Options:
    """Options from the flags (``None``: not given) over ``config`` over the defaults.

    ``config`` is a loaded :class:`~budgetlint.options.config_file.Config`;
    flags are any of :class:`Options`' fields, plus ``no_codeowners`` and ``no_simulate``.
    """
    given = {k: v for k, v in flags.items() if v is not None}
    no_codeowners = bool(given.pop("no_codeowners", False))
    teams = list(config.teams) + list(given.pop("teams_files", ()))
    codeowners = given.pop("codeowners", None)
    options = Options(teams_files=teams, codeowners=codeowners or config.codeowners,
                      use_codeowners=not no_codeowners and (config.use_codeowners is not False
                                                            or codeowners is not None),
                      config=config)
    for name in ASSUMPTION_KEYS:
        if getattr(config, name) is not None:
            setattr(options, name, getattr(config, name))
    options.simulate = not given.pop("no_simulate", False) and config.simulate is not False
    options.cache = bool(given.pop("cache", False)) and getattr(config, "cache", None) is not False
    options.cache_dir = given.pop("cache_dir", None)
    options.fail_on_regression = bool(given.pop("fail_on_regression", False) or config.fail_on_regression)
    options.allow_read = list(getattr(config, "allow_read", [])) + list(given.pop("allow_read", ()))
    options.max_bench_bytes = getattr(config, "max_bench_bytes", None)
    threshold = given.pop("regression_threshold", None)
    options.regression_threshold = threshold if threshold is not None else config.regression_threshold
    for name, value in given.items():
        if not hasattr(options, name):
            raise TypeError(f"unknown option {name!r}")
        setattr(options, name, list(value) if isinstance(value, tuple) else value)
    return options
