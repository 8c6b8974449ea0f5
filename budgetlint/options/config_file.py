"""Configuration: ``[tool.budgetlint]`` in ``pyproject.toml`` or ``budgetlint.toml``.

The file is found from the working directory upwards, stopping at the git
root; in one directory ``budgetlint.toml`` wins over ``pyproject.toml``, and a
``pyproject.toml`` without a ``[tool.budgetlint]`` table is passed over.
``--config PATH`` names the file instead. In ``budgetlint.toml`` the keys sit at
the top level (a ``[tool.budgetlint]`` table is accepted too).

Paths in the file (``paths``, ``catalog``, ``teams``, ``codeowners``,
``per-file-ignores`` globs) are relative to the file's directory. Problems in
the file are BL501 findings with file:line:col; command-line flags override
the file (the CLI applies them on top of :class:`Config`).

No click here: the CLI maps a :class:`Config` onto ``checker.Options``.
"""

from __future__ import annotations

import math
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from budgetlint.files import fs
from budgetlint.files.discovery import display_path
from budgetlint.findings import Finding, Location, Severity, shown_number
from budgetlint.text import numbers

if sys.version_info >= (3, 11):  # pragma: no cover - depends on the interpreter
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CONFIG_RULE = "BL501"
#: config files (pyproject.toml included) larger than this are not read
MAX_CONFIG_BYTES = 1024 * 1024

#: every key the table may hold, in the order the docs list them
KEYS: tuple[str, ...] = (
    "paths",
    "select",
    "ignore",
    "per-file-ignores",
    "severity",
    "fail-on",
    "margin-warning",
    "efficiency",
    "collective-overhead",
    "memory-usable-fraction",
    "memory-reserve",
    "catalog",
    "teams",
    "codeowners",
    "fail-on-regression",
    "regression-threshold",
    "evidence-max-age",
    "calibration-max-age",
    "evidence-engine",
    "evidence-engine-version",
    "simulate",
    "cache",
    "cache-dir",
    "allow-read",
    "max-bench-size",
    "deployed-config",
    "prices",
)
EFFICIENCY_KEYS = ("bandwidth", "compute")
SEVERITIES = ("error", "warning", "info")
SELECTOR = re.compile(r"^BL[0-9]{0,3}$")


class ConfigError(Exception):
    """A config file named with ``--config`` that cannot be read at all (exit 2)."""


@dataclass
class Config:
    """What a config file asked for; ``None`` where it said nothing."""

    path: Path | None = None
    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    severity: dict[str, Severity] = field(default_factory=dict)
    fail_on: str | None = None
    margin_warning: float | None = None
    efficiency_bandwidth: float | None = None
    efficiency_compute: float | None = None
    collective_overhead: float | None = None
    memory_usable_fraction: float | None = None
    memory_reserve_bytes: float | None = None
    catalog: list[str] = field(default_factory=list)
    teams: list[str] = field(default_factory=list)
    codeowners: str | None = None
    use_codeowners: bool | None = None
    fail_on_regression: bool | None = None
    regression_threshold: float | None = None
    evidence_max_age_days: float | None = None
    calibration_max_age_days: float | None = None
    evidence_engine: str | None = None
    evidence_engine_version: str | None = None
    simulate: bool | None = None
    cache: bool | None = None  # the simulation cache between runs (evaluate/load_disk.py)
    cache_dir: str | None = None  # its folder, relative to the config file
    paths: list[str] = field(default_factory=list)
    allow_read: list[str] = field(default_factory=list)
    max_bench_bytes: int | None = None
    deployed_config: list[str] = field(default_factory=list)  # globs, relative to the config file
    prices: dict[str, float] = field(default_factory=dict)  # hardware name -> USD/s per device (docs/cost.md)
    findings: list[Finding] = field(default_factory=list)

    @property
    def base_dir(self) -> Path:
        return self.path.parent if self.path is not None else Path.cwd()


# -- finding the file --------------------------------------------------------------------------


