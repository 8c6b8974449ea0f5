"""Generate docs/format.md, the reference of every key of every kind, from the schemas.

    python docs/format_reference.py           # write docs/format.md
    python docs/format_reference.py --check   # exit 1 when docs/format.md is not what the schemas give

The schemas (``schemas/*.schema.json``) are the one source: each key's path,
type, whether it is required, its description, allowed values, pattern,
bounds and examples come from there, ``$ref`` resolved (within a file and
across files). ``tests/docs/test_format_reference.py`` fails when the file is
stale, so a schema edit comes with its reference.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SCHEMAS = REPO / "schemas"
OUT = REPO / "docs" / "format.md"

#: (file, heading, what it is) in the order of the reference
DOCUMENTS = (
    ("budgets.schema.json#/$defs/document", "kind: budgets", "latency budgets: promises, workload, deployment, segments"),
    ("hardware.schema.json", "kind: hardware", "accelerators (user entries beside the built-in catalog)"),
    ("models.schema.json", "kind: models", "model architectures (user entries beside the built-in catalog)"),
    ("teams.schema.json", "kind: teams", "the teams registry (owner handles)"),
    ("calibration.schema.json", "kind: calibration", "written by `budgetlint calibrate` (docs/calibration.md)"),
    ("benchmark.schema.json", "kind: budgetlint-benchmark", "budgetlint's own benchmark format (docs/benchmarks.md)"),
    ("config.schema.json", "configuration", "`[tool.budgetlint]` in pyproject.toml, or budgetlint.toml"),
)
MAX_DEPTH = 12


class Schemas:
    def __init__(self, folder: Path) -> None:
        self.docs = {p.name: json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.schema.json"))}

    def resolve(self, node: Any, here: str) -> tuple[Any, str]:
        """Follow ``$ref`` (``#/$defs/x`` or ``file.json#/$defs/x``) until a node without one."""
        seen = 0
        while isinstance(node, dict) and "$ref" in node and seen < 20:
            ref = node["$ref"]
            file, _, pointer = ref.partition("#")
            file = file.rsplit("/", 1)[-1] or here
            target: Any = self.docs[file]
            for part in [p for p in pointer.split("/") if p]:
                target = target[part.replace("~1", "/").replace("~0", "~")]
            extra = {k: v for k, v in node.items() if k != "$ref"}
            node = {**target, **extra} if extra and isinstance(target, dict) else target
            here, seen = file, seen + 1
        return node, here


def _type(node: dict) -> str:
    if "const" in node:
        return f"`{json.dumps(node['const'])}`"
    if "enum" in node:
        return " \\| ".join(f"`{json.dumps(v)}`" for v in node["enum"])
    t = node.get("type")
    words = t if isinstance(t, list) else [t] if t else []
    if "array" in words and isinstance(node.get("items"), dict):
        item = node["items"]
        inner = item.get("type") if isinstance(item.get("type"), str) else ("object" if "properties" in item else "")
        words = [f"array of {inner}" if w == "array" and inner else w for w in words]
    return ", ".join(words) or ("one of" if ("oneOf" in node or "anyOf" in node) else "")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ").strip()


def _facts(node: dict) -> str:
    parts = []
    if node.get("description"):
        parts.append(str(node["description"]))
    for key, word in (("minimum", "at least"), ("exclusiveMinimum", "above"), ("maximum", "at most"),
                      ("exclusiveMaximum", "below"), ("minLength", "length at least"), ("maxLength", "length at most"),
                      ("minItems", "items at least"), ("maxItems", "items at most")):
        if key in node:
            parts.append(f"{word} {node[key]}")
    if "pattern" in node:
        parts.append(f"pattern `{node['pattern']}`")
    if "default" in node:
        parts.append(f"default `{json.dumps(node['default'])}`")
    if node.get("examples"):
        parts.append("e.g. " + ", ".join(f"`{json.dumps(e, ensure_ascii=False)}`" for e in node["examples"][:4]))
    return _cell(". ".join(p.rstrip(".") for p in parts))


class Writer:
    def __init__(self, schemas: Schemas) -> None:
        self.s = schemas
        self.rows: list[tuple[str, str, str, str]] = []

    def merged(self, node: Any, here: str) -> tuple[Any, str]:
        """``node`` resolved, with its ``allOf`` parts merged in (later properties refine earlier)."""
        node, here = self.s.resolve(node, here)
        if not isinstance(node, dict) or "allOf" not in node:
            return node, here
        out: dict = {}
        for part in [*node["allOf"], {k: v for k, v in node.items() if k != "allOf"}]:
            part, _ = self.merged(part, here)
            if not isinstance(part, dict):
                continue
            props = {**out.get("properties", {})}
            for name, child in (part.get("properties") or {}).items():
                old = props.get(name)
                props[name] = {**old, **child} if isinstance(old, dict) and isinstance(child, dict) else child
            out.update({k: v for k, v in part.items() if k != "properties"})
            if props:
                out["properties"] = props
            if "required" in part:
                out["required"] = sorted(set(out.get("required", [])) | set(part["required"]))
        return out, here

    def walk(self, node: Any, here: str, path: str, required: bool, depth: int = 0) -> None:
        node, here = self.merged(node, here)
        if not isinstance(node, dict) or depth > MAX_DEPTH:
            return
        if path:
            shown = node
            if isinstance(node.get("items"), dict):
                shown = {**node, "items": self.s.resolve(node["items"], here)[0]}
            self.rows.append((path, _type(shown), "yes" if required else "", _facts(node)))
        alternatives = [a for key in ("oneOf", "anyOf") for a in node.get(key, [])]
        for alt in alternatives:
            alt, alt_here = self.merged(alt, here)
            if isinstance(alt, dict) and ("properties" in alt or "items" in alt or "additionalProperties" in alt):
                self._children(alt, alt_here, path, depth)
        self._children(node, here, path, depth)

    def _children(self, node: dict, here: str, path: str, depth: int) -> None:
        req = set(node.get("required", []))
        for name, child in (node.get("properties") or {}).items():
            self.walk(child, here, f"{path}.{name}" if path else name, name in req, depth + 1)
        extra = node.get("additionalProperties")
        if isinstance(extra, dict) and extra:
            self.walk(extra, here, f"{path}.<name>" if path else "<name>", False, depth + 1)
        for name, child in (node.get("patternProperties") or {}).items():
            self.walk(child, here, f"{path}.<{name}>", False, depth + 1)
        items = node.get("items")
        if isinstance(items, dict):
            item, item_here = self.merged(items, here)
            if isinstance(item, dict) and ("properties" in item or "oneOf" in item or "anyOf" in item):
                self._children_of_item(item, item_here, f"{path}[]", depth)

    def _children_of_item(self, item: dict, here: str, path: str, depth: int) -> None:
        for alt in [a for key in ("oneOf", "anyOf") for a in item.get(key, [])]:
            alt, alt_here = self.s.resolve(alt, here)
            if isinstance(alt, dict):
                self._children(alt, alt_here, path, depth + 1)
        self._children(item, here, path, depth + 1)


def render(folder: Path = SCHEMAS) -> str:
    schemas = Schemas(folder)
    out = [
        "# The file format: every key of every kind",
        "",
        "<!-- Generated by `python docs/format_reference.py` from schemas/*.schema.json: do not edit by hand.",
        "     tests/docs/test_format_reference.py fails when it is not what the schemas give. -->",
        "",
        "One table per kind of document, generated from its JSON Schema (`schemas/`). A path is the",
        "key's place in the document: `a.b` is key `b` inside `a`, `a[]` an element of the list `a`,",
        "`<name>` a key you choose. *Required* means required where its parent is given. Quantities",
        "are strings with a unit (`\"400 ms\"`, `\"3.35 TB/s\"`: docs/design.md, *Quantities*); the",
        "meaning of the physics keys is in docs/physics.md, of the traffic keys in docs/load.md.",
        "",
    ]
    out += [f"- [{heading}](#{heading.replace(':', '').replace(' ', '-').lower()}): {what}"
            for _, heading, what in DOCUMENTS]
    out.append("")
    for where, heading, what in DOCUMENTS:
        file, _, pointer = where.partition("#")  # a file, or a document definition inside one
        doc = schemas.docs.get(file)
        if doc is None:
            continue
        root = schemas.resolve({"$ref": f"{file}#{pointer}"}, file)[0] if pointer else doc
        w = Writer(schemas)
        w.walk(root, file, "", True)
        out += [f"## {heading}", "", f"{what}. Schema: `schemas/{file}`"
                + (f" ({doc['title']})." if doc.get("title") else "."), "",
                "| key | type | required | what it is |", "|---|---|---|---|"]
        out += [f"| `{path}` | {typ} | {req} | {facts} |" for path, typ, req, facts in w.rows]
        out.append("")
    return "\n".join(out)


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text:
            print(f"{OUT.relative_to(REPO)} is stale: run `python docs/format_reference.py`", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
