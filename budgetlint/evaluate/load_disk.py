"""A budget's load evaluation kept on disk between runs (issue 28): the simulation cache.

The load simulation is a pure function of what it reads: the budget as resolved (workload,
traffic, promises, deployment, the deployed configuration's values and their provenance), the
physics inputs (the deployment as priced, the efficiency, the flat estimates, the bound), the
calibration's fitted parameters, budgetlint's own code and data, and the Python running it. A
run that has simulated a budget writes its :class:`~budgetlint.evaluate.load.LoadEvaluation` under the SHA-256 of all of
those; a later run whose inputs hash the same reads it back instead of simulating again, and
every output says what the first run said (the same numbers, the same stopping rule, the same
simulation count). Like ruff's cache: on by default for the command line, in the user's cache
folder (``$BUDGETLINT_CACHE_DIR``, else ``$XDG_CACHE_HOME/budgetlint``, else
``~/.cache/budgetlint``), turned off by ``--no-cache``, ``cache = false`` in the config, or
``BUDGETLINT_NO_CACHE=1``.

What is never kept: a skipped evaluation (the work budget spent, a refused input), a budget whose
lengths come from a benchmark file (their values are not in the key's text), a disaggregated
deployment's two pools. The code's digest covers every file of the ``budgetlint`` package, so any
change to budgetlint (a new release, an edit in a checkout) starts a fresh cache.

Entries are JSON with a closed set of types (this module's :data:`CLASSES`), never pickle: a cache
folder restored in CI (``actions/cache``) is input from elsewhere, and reading it must not run
code. An entry that does not read back (cut short, edited, another version's) is a miss: the
budget is simulated and the entry written again. Entries are at most :data:`MAX_ENTRY_BYTES`; an
unwritable folder leaves the run as it would be without the cache.

The folder does not grow without end: every code change and every edited budget leaves entries no
run will read again (and ``actions/cache`` saves the whole folder each time). A read touches its
entry, and at the end of a ``check`` (:func:`prune`, at most once a day) an entry neither read nor
written for :data:`PRUNE_AFTER_S` (30 days, as long as ruff keeps a file it has not seen) is
removed, as is a temporary file older than a day (a writer that was killed). Only names this
module writes are touched (two hex digits, then 64 and ``.json``), whatever else the folder holds.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import re
import stat
import sys
import time
from pathlib import Path
from typing import Any, Iterator, Optional

from budgetlint.files import fs

#: the layout's version: a folder of its own under the cache folder
LAYOUT = "load-v1"
#: an entry larger than this is not read (the largest of bench_check_cost.py's budgets: ~5 KB)
MAX_ENTRY_BYTES = 1_000_000
_DIGEST: dict = {}  # "sha256" -> the package's digest, computed once per process
#: an entry neither read nor written for this long is removed (:func:`prune`): ruff's cache keeps a
#: file's entry 30 days after it last saw the file
PRUNE_AFTER_S = 30 * 86400
#: a temporary file (``.<random>.tmp``, :func:`write`) this old is a killed writer's: removed
TMP_AFTER_S = 86400
#: the folder is swept at most this often: the stamp file's time says when it last was
PRUNE_EVERY_S = 86400
STAMP = ".pruned"
#: the .gitignore :func:`write` puts in the folder (:func:`clear` removes only a file that begins so)
IGNORE_TEXT = "# made by budgetlint: its simulation cache\n*\n"
_SHARD = re.compile(r"[0-9a-f]{2}")
_ENTRY = re.compile(r"[0-9a-f]{64}\.json")
_TMP = re.compile(r"\..+\.tmp")


def default_dir() -> Path:
    """Where the cache lives unless a flag or the config says (module doc)."""
    given = os.environ.get("BUDGETLINT_CACHE_DIR")
    if given:
        return Path(os.path.expanduser(given))
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "budgetlint"


def disabled_by_environment() -> bool:
    """``BUDGETLINT_NO_CACHE`` set to anything but ``""`` or ``0``."""
    return os.environ.get("BUDGETLINT_NO_CACHE", "") not in ("", "0")


def code_digest() -> str:
    """SHA-256 over every file of the installed ``budgetlint`` package (path and bytes, in path
    order; ``__pycache__`` left out): budgetlint's code and data as this process runs them."""
    if "sha256" not in _DIGEST:
        root = Path(__file__).resolve().parents[1]
        h = hashlib.sha256()
        for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            h.update(path.relative_to(root).as_posix().encode())
            h.update(b"\0")
            h.update(path.read_bytes())
            h.update(b"\0")
        _DIGEST["sha256"] = h.hexdigest()
    return _DIGEST["sha256"]


def key(budget: Any, roof: Any, calibration: Any) -> str:
    """The entry's name: SHA-256 of the code's digest, the Python that runs it (its ``random`` and
    float formatting are part of the result) and the reprs of everything the load simulation reads
    (module doc)."""
    cal = getattr(calibration, "calibration", None)
    cal_text = "" if cal is None else repr(cal.params) + "\0" + calibration.origin_words()
    text = "\0".join((code_digest(), sys.version, repr(budget), repr(roof.deployment), repr(roof.efficiency),
                      repr(roof.realistic), repr(roof.bound), cal_text))
    return hashlib.sha256(text.encode()).hexdigest()


