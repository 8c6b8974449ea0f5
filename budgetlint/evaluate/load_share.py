"""The load simulations of one run, shared by its ``--jobs`` workers through a per-run folder.

Each forked worker keeps its own in-memory cache (``Environment.load_cache``); without more,
two workers that meet budgets of one configuration would each simulate it. Before the workers
fork, the parent makes a temporary folder (:func:`open_run`), and every simulation result is
also kept there as a file named by a hash of its key (the key is the inputs' ``repr``:
:mod:`.analysis_cache`). A worker about to simulate first claims the key (an exclusive create
of ``<hash>.claim``): the claimant simulates and writes ``<hash>.pickle`` (written whole, then
renamed); another worker that finds the claim waits for that file instead of simulating again.
A claimant that fails (a refused input, the work budget spent) removes its claim, and the
waiting worker computes it itself. The folder is removed when the workers are done.

Only keys that name their inputs by value are shared: a ``from_bench`` length file is keyed by
the identity of its values in one process (:func:`budgetlint.evaluate.load._traffic_key`),
which another process's identities do not match, so such keys stay in the worker's own cache.
"""

from __future__ import annotations

import os
import time
from typing import Any, Callable, Optional

#: how long a worker waits for another's claim on a key before simulating it itself (s)
WAIT_S = 300.0
_POLL_S = 0.002

_DIR: Optional[str] = None


def open_run() -> str:
    """Make the run's folder (before the workers fork: they inherit its name)."""
    import tempfile

    global _DIR
    _DIR = tempfile.mkdtemp(prefix="budgetlint-load-")
    return _DIR


def close_run() -> None:
    import shutil

    global _DIR
    if _DIR is not None:
        shutil.rmtree(_DIR, ignore_errors=True)
    _DIR = None


def active() -> bool:
    return _DIR is not None


def get(key: Any, compute: Callable[[], Any]) -> Any:
    """``compute()`` once per key over the run's processes (module doc)."""
    if _DIR is None:
        return compute()
    import hashlib  # here, not at the top: a run without workers never needs them (issue 28: ~5 ms)
    import pickle

    name = os.path.join(_DIR, hashlib.sha256(repr(key).encode()).hexdigest())
    done, claim = name + ".pickle", name + ".claim"
    deadline = time.monotonic() + WAIT_S
    while True:
        found = _read(done)
        if found is not None:
            return found[0]
        try:
            os.close(os.open(claim, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        except FileExistsError:
            if time.monotonic() > deadline:
                return compute()  # the claimant is stuck: do not wait for ever
            time.sleep(_POLL_S)
            continue
        except OSError:  # the folder is gone or unwritable: this process alone
            return compute()
        try:
            value = compute()
        except BaseException:
            _remove(claim)
            raise
        tmp = name + f".{os.getpid()}.tmp"
        try:
            with open(tmp, "wb") as fh:
                pickle.dump((value,), fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, done)
        except (OSError, pickle.PicklingError):
            _remove(tmp)
            _remove(claim)
        return value


def _read(path: str) -> Optional[tuple]:
    import pickle

    try:
        with open(path, "rb") as fh:
            return pickle.load(fh)
    except FileNotFoundError:
        return None
    except (OSError, EOFError, pickle.UnpicklingError):
        return None


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass
