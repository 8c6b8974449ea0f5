"""A file cannot be read as UTF-8 text.

## What it checks
Files that cannot be opened, that hold binary data, or that are not UTF-8.

A CODEOWNERS found in the repository (`.github/CODEOWNERS`, `CODEOWNERS`,
`docs/CODEOWNERS`, the first there) that is a folder, a named pipe or a broken
link is a warning: the owner checks (BL103, BL104) run without it.

## Why
A budget file nobody can read is not checked; better to say so than to skip it.

## Example
A `budgets/logo.yaml` that is really a PNG: `BL010: expected YAML text; found binary data`.

## Fix
Save the file as UTF-8 YAML, fix its permissions, or move it out of the checked paths.
"""

from budgetlint.findings import Severity

CODE = "BL010"
NAME = "unreadable-file"
SUMMARY = "A file cannot be read as UTF-8 text."
SEVERITY = Severity.ERROR
#: severities other than SEVERITY this rule may give, and when
OTHER_SEVERITIES = {Severity.WARNING: "a directory is reached twice through symbolic links (not read again), or the "
                                      "CODEOWNERS found in the repository is no regular file (owners not verified against it)"}
