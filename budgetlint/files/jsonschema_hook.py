"""The ``budgetlint-jsonschema`` pre-commit hook: check-jsonschema against budgetlint's own schema.

For a repository that runs check-jsonschema on its YAML and wants budgetlint's
files held to budgetlint's schema (keys, types, units by pattern) without
running budgetlint's checks. The schema is the one installed with budgetlint
(the file's relative ``$ref``s resolve beside it: nothing is fetched).
``python -m budgetlint.files.jsonschema_hook FILE...`` runs
``check-jsonschema --schemafile <installed budgets.schema.json> FILE...``.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    from budgetlint.files.schema import schema_dir

    try:
        from check_jsonschema import main as check_jsonschema
    except ImportError:
        print("budgetlint: error: the budgetlint-jsonschema hook needs check-jsonschema "
              "(pip install check-jsonschema; the hook's additional_dependencies install it)", file=sys.stderr)
        return 2
    args = ["--schemafile", str(schema_dir() / "budgets.schema.json"), *(sys.argv[1:] if argv is None else argv)]
    try:
        check_jsonschema(args)
    except SystemExit as exc:  # click's standalone mode ends with the exit code
        return int(exc.code or 0) if not isinstance(exc.code, str) else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
