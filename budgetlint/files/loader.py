"""YAML text -> plain data, with the file:line:column of every value and key.

Only safe loading: scalars are built by PyYAML's ``SafeConstructor``; any tag
it does not know (``!!python/object`` and friends) is a finding, never code
that runs. Duplicate keys, which PyYAML silently resolves by keeping the last,
are findings too. Limits on size, depth and node count (alias bombs) are
enforced here and documented in ``docs/limits.md``.
"""

from __future__ import annotations

import math

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from budgetlint.files import fs
from budgetlint.findings import Finding, Location, Severity
from budgetlint.text import numbers

#: Limits the loader enforces (see docs/limits.md).
MAX_FILE_BYTES = 10 * 1024 * 1024
MAX_DEPTH = 64
MAX_NODES = 200_000
#: keys and values written in one file (all its documents), counted while the
#: parser builds them: a 10 MiB file of tiny budgets holds ~1.8 million and
#: cost 830 MB; this keeps one file's memory bounded (~90 MB), see docs/limits.md
MAX_FILE_NODES = 100_000
#: values one file expands to, all documents together (aliases included)
MAX_FILE_VALUES = MAX_NODES
#: files smaller than this cannot hold MAX_FILE_NODES nodes (each takes >= 2 bytes):
#: they are composed by libyaml's own (faster) composer, larger ones by the counting one
_COUNT_FROM_BYTES = 256 * 1024
#: integers beyond this (int64) are refused: no count needs more, and float()
#: of a 400-digit integer raises OverflowError deep in the arithmetic
MAX_INT = 2**63 - 1



_COLUMN_BITS = 20
_COLUMN_MAX = (1 << _COLUMN_BITS) - 1


def pack(line: int, column: int) -> int:
    """A position in one int; columns beyond 2**20 - 1 are clamped (never seen in YAML we accept)."""
    return line << _COLUMN_BITS | min(column, (1 << _COLUMN_BITS) - 1)


def unpack(packed: int) -> tuple[int, int]:
    return packed >> _COLUMN_BITS, packed & ((1 << _COLUMN_BITS) - 1)


@dataclass
class Document:
    """One YAML document with the position of each value and key."""

    file: str
    data: Any
    #: path -> line and column packed in one int (``line << 20 | column``): half the
    #: memory of a (line, column) tuple, for monorepos of thousands of budgets.
    positions: dict[tuple, int] = field(default_factory=dict)
    key_positions: dict[tuple, int] = field(default_factory=dict)
    index: int = 0

    def loc(self, path: tuple = (), *, key: bool = False) -> Location:
        """The location of ``path``'s value (or its key), else its nearest ancestor."""
        path = tuple(path)
        if key and path in self.key_positions:
            return Location(self.file, *unpack(self.key_positions[path]))
        while True:
            if path in self.positions:
                return Location(self.file, *unpack(self.positions[path]))
            if not path:
                return Location(self.file, 1, 1)
            path = path[:-1]

    def get(self, path: tuple, default: Any = None) -> Any:
        node = self.data
        for part in path:
            try:
                node = node[part]
            except (KeyError, IndexError, TypeError):
                return default
        return node


@dataclass
class LoadResult:
    documents: list[Document] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


def _finding(code: str, message: str, file: str, line: int = 1, column: int = 1,
             severity: Severity = Severity.ERROR, fix: str | None = None) -> Finding:
    return Finding(code, severity, message, Location(file, line, column), fix=fix)


#: Texts read instead of files, by absolute path: ``check -`` puts standard input here under its
#: ``--stdin-filename``, ``--diff`` the fixed texts it checks again without writing them. Empty
#: otherwise (one dict lookup per file read). Only the one-process run reads it (the CLI sets jobs 1).
OVERLAY: dict[str, str] = {}