def _classes(evaluation: type) -> dict[str, type]:
    """The types an entry may hold: ``evaluation`` (evaluate.load's LoadEvaluation, given by the
    caller: this module sits below it) and the physics' results inside it."""
    from budgetlint.physics.capacity import Capacity
    from budgetlint.physics.load_stats import SimulationResult
    from budgetlint.physics.traffic import Fixed, LogNormal, Uniform

    return {c.__name__: c for c in (evaluation, SimulationResult, Capacity, Fixed, Uniform, LogNormal)}


class NotKept(ValueError):
    """A value this cache does not write (a type outside :func:`_classes`), or an entry that does
    not read back."""


def encode(value: Any, classes: dict[str, type]) -> Any:
    """``value`` as JSON-able data: tuples, non-string-keyed dicts and the known dataclasses tagged;
    floats as JSON numbers (NaN and infinities as Python's json writes them: read back the same)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value
    if isinstance(value, tuple):
        return {"t": [encode(v, classes) for v in value]}
    if isinstance(value, list):
        return [encode(v, classes) for v in value]
    if isinstance(value, dict):
        return {"d": [[encode(k, classes), encode(v, classes)] for k, v in value.items()]}
    name = type(value).__name__
    if dataclasses.is_dataclass(value) and classes.get(name) is type(value):
        return {"c": name, "f": {f.name: encode(getattr(value, f.name), classes)
                                 for f in dataclasses.fields(value)}}
    raise NotKept(f"a {name} is not kept on disk")


def decode(data: Any, classes: dict[str, type]) -> Any:
    """The inverse of :func:`encode`; :class:`NotKept` for anything it did not write."""
    if data is None or isinstance(data, (bool, str, int, float)):
        return data
    if isinstance(data, list):
        return [decode(v, classes) for v in data]
    if isinstance(data, dict):
        if set(data) == {"t"} and isinstance(data["t"], list):
            return tuple(decode(v, classes) for v in data["t"])
        if set(data) == {"d"} and isinstance(data["d"], list):
            out = {}
            for pair in data["d"]:
                if not (isinstance(pair, list) and len(pair) == 2):
                    raise NotKept("a dict entry is not a pair")
                k = decode(pair[0], classes)
                if not isinstance(k, (str, int, float, bool, tuple, type(None))):
                    raise NotKept("a dict key is not a plain value")
                out[k] = decode(pair[1], classes)
            return out
        if set(data) == {"c", "f"} and data["c"] in classes and isinstance(data["f"], dict):
            cls = classes[data["c"]]
            names = {f.name for f in dataclasses.fields(cls)}
            if set(data["f"]) != names:
                raise NotKept(f"a {data['c']} with other fields")
            try:
                return cls(**{k: decode(v, classes) for k, v in data["f"].items()})
            except (TypeError, ValueError) as exc:
                raise NotKept(f"a {data['c']} that does not build: {exc}") from None
    raise NotKept("an entry this cache did not write")


def keepable(out: Any) -> bool:
    """Whether an evaluation is written (module doc: not a skipped one, not one of benchmark lengths
    or of two pools)."""
    from budgetlint.physics.traffic import Empirical

    return (out.skipped is None and out.result is not None and out.pools is None
            and not isinstance(out.prompt_lengths, Empirical) and not isinstance(out.output_lengths, Empirical))


def _path(folder: Path, name: str) -> Path:
    return folder / LAYOUT / name[:2] / f"{name}.json"


def read(folder: Path, name: str, evaluation: type) -> Optional[Any]:
    """The ``evaluation`` (its class) kept under ``name``, or None (none kept, or one that does not
    read back)."""
    path = _path(folder, name)
    try:
        # a folder restored from elsewhere may hold anything at an entry's name: a named pipe (a plain open
        # waits for a writer for ever), a link to /dev/zero (a plain read never ends): bounded, regular only
        data = json.loads(fs.read_regular(path, MAX_ENTRY_BYTES).decode("utf-8"))
        if not (isinstance(data, dict) and data.get("key") == name):
            return None
        value = decode(data.get("value"), _classes(evaluation))
    except (OSError, ValueError, RecursionError, UnicodeDecodeError):
        return None
    if not (isinstance(value, evaluation) and keepable(value)):
        return None
    try:  # read now: the entry is in use (prune keeps it)
        os.utime(path)
    except OSError:
        pass  # a read-only folder: the entry still reads
    return value


def why_not_kept(folder: Path) -> Optional[tuple[str, bool]]:
    """Why no entry can be kept under ``folder``, and whether entries can still be read there: None when
    they can be kept. Creates nothing: the first of ``folder`` and its parents that is there must be a
    folder this process may write in (until stop 47 a cache folder that was a file, ``/dev/null`` or
    read-only kept nothing and said nothing, each run simulating afresh)."""
    probe = folder
    while not (fs.exists(probe) or fs.is_symlink(probe)):
        if probe.parent == probe:
            return None
        probe = probe.parent
    if not fs.is_dir(probe):
        kind = fs.kind_if_not_file(probe) or "a file"
        return f"{probe} is {kind}, not a folder", False
    if not os.access(probe, os.W_OK | os.X_OK):
        return f"{probe} is not writable", probe == folder
    return None


def prune(folder: Path, now: Optional[float] = None) -> int:
    """Remove the entries under ``folder`` neither read nor written for :data:`PRUNE_AFTER_S` and the
    temporary files older than :data:`TMP_AFTER_S`; the number removed. At most once every
    :data:`PRUNE_EVERY_S` (the stamp file under the layout's folder), so a run pays for the sweep
    once a day at most; a folder that cannot be read or written is left as it is."""
    now = time.time() if now is None else now
    root = folder / LAYOUT
    stamp = root / STAMP
    try:
        if now - stamp.stat().st_mtime < PRUNE_EVERY_S:
            return 0
    except FileNotFoundError:
        pass
    except OSError:
        return 0
    removed = 0
    try:
        for path, info, entry in _own_files(root):
            if now - info.st_mtime > (PRUNE_AFTER_S if entry else TMP_AFTER_S) and not stat.S_ISLNK(info.st_mode):
                try:
                    path.unlink()
                    removed += 1
                except OSError:
                    continue
        fs.write_replacing(stamp, ["# when budgetlint last swept this folder (evaluate/load_disk.py prune)\n"])
        os.utime(stamp, (now, now))
    except OSError:
        return removed
    return removed


def write(folder: Path, name: str, out: Any) -> bool:
    """Keep ``out`` under ``name`` (written whole, then renamed into place: a reader never sees half
    an entry); False when it is not kept (not :func:`keepable`, or the folder is not writable)."""
    if not keepable(out):
        return False
    try:
        text = json.dumps({"key": name, "value": encode(out, _classes(type(out)))}, separators=(",", ":"))
    except (NotKept, ValueError, RecursionError):
        return False
    if len(text.encode()) > MAX_ENTRY_BYTES:
        return False
    path = _path(folder, name)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        ignore = folder / ".gitignore"  # as ruff's: a cache folder inside a repository stays out of it
        if not os.path.lexists(ignore):
            fs.write_replacing(ignore, [IGNORE_TEXT])
        fs.write_replacing(path, [text])
    except OSError:
        return False
    return True


def same(a: Any, b: Any) -> bool:
    """Equality that holds NaN equal to NaN (a round trip's check: :func:`encode` then :func:`decode`)."""
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if dataclasses.is_dataclass(a):
        return all(same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    return bool(a == b)


def clear(folder: Path) -> tuple[int, int]:
    """Remove every entry, temporary file and stamp under ``folder`` (``budgetlint clean``), then the
    folders left empty and the .gitignore this module wrote; ``(entries removed, their bytes)``. Names
    this module does not write are left, and so are the folders holding them."""
    root = folder / LAYOUT
    count = size = 0
    if root.is_dir() and not root.is_symlink():
        shards = set()
        for path, info, entry in _own_files(root):
            path.unlink()
            shards.add(path.parent)
            if entry:
                count += 1
                size += info.st_size
        for shard in shards:
            _rmdir_if_empty(shard)
        stamp = root / STAMP
        if stamp.is_file() or stamp.is_symlink():
            stamp.unlink()
        _rmdir_if_empty(root)
    ignore = folder / ".gitignore"
    if not root.exists() and ignore.is_file() and not ignore.is_symlink() and \
            ignore.read_bytes()[:len(IGNORE_TEXT)] == IGNORE_TEXT.encode() and \
            all(p.name == ".gitignore" for p in folder.iterdir()):
        ignore.unlink()
        _rmdir_if_empty(folder)
    return count, size


def _own_files(root: Path) -> Iterator[tuple[Path, os.stat_result, bool]]:
    """The names this module writes under the layout's folder ``root``: ``(path, its lstat, whether it is an
    entry)`` for each entry (``<2 hex>/<64 hex>.json``) and temporary file (``.<name>.tmp``); what else the
    folder holds is not listed (:func:`prune` and :func:`clear` touch nothing else)."""
    for shard in root.iterdir():
        if not (_SHARD.fullmatch(shard.name) and shard.is_dir() and not shard.is_symlink()):
            continue
        for path in shard.iterdir():
            entry = _ENTRY.fullmatch(path.name) is not None
            if not (entry or _TMP.fullmatch(path.name)):
                continue
            try:
                yield path, path.lstat(), entry
            except OSError:
                continue


def _rmdir_if_empty(path: Path) -> None:
    try:
        path.rmdir()
    except OSError:
        pass  # not empty (a file of someone else's), or already gone
