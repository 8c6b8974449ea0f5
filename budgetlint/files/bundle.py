"""One self-contained schema of every budgetlint file kind (``budgetlint schema --bundle``).

The schema files refer to each other by relative ``$ref`` (budgets.schema.json
dispatches on ``kind`` to teams.schema.json, hardware.schema.json, ...). A
catalog such as SchemaStore serves one file per entry: the bundle embeds each
sibling file under ``$defs/<kind>`` and points every ``$ref`` into the one
document, so nothing else is fetched.
"""

from __future__ import annotations

import copy
from typing import Any

from budgetlint.files.schema import KIND_SCHEMAS, load_schema

#: the file whose root is the bundle's root (it dispatches on ``kind``)
ROOT = "budgets.schema.json"
#: the ``$id`` SchemaStore would give the bundle (``--id`` sets another)
SCHEMASTORE_ID = "https://json.schemastore.org/budgetlint.json"


def _stem(filename: str) -> str:
    return filename.removesuffix(".schema.json")


def _rewrite(node: Any, here: str) -> Any:
    """``node`` with each ``$ref`` pointing into the bundle (``here``: the file ``node`` came from)."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                file, _, pointer = value.partition("#")
                file = file or here
                if file not in KIND_SCHEMAS.values():
                    raise ValueError(f"{here}: $ref {value!r} leaves the schema files")
                prefix = "" if file == ROOT else f"/$defs/{_stem(file)}"
                out[key] = "#" + prefix + pointer
            elif key in ("enum", "const", "examples", "default"):
                out[key] = copy.deepcopy(value)
            else:
                out[key] = _rewrite(value, here)
        return out
    if isinstance(node, list):
        return [_rewrite(v, here) for v in node]
    return node


def bundle(schema_id: str | None = None) -> dict:
    """The bundled schema: budgets.schema.json with every sibling kind's file under ``$defs``."""
    root = _rewrite(load_schema(ROOT), ROOT)
    defs = root.setdefault("$defs", {})
    for filename in KIND_SCHEMAS.values():
        if filename == ROOT:
            continue
        embedded = _rewrite(load_schema(filename), filename)
        embedded.pop("$schema", None)
        embedded.pop("$id", None)
        if _stem(filename) in defs:
            raise ValueError(f"{ROOT} already defines $defs/{_stem(filename)}")
        defs[_stem(filename)] = embedded
    out = {"$schema": root.pop("$schema")}
    if schema_id:
        out["$id"] = schema_id
    out.update(root)
    return out
