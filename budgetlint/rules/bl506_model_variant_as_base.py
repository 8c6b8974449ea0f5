"""A model name is an instruction-tuned variant, read as its base model.

## What it checks
A deployment's model (or draft model) named with an `-Instruct`, `-chat` or
`-it` word that is not itself in the catalog, where the name without that
word is: `Llama-3.1-70B-Instruct` is read as `llama-3.1-70b`. (Names are
matched without regard to case, spaces, `-`, `_` and `/`, and without an
organisation prefix such as `meta-llama/`; that needs no note.)

## Why
An instruction-tuned model is its base model fine-tuned: the same layers,
heads and parameter count, which is all the physics reads. Reporting it
as unknown (and suggesting another model) turned every check of the budget
off for a name that was right.

## Example
```yaml
deployment:
  model: Llama-3.1-70B-Instruct   # BL506: read as 'llama-3.1-70b'
  hardware: h100-sxm
```

## Fix
Nothing is wrong. Write the base model's name to silence the note, or
define the variant in a `kind: models` file when its shape differs.
"""

from budgetlint.findings import Severity

CODE = "BL506"
NAME = "model-variant-as-base"
SUMMARY = "A model name is an instruction-tuned variant, read as its base model."
SEVERITY = Severity.INFO
