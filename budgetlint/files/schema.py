"""JSON Schema validation of documents, with errors mapped to YAML positions.

One compiled validator per schema, built on first use. Unknown keys get a
did-you-mean suggestion (BL004); every other schema error is BL003, located
at the offending value (or at the key, for an unexpected key).
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import Any, Iterator

from budgetlint.findings import Finding, Severity
from budgetlint.files.loader import Document

#: The document kinds and their schema files.
KIND_SCHEMAS = {
    "budgets": "budgets.schema.json",
    "hardware": "hardware.schema.json",
    "models": "models.schema.json",
    "teams": "teams.schema.json",
    "calibration": "calibration.schema.json",
}


#: The pointer of each kind's document schema inside its file, where that is not the file's root:
#: budgets.schema.json's root dispatches on ``kind`` to every kind (one schema for editors and
#: check-jsonschema), its budgets document is ``$defs/document``.
KIND_ROOTS = {"budgets": "#/$defs/document"}

#: The base URI the schema files are registered under when jsonschema resolves their ``$ref``s.
#: The files carry no ``$id``: their relative ``$ref``s resolve against wherever the file is
#: (``check-jsonschema --schemafile schemas/budgets.schema.json`` needs no network and no flag).
BASE_URI = "https://budgetlint.dev/schemas/"

#: The keyword of a quantity definition (model/quantity_patterns.py): its type and pattern errors
#: are left to the unit parser, whose BL005/BL006/BL007 say more (model/build.py).
QUANTITY_KEYWORD = "x-budgetlint-quantity"


@functools.lru_cache(maxsize=None)
def schema_dir() -> Path:
    """Where the schemas are: inside the installed wheel (budgetlint/_schemas), or the repo's schemas/.

    A plain path next to this package, as ``importlib.resources.files`` gives for a package on
    the file system (its import was ~4 ms of every start)."""
    here = Path(__file__).resolve().parents[1]
    packaged = here / "_schemas"
    if packaged.is_dir():
        return packaged
    return here.parent / "schemas"


@functools.lru_cache(maxsize=None)
def load_schema(filename: str) -> dict:
    import json  # only when jsonschema validates a document (or the fast path is regenerated)

    return json.loads((schema_dir() / filename).read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=None)
def validator(kind: str) -> Any:
    """The compiled validator of one document kind (with $refs to the others)."""
    import jsonschema
    from referencing import Registry, Resource

    resources_ = []
    for filename in KIND_SCHEMAS.values():
        schema = load_schema(filename)
        resources_.append((BASE_URI + filename, Resource.from_contents(schema)))
    registry = Registry().with_resources(resources_)
    schema = load_schema(KIND_SCHEMAS[kind])
    cls = jsonschema.validators.validator_for(schema)
    # $refs inlined once here: resolving them through the registry on every
    # use was a third of the validation time (benchmarks/bench_speed.py)
    inlined = _inline_refs(kind_schema(kind), KIND_SCHEMAS[kind])
    root = {"$ref": BASE_URI + KIND_SCHEMAS[kind] + KIND_ROOTS.get(kind, "")}
    return cls(inlined if inlined is not None else root, registry=registry,
               format_checker=_format_checker(cls))


def kind_schema(kind: str) -> dict:
    """The schema of one kind's documents (for budgets: ``$defs/document`` of the file)."""
    target: Any = load_schema(KIND_SCHEMAS[kind])
    for part in KIND_ROOTS.get(kind, "#").partition("#")[2].strip("/").split("/"):
        if part:
            target = target[part]
    return target


def _format_checker(cls: Any) -> Any:
    """The validator's format checker with budgetlint's one date parser (files.dates)."""
    import jsonschema

    from budgetlint.files.dates import is_date

    checker = jsonschema.FormatChecker()
    checker.checkers = dict(cls.FORMAT_CHECKER.checkers)
    checker.checks("date")(is_date)
    return checker


def _inline_refs(node: Any, here: str, depth: int = 0) -> Any:
    """``node`` with each ``$ref`` (local or to a sibling schema file) replaced by
    its target; None for a recursive or unresolvable schema (kept as it is)."""
    if depth > 32:
        return None
    if isinstance(node, dict):
        if "$ref" in node and isinstance(node["$ref"], str):
            file, _, pointer = node["$ref"].partition("#")
            file = file or here
            if file not in KIND_SCHEMAS.values():
                return None
            target: Any = load_schema(file)
            for part in pointer.strip("/").split("/"):
                if part:
                    if not isinstance(target, dict) or part not in target:
                        return None
                    target = target[part]
            out = _inline_refs(target, file, depth + 1)
            rest = {k: v for k, v in node.items() if k != "$ref"}
            if out is None or not rest:
                return out
            rest_out = _inline_refs(rest, here, depth + 1)
            return None if rest_out is None else {"allOf": [out, rest_out]}
        result = {}
        for key, value in node.items():
            if key == "$defs":
                continue
            if key in ("enum", "const", "examples", "default"):
                result[key] = value
                continue
            inner = _inline_refs(value, here, depth + 1)
            if inner is None and value is not None:
                return None
            result[key] = inner
        return result
    if isinstance(node, list):
        items = [_inline_refs(v, here, depth + 1) for v in node]
        return None if any(i is None and v is not None for i, v in zip(items, node)) else items
    return node