def read_text(path: Path, display: str) -> tuple[str | None, list[Finding]]:
    """Read a file as UTF-8 text, refusing what is too big, binary, not UTF-8 or not a file.

    A pipe or device named ``*.yaml`` (a FIFO would block forever, ``/dev/zero``
    never ends) is refused before anything is read; see :func:`fs.read_regular`.
    """
    if OVERLAY:
        import os

        given = OVERLAY.get(os.path.abspath(path))
        if given is not None:
            return given, []
    try:
        raw = fs.read_regular(path, MAX_FILE_BYTES)
    except fs.NotRegular as exc:
        return None, [_finding("BL010", f"cannot read file: it is {exc.kind}, not a regular file; "
                               "budgetlint reads only regular files", display,
                               fix="remove it from the checked paths")]
    except fs.TooLarge as exc:
        return None, [_finding(
            "BL011", f"file is {numbers.number(exc.size / 1024 / 1024)} MiB; budgetlint reads files up to "
            f"{MAX_FILE_BYTES // 1024 // 1024} MiB", display,
            fix="split the file, or keep generated data out of the budgets directory")]
    except OSError as exc:
        return None, [_finding("BL010", f"cannot read file: {exc.strerror or exc}", display)]
    if b"\x00" in raw[:8192]:
        return None, [_finding("BL010", "expected YAML text; found binary data (NUL bytes)", display)]
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start]
        line = before.count(b"\n") + 1
        col = exc.start - (before.rfind(b"\n") + 1) + 1
        return None, [_finding(
            "BL010", f"expected UTF-8 text; found byte 0x{raw[exc.start]:02x} that is not UTF-8",
            display, line, col, fix="save the file as UTF-8")]
    return text, []


def load_file(path: Path, display: str) -> LoadResult:
    text, findings = read_text(path, display)
    if text is None:
        return LoadResult([], findings)
    return load_text(text, display)


_LOADER: Any = None


def _yaml_loader_class() -> Any:
    """PyYAML's safe loader (libyaml's when built with it), resolving each scalar's tag once.

    The tag of a plain scalar depends only on its text (the safe loader has no
    path resolvers), and a repository repeats the same few texts ("bf16",
    "p95", team handles) thousands of times: resolving each distinct text once
    took a quarter off the loader's time.
    """
    global _LOADER
    if _LOADER is None:
        import yaml

        base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        scalar = yaml.ScalarNode
        memo: dict = {}

        class _Loader(base):  # type: ignore[misc, valid-type]
            def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
                if kind is not scalar or self.yaml_path_resolvers:
                    return base.resolve(self, kind, value, implicit)
                key = (value, implicit)
                tag = memo.get(key)
                if tag is None:
                    tag = base.resolve(self, kind, value, implicit)
                    if len(memo) >= 65536:  # bounded: a file of distinct texts cannot grow it
                        memo.clear()
                    if len(value) <= 256:
                        memo[key] = tag
                return tag

        _LOADER = _Loader
    return _LOADER


class _ComposeLimit(Exception):
    def __init__(self, mark: Any) -> None:
        super().__init__("compose limit")
        self.mark = mark


def _counting_loader(base: Any, text: str) -> Any:
    """A loader of class ``base`` whose composer stops after MAX_FILE_NODES nodes.

    libyaml's composer (CSafeLoader) has no hook, so PyYAML's Python
    composer runs over libyaml's events; aliases add no node here (the
    converter counts what they expand to).
    """
    import yaml
    from yaml.composer import Composer

    bases = (base,) if issubclass(base, Composer) else (Composer, base)

    class Counting(*bases):  # type: ignore[misc, valid-type]
        def __init__(self, stream: str) -> None:
            base.__init__(self, stream)
            Composer.__init__(self)
            self.composed = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            if not self.check_event(yaml.AliasEvent):
                self.composed += 1
                if self.composed > MAX_FILE_NODES:
                    raise _ComposeLimit(self.peek_event().start_mark)
            return Composer.compose_node(self, parent, index)

    return Counting(text)


def _reserved_indicator(text: str, mark: object) -> tuple[str, str] | None:
    """A plain value starting with ``@`` or a backtick (reserved in YAML, e.g. an
    unquoted ``owner: @acme/chat``): the message and the quoted value as a fix."""
    lines = text.splitlines()
    row, col = getattr(mark, "line", -1), getattr(mark, "column", -1)
    if not (0 <= row < len(lines)) or not (0 <= col < len(lines[row])) or lines[row][col] not in "@`":
        return None
    import re

    line = lines[row]
    before = line[:col]
    value = line[col:].split(" #", 1)[0].rstrip()
    if "{" in before or "[" in before:  # flow style: the value ends at , ] or }
        value = re.split(r"\s*[,\]}]", value, maxsplit=1)[0]
    m = re.search(r"([^\s{\[,:-][^{\[,:]*?)\s*:\s*$", before)
    key = m.group(1).strip() if m else ""
    quoted = '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    message = (f"YAML syntax error: {value!r} starts with {line[col]!r}, which YAML reserves: a value that "
               "starts with it must be quoted")
    return message, f"quote it: {key}: {quoted}" if key else f"quote it: {quoted}"