def _toml(text: str) -> dict:
    """``tomllib.loads``, with what it raises besides TOMLDecodeError made one:
    RecursionError on a deeply nested array or inline table, ValueError on an
    integer beyond Python's digit limit (tomllib.TOMLDecodeError subclasses ValueError)."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        raise
    except RecursionError:
        line, col = _deepest(text)
        raise tomllib.TOMLDecodeError(f"nesting too deep for budgetlint to read (at line {line}, column {col})") \
            from None
    except ValueError as exc:  # int("1" + 5000 * "0"): Python's limit on integer digits
        m = re.search(r"\d{1000,}", text)
        line, col = _line_col(text, m.start()) if m else (1, 1)
        raise tomllib.TOMLDecodeError(f"a number too long to read ({exc.args[0].split(':')[0]}) "
                                      f"(at line {line}, column {col})") from None


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _deepest(text: str, limit: int = 100) -> tuple[int, int]:
    """Where ``[``/``{`` nesting (outside strings, roughly) first passes ``limit`` levels."""
    depth, quote = 0, ""
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return _line_col(text, i)
        elif ch in "]}":
            depth -= 1
    return 1, 1


def _has_table(path: Path) -> bool:
    try:
        data = _toml(fs.read_regular(path, MAX_CONFIG_BYTES).decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        # a broken pyproject.toml is not ours to report unless it names us
        try:
            return "[tool.budgetlint" in fs.read_regular(path, MAX_CONFIG_BYTES).decode("utf-8", errors="replace")
        except OSError:
            return False
    tool = data.get("tool")
    return isinstance(tool, dict) and "budgetlint" in tool


def find_config(start: Path | None = None) -> Path | None:
    """The config file for a run started in ``start`` (default: the cwd), or None."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        own = folder / "budgetlint.toml"
        if fs.is_file(own):
            return own
        pyproject = folder / "pyproject.toml"
        if fs.is_file(pyproject) and _has_table(pyproject):
            return pyproject
        if fs.exists(folder / ".git"):
            break
    return None


# -- positions ---------------------------------------------------------------------------------


class _Positions:
    """Line/column of keys by looking at the text: good enough for TOML messages."""

    def __init__(self, text: str, section: str | None) -> None:
        self.lines = text.splitlines()
        self.start = 0
        if section:
            header = re.compile(r"^\s*\[\s*" + r"\s*\.\s*".join(map(re.escape, section.split("."))) + r"\s*\]")
            for i, line in enumerate(self.lines):
                if header.match(line):
                    self.start = i
                    break

    def find(self, *keys: str) -> tuple[int, int]:
        """Where the last of ``keys`` is written (searching after the earlier ones)."""
        at = self.start
        col = 1
        for key in keys:
            pattern = re.compile(r'(^|[\s{,.\[])(["\']?)' + re.escape(key) + r'\2\s*(=|\]|\.)')
            for i in range(at, len(self.lines)):
                m = pattern.search(self.lines[i])
                if m:
                    at, col = i, m.start(2) + 1
                    break
        return at + 1, col


# -- loading -----------------------------------------------------------------------------------


def load_config(path: Path | str | None = None, *, start: Path | None = None) -> Config:
    """Read the config named by ``path``, or the one found from ``start``; an empty Config if none."""
    if path is not None:
        p = Path(path)
        if not fs.is_file(p):
            raise ConfigError(fs.no_file_words(p, "config"))
    else:
        found = find_config(start)
        if found is None:
            return Config()
        p = found
    return parse_config(p)


def parse_config(path: Path) -> Config:
    cfg = Config(path=path.resolve())
    where = display_path(path)
    try:
        text = fs.read_regular(path, MAX_CONFIG_BYTES).decode("utf-8")  # never a pipe, never unbounded
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config file {where}: {exc}") from None
    try:
        data = _toml(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+), column (\d+)", str(exc))
        if m:
            loc = Location(where, int(m.group(1)), int(m.group(2)))
        elif "end of document" in str(exc):
            lines = text.splitlines() or [""]
            loc = Location(where, len(lines), len(lines[-1]) + 1)
        else:
            loc = Location(where)
        msg = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", str(exc))
        cfg.findings.append(Finding(CONFIG_RULE, Severity.ERROR, f"config file is not valid TOML: {msg}", loc,
                                    fix="fix the TOML syntax"))
        return cfg

    if path.name == "pyproject.toml" or "tool" in data:
        tool = data.get("tool")
        table = tool.get("budgetlint") if isinstance(tool, dict) else None
        section = "tool.budgetlint"
        if not isinstance(table, dict):
            if path.name != "pyproject.toml":
                cfg.findings.append(Finding(CONFIG_RULE, Severity.ERROR,
                                            "expected the settings at the top level or under [tool.budgetlint]",
                                            Location(where), fix="move the keys to the top level"))
            return cfg
        others = [k for k in data if k != "tool"] if path.name != "pyproject.toml" else []
        for k in others:
            line, col = _Positions(text, None).find(k)
            cfg.findings.append(Finding(CONFIG_RULE, Severity.ERROR,
                                        f"unknown key {k!r} next to [tool.budgetlint]; put every setting in one place",
                                        Location(where, line, col)))
    else:
        table, section = data, None
    _Reader(cfg, table, _Positions(text, section), where).read()
    return cfg


def _did_you_mean(word: str, choices: list[str] | tuple[str, ...]) -> str:
    import difflib  # only for a key or value the config gets wrong

    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    if not close and "_" in word:
        close = [word.replace("_", "-")] if word.replace("_", "-") in choices else []
    return f"; did you mean {close[0]!r}?" if close else ""




def resolve_selector(text: str) -> tuple[str | None, str]:
    """A rule code, prefix ("BL3") or rule name -> (selector, error message or "")."""
    from budgetlint.rules import all_rules

    s = text.strip()
    up = s.upper()
    codes = [r.code for r in all_rules()]
    if up == "ALL":
        return "BL", ""
    if SELECTOR.match(up):
        if any(c.startswith(up) for c in codes):
            return up, ""
        hint = _did_you_mean(up, codes) if len(up) == 5 else ""
        return None, f"no rule code starts with {s!r}{hint}"
    for r in all_rules():
        if r.name == s.lower():
            return r.code, ""
    names = [r.name for r in all_rules()]
    hint = _did_you_mean(up, codes) or _did_you_mean(s.lower(), names)
    return None, f"unknown rule {s!r}{hint}"


class _Reader:
    def __init__(self, cfg: Config, table: dict, pos: _Positions, where: str) -> None:
        self.cfg, self.table, self.pos, self.where = cfg, table, pos, where

    def error(self, message: str, *keys: str, fix: str | None = None) -> None:
        line, col = self.pos.find(*keys) if keys else (self.pos.start + 1, 1)
        self.cfg.findings.append(Finding(CONFIG_RULE, Severity.ERROR, message, Location(self.where, line, col),
                                         fix=fix))

    # value readers ---------------------------------------------------------------------------

    def _strings(self, key: str, value: Any, *keys: str) -> list[str] | None:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.error(f"{key!r} must be a list of strings", *(keys or (key,)))
            return None
        return list(value)

    def _selectors(self, key: str, value: Any, *keys: str) -> list[str]:
        out: list[str] = []
        for item in self._strings(key, value, *keys) or []:
            sel, problem = resolve_selector(item)
            if sel is None:
                self.error(f"{key!r}: {problem}", *(keys or (key,)))
            else:
                out.append(sel)
        return out

    def _fraction(self, key: str, value: Any, *keys: str, allow_zero: bool = False,
                  upper: float | None = 1.0) -> float | None:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if isinstance(value, int) and ok:  # a 4,000-digit integer overflows math.isfinite
            ok = -(2**63) < value < 2**63
        ok = ok and math.isfinite(value)
        if ok:
            ok = (value >= 0 if allow_zero else value > 0) and (upper is None or value <= upper)
        if not ok:
            low = "0 <= x" if allow_zero else "0 < x"
            rng = f"{low} <= {numbers.stated(upper)}" if upper is not None else low
            self.error(f"{key!r} must be a number with {rng}, got {shown_number(value)}", *(keys or (key,)))
            return None
        return float(value)

    def _price(self, key: str, value: Any, *keys: str) -> float | None:
        """A price per device-hour with its unit ("2.50 USD/hour"), above zero: USD/s."""
        from budgetlint.model.units import UnitError, parse_quantity

        if isinstance(value, str):
            try:
                number, _kind = parse_quantity(value, "price_rate")
            except UnitError as exc:
                self.error(f"{key!r}: {exc.message}", *keys)
                return None
            if math.isfinite(number) and number > 0:
                return number
        self.error(f"{key!r} must be a price above zero with its unit such as \"2.50 USD/hour\", got {value!r}",
                   *keys)
        return None

    def _bytes(self, key: str, value: Any) -> float | None:
        """A memory size with its unit ("3 GiB"); 0 is allowed."""
        from budgetlint.model.units import UnitError, parse_quantity

        if isinstance(value, str):
            try:
                number, _kind = parse_quantity(value, "information")
            except UnitError as exc:
                self.error(f"{key!r}: {exc.message}", key)
                return None
            if math.isfinite(number) and number >= 0:
                return number
        self.error(f"{key!r} must be a memory size with its unit such as \"3 GiB\", got {value!r}", key)
        return None

    def _path(self, value: str) -> str:
        """A path setting: relative to the config file's folder; a leading ``~`` (``~`` or ``~/...``) is the
        home folder, as in ruff's settings (``cache-dir = "~/.cache/x"``), not a folder named ``~``."""
        if value == "~" or value.startswith(("~/", "~" + os.sep)):
            value = os.path.expanduser(value)
        p = Path(value)
        return str(p if p.is_absolute() else (self.cfg.base_dir / p))

    # the table -------------------------------------------------------------------------------

    def read(self) -> None:
        cfg, t = self.cfg, self.table
        for key in t:
            if key not in KEYS:
                self.error(f"unknown config key {key!r}{_did_you_mean(key, KEYS)}", key,
                           fix="see docs/configuration.md for every key")
        if "paths" in t:
            cfg.paths = [self._path(v) for v in self._strings("paths", t["paths"]) or []]
        if "select" in t:
            cfg.select = self._selectors("select", t["select"])
        if "ignore" in t:
            cfg.ignore = self._selectors("ignore", t["ignore"])
        if "per-file-ignores" in t:
            value = t["per-file-ignores"]
            if not isinstance(value, dict):
                self.error("'per-file-ignores' must be a table of glob = [rule codes]", "per-file-ignores")
            else:
                for glob, codes in value.items():
                    sels = self._selectors(f"per-file-ignores.{glob}", codes, "per-file-ignores", glob)
                    if sels:
                        cfg.per_file_ignores[glob] = sels
        if "severity" in t:
            value = t["severity"]
            if not isinstance(value, dict):
                self.error("'severity' must be a table of rule code = \"error\" | \"warning\" | \"info\"",
                           "severity")
            else:
                for code, level in value.items():
                    sel, problem = resolve_selector(code)
                    if sel is None:
                        self.error(f"'severity': {problem}", "severity", code)
                        continue
                    if not isinstance(level, str) or level.lower() not in SEVERITIES:
                        self.error(f"'severity.{code}' must be one of error, warning, info, got {level!r}"
                                   f"{_did_you_mean(str(level).lower(), SEVERITIES)}", "severity", code)
                        continue
                    cfg.severity[sel] = Severity.parse(level)
        if "fail-on" in t:
            level = t["fail-on"]
            if not isinstance(level, str) or level.lower() not in SEVERITIES:
                self.error(f"'fail-on' must be one of error, warning, info, got {level!r}"
                           f"{_did_you_mean(str(level).lower(), SEVERITIES)}", "fail-on")
            else:
                cfg.fail_on = level.lower()
        if "evidence-max-age" in t:
            from budgetlint.model.build import parse_age

            days = parse_age(t["evidence-max-age"])
            if days is None:
                self.error(f"'evidence-max-age' must be an age such as \"90 days\" or \"12 weeks\", "
                           f"got {t['evidence-max-age']!r}", "evidence-max-age")
            cfg.evidence_max_age_days = days
        if "calibration-max-age" in t:
            from budgetlint.model.build import parse_age

            days = parse_age(t["calibration-max-age"])
            if days is None:
                self.error(f"'calibration-max-age' must be an age such as \"90 days\" or \"12 weeks\", "
                           f"got {t['calibration-max-age']!r}", "calibration-max-age")
            cfg.calibration_max_age_days = days
        for key, attr in (("evidence-engine", "evidence_engine"), ("evidence-engine-version", "evidence_engine_version")):
            if key in t:
                value = t[key]
                if isinstance(value, bool) or not isinstance(value, (str, int, float)):
                    self.error(f"'{key}' must be a string, got {value!r}", key)
                else:
                    setattr(cfg, attr, str(value))
        if "margin-warning" in t:
            cfg.margin_warning = self._fraction("margin-warning", t["margin-warning"], allow_zero=True)
        if "efficiency" in t:
            value = t["efficiency"]
            if not isinstance(value, dict):
                self.error("'efficiency' must be a table {bandwidth = 0.6, compute = 0.5}", "efficiency")
            else:
                for k, v in value.items():
                    if k not in EFFICIENCY_KEYS:
                        self.error(f"unknown key 'efficiency.{k}'{_did_you_mean(k, EFFICIENCY_KEYS)}",
                                   "efficiency", k)
                        continue
                    f = self._fraction(f"efficiency.{k}", v, "efficiency", k)
                    setattr(cfg, f"efficiency_{k}", f)
        if "collective-overhead" in t:
            cfg.collective_overhead = self._fraction("collective-overhead", t["collective-overhead"],
                                                     allow_zero=True, upper=0.99)
        if "memory-usable-fraction" in t:
            cfg.memory_usable_fraction = self._fraction("memory-usable-fraction", t["memory-usable-fraction"])
        if "memory-reserve" in t:
            cfg.memory_reserve_bytes = self._bytes("memory-reserve", t["memory-reserve"])
        if "catalog" in t:
            cfg.catalog = [self._path(v) for v in self._strings("catalog", t["catalog"]) or []]
        if "teams" in t:
            cfg.teams = [self._path(v) for v in self._strings("teams", t["teams"]) or []]
        if "codeowners" in t:
            value = t["codeowners"]
            if value is False:
                cfg.use_codeowners = False
            elif isinstance(value, str):
                cfg.use_codeowners, cfg.codeowners = True, self._path(value)
            else:
                self.error(f"'codeowners' must be a path or false, got {value!r}", "codeowners")
        if "fail-on-regression" in t:
            if isinstance(t["fail-on-regression"], bool):
                cfg.fail_on_regression = t["fail-on-regression"]
            else:
                self.error("'fail-on-regression' must be true or false", "fail-on-regression")
        if "regression-threshold" in t:
            cfg.regression_threshold = self._fraction("regression-threshold", t["regression-threshold"],
                                                      allow_zero=True, upper=None)
        if "simulate" in t:
            if isinstance(t["simulate"], bool):
                cfg.simulate = t["simulate"]
            else:
                self.error("'simulate' must be true or false", "simulate")
        if "cache" in t:
            if isinstance(t["cache"], bool):
                cfg.cache = t["cache"]
            else:
                self.error("'cache' must be true or false", "cache")
        if "cache-dir" in t:
            if isinstance(t["cache-dir"], str) and t["cache-dir"].strip():
                cfg.cache_dir = self._path(t["cache-dir"])  # "~/.cache/x": the home folder (_path)
            else:
                self.error("'cache-dir' must be a folder's path (a string)", "cache-dir")
        if "allow-read" in t:
            cfg.allow_read = [self._path(v) for v in self._strings("allow-read", t["allow-read"]) or []]
        if "deployed-config" in t:  # repository-wide discovery of deployed configurations (docs/deployed-config.md)
            cfg.deployed_config = list(self._strings("deployed-config", t["deployed-config"]) or [])
        if "prices" in t:  # an organisation's price list (docs/cost.md)
            value = t["prices"]
            if not isinstance(value, dict):
                self.error("'prices' must be a table of hardware name = \"2.50 USD/hour\"", "prices")
            else:
                for hw, price in value.items():
                    usd_per_s = self._price(f"prices.{hw}", price, "prices", hw)
                    if usd_per_s is not None:
                        cfg.prices[str(hw).strip().lower()] = usd_per_s
        if "max-bench-size" in t:
            mib = self._fraction("max-bench-size", t["max-bench-size"], upper=1024 * 1024)
            if mib is not None:
                cfg.max_bench_bytes = int(mib * 1024 * 1024)