def _describe(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, list):
        return f"a list of {len(value)} items"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def _allowed_keys(schema: dict) -> list[str]:
    return sorted(schema.get("properties", {}))


def _leaf_errors(error: Any) -> Iterator[Any]:
    """For oneOf/anyOf, descend to the errors of the branch that fits best."""
    if error.validator in ("oneOf", "anyOf") and error.context:
        # Branches whose type fits the value hold the useful errors.
        fitting = [e for e in error.context if not (e.validator == "type" and not e.relative_path)]
        if fitting:
            for sub in fitting:
                yield from _leaf_errors(sub)
            return
    yield error


def _guard(node: Any) -> Any:
    """The inlined schema with the fast path's looser spots closed.

    fastjsonschema compares ``const``/``enum`` with ``==``, where ``True == 1``;
    jsonschema tells booleans from numbers. Each const/enum holding a number or
    a boolean also gets the type of its values, so the fast path never
    accepts what jsonschema rejects (tests/fuzz/test_schema_fast_path.py).
    """
    if isinstance(node, dict):
        out = {k: (v if k in ("enum", "const", "examples", "default") else _guard(v)) for k, v in node.items()}
        values = node["enum"] if isinstance(node.get("enum"), list) else (
            [node["const"]] if "const" in node else [])
        if any(isinstance(v, (bool, int, float)) for v in values):
            types = sorted({"boolean" if isinstance(v, bool) else "number" if isinstance(v, (int, float))
                            else "null" if v is None else "string" if isinstance(v, str)
                            else "array" if isinstance(v, list) else "object" for v in values})
            return {"allOf": [out, {"type": types}]}
        return out
    if isinstance(node, list):
        return [_guard(v) for v in node]
    return node


_ANNOTATIONS = {"description", "examples", "title", "default", "$comment", QUANTITY_KEYWORD}


def _without_quantity_checks(node: Any) -> Any:
    """``node`` with each quantity definition's type and pattern left out: their errors are the unit
    parser's to report (:func:`_left_to_the_parser`), so the fast path need not look. Matching the
    long unit patterns was a third of the fast path's time on budgets/."""
    if isinstance(node, dict):
        if QUANTITY_KEYWORD in node:
            return {k: v for k, v in node.items() if k not in ("type", "pattern")}
        out = {k: (v if k in ("enum", "const", "examples", "default") else _without_quantity_checks(v))
               for k, v in node.items()}
        if isinstance(out.get("allOf"), list) and all(isinstance(s, dict) and set(s) <= _ANNOTATIONS
                                                       for s in out["allOf"]):
            del out["allOf"]  # a $ref to a quantity beside its description: nothing left to check
        return out
    if isinstance(node, list):
        return [_without_quantity_checks(v) for v in node]
    return node


def fast_schema(kind: str) -> dict | None:
    """What the fast path compiles for ``kind``: our schema with its $refs inlined, guarded, read as draft 7
    (our subset of JSON Schema means the same there)."""
    inlined = _inline_refs(kind_schema(kind), KIND_SCHEMAS[kind])
    if inlined is None:
        return None
    schema = dict(_guard(_without_quantity_checks(inlined)))
    schema["$schema"] = "http://json-schema.org/draft-07/schema#"
    return schema