def load_text(text: str, display: str) -> LoadResult:
    """Compose every document of ``text`` and convert it to plain data with positions.

    One document is composed and converted at a time. A file stops being read
    (BL011 at the document or node that crossed the limit) past MAX_FILE_NODES
    keys and values as written, or MAX_FILE_VALUES values once aliases and
    merges are expanded: one file's memory is bounded, not only a document's.
    """
    import yaml

    result = LoadResult()
    base = _yaml_loader_class()
    loader = _counting_loader(base, text) if len(text) >= _COUNT_FROM_BYTES else base(text)
    values = 0
    try:
        index = 0
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                break
            converter = _Converter(display, result.findings)
            doc = converter.convert_document(node, index)
            values += converter.nodes if doc is not None else 0  # a document cut at its own limit is gone
            if values > MAX_FILE_VALUES:
                mark = node.start_mark
                result.findings.append(_finding(
                    "BL011", f"file expands to more than {numbers.number(MAX_FILE_VALUES)} values over its documents; "
                    f"budgetlint stops reading it at document {index + 1}", display, mark.line + 1,
                    mark.column + 1, fix="split the file"))
                break
            if doc is not None:
                result.documents.append(doc)
            index += 1
    except _ComposeLimit as exc:
        result.findings.append(_finding(
            "BL011", f"file holds more than {numbers.number(MAX_FILE_NODES)} keys and values; budgetlint stops reading it "
            "here (the documents before are checked)", display, exc.mark.line + 1, exc.mark.column + 1,
            fix="split the file"))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        what = exc.problem or "invalid YAML"
        context = f" ({exc.context})" if exc.context else ""
        code = "BL011" if "depth" in what else "BL001"
        reserved = _reserved_indicator(text, mark) if "cannot start any token" in what else None
        if reserved is not None:
            message, fix = reserved
            result.findings.append(_finding("BL001", message, display, line, col, fix=fix))
        else:
            result.findings.append(_finding(code, f"YAML syntax error: {what}{context}", display, line, col))
    except yaml.YAMLError as exc:
        message = str(exc).splitlines()[0] if str(exc) else "invalid YAML"
        if "depth" in message or "nest" in message:
            result.findings.append(_finding(
                "BL011", f"nesting deeper than the parser allows: {message}", display))
        else:
            result.findings.append(_finding("BL001", f"YAML syntax error: {message}", display))
    except RecursionError:
        result.findings.append(_finding(
            "BL011", f"nesting deeper than {MAX_DEPTH} levels", display))
    finally:
        try:
            loader.dispose()
        except Exception:
            pass
    return result


class _LimitExceeded(Exception):
    def __init__(self, message: str, node: Any) -> None:
        super().__init__(message)
        self.message = message
        self.node = node


