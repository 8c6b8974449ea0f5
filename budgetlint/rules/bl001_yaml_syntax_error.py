"""The file is not valid YAML.

## What it checks
A YAML syntax error, reported at the line and column where the parser
stopped.

## Why
Nothing in a file that does not parse can be checked; the rest of the run
goes on with the other files.

## Example
```yaml
promise:
  ttft: [400 ms     # BL001: did not find expected ',' or ']'
```

## Fix
Close the bracket, quote or indentation the message names.
"""

from budgetlint.findings import Severity

CODE = "BL001"
NAME = "yaml-syntax-error"
SUMMARY = "The file is not valid YAML."
SEVERITY = Severity.ERROR