def schemas_digest() -> str:
    """A digest of every kind's fast-path schema: the compiled module is current when it names this one
    (a test holds it: tests/fuzz/test_schema_fast_path.py)."""
    import hashlib
    import json

    text = json.dumps({kind: fast_schema(kind) for kind in KIND_SCHEMAS}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def sources_checksum() -> str:
    """A cheap checksum of the schema files the fast path is compiled from (the kinds' files: a
    ``$ref`` to any other file leaves a kind to jsonschema alone), checked at every start instead of
    ``schemas_digest`` (which loads, inlines and hashes every schema: ~10 ms of a cold start). Edit a
    schema and the compiled checks are off until regenerated; the digest test still covers a change
    to how the fast-path schemas are derived (``_guard``, ``_inline_refs``)."""
    import zlib

    crc = 0
    for filename in sorted(set(KIND_SCHEMAS.values())):
        data = (schema_dir() / filename).read_bytes().replace(b"\r\n", b"\n")  # a checkout's line ends
        crc = zlib.crc32(b"%s %d\n" % (filename.encode(), len(data)), crc)
        crc = zlib.crc32(data, crc)
    return f"crc32:{crc:08x}"


def is_date(value: Any) -> bool:
    """jsonschema's ``date`` format check (jsonschema/_format.py), without importing jsonschema."""
    import datetime
    import re

    if not isinstance(value, str):
        return True
    try:
        return bool(re.fullmatch(r"\d{4}-\d{2}-\d{2}", value, re.ASCII) and datetime.date.fromisoformat(value))
    except ValueError:
        return False


FORMATS = {"date": is_date}


def generate_compiled_module() -> str:
    """The source of ``budgetlint/files/_schema_compiled.py`` (needs fastjsonschema, a development tool).

    Regenerate after editing a schema: ``python -m budgetlint.files.schema``
    (a test fails while the module is stale; until then the fast path is off).
    """
    import fastjsonschema

    parts = [f'''"""Generated by `python -m budgetlint.files.schema` (fastjsonschema {fastjsonschema.VERSION}): do not edit.

Yes/no checks of our schemas, compiled to Python; files/schema.py lets them
vouch for valid documents and sends every other document to jsonschema.
"""
# flake8: noqa
# fmt: off

SCHEMAS_DIGEST = {schemas_digest()!r}
SOURCES_CHECKSUM = {sources_checksum()!r}


class JsonSchemaValueException(ValueError):
    def __init__(self, message, value=None, name=None, definition=None, rule=None):
        super().__init__(message)


class JsonSchemaValuesException(ValueError):
    def __init__(self, errors):
        super().__init__(errors)


VALIDATORS = {{}}
''']
    for kind in KIND_SCHEMAS:
        schema = fast_schema(kind)
        if schema is None:
            continue
        code = fastjsonschema.compile_to_code(schema, formats=FORMATS, use_default=False)
        code = code.replace("from fastjsonschema import JsonSchemaValueException, JsonSchemaValuesException\n", "")
        code = code.replace("from fastjsonschema import JsonSchemaValueException\n", "")
        code = _bare_raises(code)
        code = code.replace("REGEX_PATTERNS", f"_{kind.upper()}_PATTERNS")  # one module, four schemas
        name = code.split("def ", 1)[1].split("(", 1)[0]
        parts.append(f"\n# ---- kind: {kind}\n" + code.replace(name, f"_{kind}_{name}") +
                     f"\n\nVALIDATORS[{kind!r}] = _{kind}_{name}\n")
    return "".join(parts)


def _bare_raises(code: str) -> str:
    """The generated code with every ``raise JsonSchemaValueException(<message, value, the whole
    subschema>)`` made a bare ``raise JsonSchemaValueException('')``: a oneOf tries its branches by
    raising, and building those arguments was a third of the check; the answer is only yes or no."""
    import ast

    class Bare(ast.NodeTransformer):
        def visit_Raise(self, node: ast.Raise) -> ast.Raise:
            call = node.exc
            if isinstance(call, ast.Call) and getattr(call.func, "id", "") == "JsonSchemaValueException":
                node.exc = ast.Call(func=call.func, args=[ast.Constant("")], keywords=[])
            return node

    return ast.unparse(ast.fix_missing_locations(Bare().visit(ast.parse(code)))) + "\n"


@functools.lru_cache(maxsize=None)
def fast_validator(kind: str) -> Any:
    """A compiled yes/no check of one kind's schema, or None (stale or missing: jsonschema alone).

    It only ever vouches for a document: a document it rejects, or anything
    it cannot judge, goes to jsonschema, whose errors (and so every message)
    stay the report's.
    """
    try:
        from budgetlint.files import _schema_compiled as compiled
    except ImportError:
        return None
    check = compiled.VALIDATORS.get(kind)
    if check is None or getattr(compiled, "SOURCES_CHECKSUM", None) != _checksum():
        return None

    def vouches(data: Any) -> bool:
        try:
            check(data, custom_formats=FORMATS)
        except Exception:  # noqa: BLE001  (invalid, or beyond it: jsonschema decides)
            return False
        return True

    return vouches


@functools.lru_cache(maxsize=None)
def _checksum() -> str | None:
    try:
        return sources_checksum()
    except OSError:  # a schema file unreadable: no fast path (jsonschema reports what it can)
        return None


def validate(doc: Document, kind: str) -> list[Finding]:
    """Validate ``doc`` against its kind's schema; return findings with positions.

    A compiled check vouches for valid documents first; only those it does
    not vouch for are validated by jsonschema, which gives every error and
    message (and is not even imported when every document is valid).
    """
    fast = fast_validator(kind)
    if fast is not None and fast(doc.data):
        return []
    findings: list[Finding] = []
    for top in validator(kind).iter_errors(doc.data):
        for error in _leaf_errors(top):
            if _left_to_the_parser(error):
                continue
            budget = _budget_name(doc, tuple(error.absolute_path))
            findings.extend(dataclasses.replace(f, budget=budget) if budget else f
                            for f in _to_findings(doc, error))
    return findings


def _left_to_the_parser(error: Any) -> bool:
    """A quantity's type or pattern error: the unit parser reports it, better (BL005, BL006, BL007)."""
    return error.validator in ("type", "pattern") and isinstance(error.schema, dict) \
        and QUANTITY_KEYWORD in error.schema


def _budget_name(doc: Document, path: tuple) -> str | None:
    """The name of the budget ``path`` lies in, so the physics can skip a budget with schema errors."""
    if len(path) >= 2 and path[0] == "budgets" and isinstance(path[1], int):
        entry = doc.get(path[:2])
        if isinstance(entry, dict) and isinstance(entry.get("name"), str):
            return entry["name"]
    return None


def _where(doc: Document, path: tuple) -> str:
    """A path as a person names it: "budget 'chat' workload.prompt_tokens"."""
    if len(path) >= 2 and isinstance(path[1], int) and path[0] in ("budgets", "hardware", "models", "teams"):
        entry = doc.get(path[:2])
        label = {"budgets": "budget", "hardware": "hardware", "models": "model", "teams": "team"}[path[0]]
        name = entry.get("name", entry.get("handle")) if isinstance(entry, dict) else None
        head = f"{label} {name!r}" if isinstance(name, str) else f"{path[0]}[{path[1]}]"
        rest = ".".join(str(p) for p in path[2:])
        return f"{head} {rest}" if rest else head
    return ".".join(str(p) for p in path) or "the document"


def _close(word: str, choices: list[str], n: int, cutoff: float) -> list[str]:
    import difflib  # only for a document jsonschema rejects

    return difflib.get_close_matches(word, choices, n=n, cutoff=cutoff)


def _to_findings(doc: Document, error: Any) -> list[Finding]:
    path = tuple(error.absolute_path)
    where = _where(doc, path)
    value = error.instance
    v = error.validator
    if v == "additionalProperties" and isinstance(value, dict):
        allowed = _allowed_keys(error.schema)
        out = []
        for key in sorted((k for k in value if k not in error.schema.get("properties", {})), key=str):
            close = _close(str(key), allowed, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            out.append(Finding(
                "BL004", Severity.ERROR,
                f"unknown key {key!r} in {where}{hint} (expected one of: {', '.join(allowed)})",
                doc.loc(path + (key,), key=True),
                fix=f"rename it to {close[0]!r}" if close else "remove the key",
            ))
        return out
    if v == "required":
        missing = [k for k in error.validator_value if isinstance(value, dict) and k not in value]
        return [Finding("BL003", Severity.ERROR,
                        f"{where} is missing the required key {m!r}", doc.loc(path),
                        fix=f"add {m!r}") for m in missing]
    if v == "type":
        expected = error.validator_value
        expected = " or ".join(expected) if isinstance(expected, list) else expected
        message = f"{where}: expected {expected}; found {_describe(value)}"
    elif v in ("enum", "const"):
        allowed = error.validator_value if v == "enum" else [error.validator_value]
        close = _close(str(value), [str(a) for a in allowed], n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        message = (f"{where}: expected one of {', '.join(repr(a) for a in allowed)}; "
                   f"found {_describe(value)}{hint}")
    elif v in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        words = {"minimum": "at least", "exclusiveMinimum": "greater than",
                 "maximum": "at most", "exclusiveMaximum": "less than"}[v]
        message = f"{where}: expected a number {words} {error.validator_value}; found {_describe(value)}"
    elif v == "pattern":
        message = f"{where}: {_describe(value)} does not have the expected form ({error.schema.get('description') or error.validator_value})"
    elif v in ("oneOf", "anyOf"):
        types = []
        for sub in error.context or []:
            t = sub.validator_value if sub.validator == "type" else None
            for name in (t if isinstance(t, list) else [t]):
                if name and name not in types:
                    types.append(name)
        expected = " or ".join(types) if types else "a different value"
        message = f"{where}: expected {expected}; found {_describe(value)}"
    elif v == "propertyNames":
        message = f"{where}: {error.message}"
    else:
        message = f"{where}: {error.message}"
    return [Finding("BL003", Severity.ERROR, message, doc.loc(path))]


if __name__ == "__main__":  # python -m budgetlint.files.schema: regenerate the compiled checks
    target = Path(__file__).with_name("_schema_compiled.py")
    target.write_text(generate_compiled_module(), encoding="utf-8")
    print(f"wrote {target}")