class _Converter:
    """Walks a composed node tree into plain Python data, recording positions.

    The common nodes take short paths, each giving what the general one gives
    (tests/properties/test_loader_convert.py holds data and positions equal to
    PyYAML's): a mapping's plain-string keys and its plain-string values are
    handled in the mapping's own loop, and plain decimal integers and floats
    skip PyYAML's constructor (a corpus of 10,000 budgets is ~530,000 scalars).
    """

    def __init__(self, file: str, findings: list[Finding]) -> None:
        import yaml

        self._yaml = yaml
        self.file = file
        self.findings = findings
        self.constructor = yaml.constructor.SafeConstructor()
        self.nodes = 0

    def convert_document(self, node: Any, index: int) -> Document | None:
        doc = Document(self.file, None, index=index)
        try:
            doc.data = self._convert(node, (), doc, 0)
        except _LimitExceeded as exc:
            mark = exc.node.start_mark
            self.findings.append(_finding(
                "BL011", exc.message, self.file, mark.line + 1, mark.column + 1))
            return None
        return doc

    def _count(self, node: Any, depth: int) -> None:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise _LimitExceeded(
                f"document expands to more than {numbers.number(MAX_NODES)} values (an alias bomb?); "
                "budgetlint stops reading it", node)
        if depth > MAX_DEPTH:
            raise _LimitExceeded(f"nesting deeper than {MAX_DEPTH} levels", node)

    def _convert(self, node: Any, path: tuple, doc: Document, depth: int) -> Any:
        yaml = self._yaml
        self._count(node, depth)
        mark = node.start_mark
        column = mark.column + 1
        doc.positions[path] = (mark.line + 1) << _COLUMN_BITS | (column if column < _COLUMN_MAX else _COLUMN_MAX)
        if isinstance(node, yaml.ScalarNode):
            return self._scalar(node)
        if node.tag not in _PLAIN_COLLECTION_TAGS:
            self.findings.append(_finding(
                "BL012", f"unsupported YAML tag {node.tag!r}: budgetlint reads plain YAML only; "
                "the value is read as if untagged", self.file, mark.line + 1, mark.column + 1,
                fix="remove the tag"))
        if isinstance(node, yaml.SequenceNode):
            return [self._convert(child, path + (i,), doc, depth + 1)
                    for i, child in enumerate(node.value)]
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path, doc, depth)
        return None

    def _scalar(self, node: Any) -> Any:
        yaml = self._yaml
        tag = node.tag
        if tag == _STR or tag == _TIMESTAMP:
            # what SafeConstructor.construct_yaml_str returns, without its calls (most scalars are
            # strings); dates stay as written ("2026-12-31"), not datetime objects
            return node.value
        text = node.value
        if tag == _INT:
            # ASCII digits, no leading zero (octal in YAML 1.1), within int64: construct_yaml_int's int(text)
            if text.isdigit() and text.isascii() and (text[0] != "0" or len(text) == 1) and len(text) <= 18:
                return int(text)
        elif tag == _FLOAT:
            # digits and one point ("0.5", "5.", ".5"): construct_yaml_float's 1 * float(text)
            digits = text.replace(".", "", 1)
            if digits.isdigit() and digits.isascii() and len(digits) < len(text):
                return float(text)
        try:
            value = self.constructor.construct_object(node, deep=True)
            if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_INT:
                mark = node.start_mark
                self.findings.append(_finding(
                    "BL011", f"integer with {len(str(abs(value)))} digits is out of range; budgetlint reads "
                    f"integers up to {numbers.number(MAX_INT)} (2**63 - 1); the value is read as text",
                    self.file, mark.line + 1, mark.column + 1))
                return node.value
            if isinstance(value, float) and not math.isfinite(value):
                # NaN passes every `minimum` (a comparison with NaN is false) and switches the
                # physics off; infinity is no measure of anything: refused wherever they stand
                mark = node.start_mark
                what = "NaN (not a number)" if value != value else "an infinite number"
                self.findings.append(_finding(
                    "BL003", f"expected a finite number; found {text!r}, {what}; the value is read as text",
                    self.file, mark.line + 1, mark.column + 1, fix="write the number itself"))
                return node.value
            return value
        except yaml.constructor.ConstructorError as exc:
            mark = node.start_mark
            self.findings.append(_finding(
                "BL012", f"unsupported YAML tag {node.tag!r}: budgetlint reads plain YAML only "
                f"({exc.problem})", self.file, mark.line + 1, mark.column + 1,
                fix="remove the tag; write the value as plain text"))
            return node.value
        except Exception as exc:  # e.g. an out-of-range timestamp
            mark = node.start_mark
            self.findings.append(_finding(
                "BL001", f"cannot read scalar {node.value!r}: {exc}", self.file,
                mark.line + 1, mark.column + 1))
            return node.value

    def _mapping(self, node: Any, path: tuple, doc: Document, depth: int) -> dict:
        scalar = self._yaml.ScalarNode
        out: dict = {}
        first_seen: dict = {}
        pairs = list(node.value)
        merged: list = []
        for key_node, value_node in pairs:
            if key_node.tag == _MERGE:
                merged.extend(self._merge_pairs(value_node, depth))
        positions, key_positions = doc.positions, doc.key_positions
        inner = depth + 1
        for key_node, value_node in pairs:
            key_tag = key_node.tag
            if key_tag == _MERGE:
                continue
            if key_tag == _STR and isinstance(key_node, scalar):
                key = key_node.value  # a plain string key: what _key gives, hashable
            else:
                key = self._key(key_node)
                if key is _UNHASHABLE:
                    continue
            kmark = key_node.start_mark
            if key in first_seen:
                line0 = first_seen[key]
                self.findings.append(_finding(
                    "BL002", f"duplicate key {key!r}: first defined on line {line0}; "
                    "YAML parsers silently keep only one of them",
                    self.file, kmark.line + 1, kmark.column + 1,
                    fix="remove or rename one of the two keys"))
                continue
            line = kmark.line + 1
            first_seen[key] = line
            child = path + (key,)
            column = kmark.column + 1
            key_positions[child] = line << _COLUMN_BITS | (column if column < _COLUMN_MAX else _COLUMN_MAX)
            value_tag = value_node.tag
            if (value_tag == _STR or value_tag == _TIMESTAMP) and isinstance(value_node, scalar):
                # _convert of a plain string, in line
                self._count(value_node, inner)
                mark = value_node.start_mark
                column = mark.column + 1
                positions[child] = (mark.line + 1) << _COLUMN_BITS | (column if column < _COLUMN_MAX
                                                                         else _COLUMN_MAX)
                out[key] = value_node.value
            else:
                out[key] = self._convert(value_node, child, doc, inner)
        for key_node, value_node in merged:
            key = self._key(key_node)
            if key is _UNHASHABLE or key in out:
                continue
            kmark = key_node.start_mark
            child = path + (key,)
            doc.key_positions[child] = pack(kmark.line + 1, kmark.column + 1)
            out[key] = self._convert(value_node, child, doc, depth + 1)
        return out

    def _merge_pairs(self, value_node: Any, depth: int) -> list:
        """The (key, value) pairs a merge key (``<<``) brings in, its sources' own merges resolved.

        YAML 1.1: ``<<: *a`` or ``<<: [*a, *b]``; earlier sources win, and a
        source that itself merges (``mid: &mid {<<: *base, x: 1}``) brings its
        own keys first, then its merged ones. Every pair is counted toward
        MAX_NODES *before* it is expanded: 20,000 merges of a 20,000-key
        mapping stop at the limit instead of building 400 million pairs.
        """
        yaml = self._yaml
        if depth > MAX_DEPTH:
            raise _LimitExceeded(f"merge keys nested deeper than {MAX_DEPTH} levels", value_node)
        sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
        out: list = []
        for src in sources:
            if not isinstance(src, yaml.MappingNode):
                mark = src.start_mark
                self.findings.append(_finding(
                    "BL001", "a merge key '<<' takes a mapping (an alias such as *defaults) or a list of "
                    "them; this value is not merged", self.file, mark.line + 1, mark.column + 1))
                continue
            own = [pair for pair in src.value if pair[0].tag != _MERGE]
            self.nodes += len(own)
            if self.nodes > MAX_NODES:
                raise _LimitExceeded(
                    f"document expands to more than {numbers.number(MAX_NODES)} values through merge keys ('<<'); "
                    "budgetlint stops reading it", value_node)
            out.extend(own)
            for key_node, inner in src.value:
                if key_node.tag == _MERGE:
                    out.extend(self._merge_pairs(inner, depth + 1))
        return out

    def _key(self, key_node: Any) -> Any:
        yaml = self._yaml
        if not isinstance(key_node, yaml.ScalarNode):
            mark = key_node.start_mark
            self.findings.append(_finding(
                "BL001", "a mapping key must be a plain value, not a list or mapping",
                self.file, mark.line + 1, mark.column + 1))
            return _UNHASHABLE
        key = self._scalar(key_node)
        try:
            hash(key)
        except TypeError:
            return _UNHASHABLE
        return key


_UNHASHABLE = object()
_MERGE = "tag:yaml.org,2002:merge"
_STR = "tag:yaml.org,2002:str"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_PLAIN_COLLECTION_TAGS = {"tag:yaml.org,2002:seq", "tag:yaml.org,2002:map", "tag:yaml.org,2002:omap",
                          "tag:yaml.org,2002:pairs", "tag:yaml.org,2002:set"}
