"""The configuration file has an unknown key, a wrong type or bad TOML.

## What it checks
The `[tool.budgetlint]` table of `pyproject.toml` (or `budgetlint.toml`, or
the file named with `--config`): TOML syntax, unknown keys (with a
did-you-mean), value types and ranges, and rule codes in `select`, `ignore`,
`per-file-ignores` and `severity` that match no rule.

## Why
A misspelt key is a setting silently not applied: `ingore = ["BL303"]`
would leave the gate exactly as strict as before while its author believes
otherwise. Like the budget files, the configuration is checked, never guessed.

## Example
```toml
[tool.budgetlint]
ingore = ["BL303"]
# pyproject.toml:2:1: BL501 unknown config key 'ingore'; did you mean 'ignore'?
```

## Fix
Correct the key or value; `docs/configuration.md` lists every key. BL501
findings are never filtered by `select`, `ignore` or suppressions.
"""

from __future__ import annotations

from budgetlint.findings import Severity

CODE = "BL501"
NAME = "config-invalid"
SUMMARY = "The configuration file has an unknown key, a wrong type or bad TOML."
SEVERITY = Severity.ERROR
