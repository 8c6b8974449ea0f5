"""The built-in catalog: hardware and model data files shipped in the package.

``hardware.yaml`` and ``models.yaml`` are ordinary budgetlint documents
(``kind: hardware`` / ``kind: models``); every entry cites its source.
They are read with the same loader as user files, once, on first use.
"""

from __future__ import annotations

import functools
from pathlib import Path

from budgetlint.files.loader import Document, load_file

CATALOG_DIR = Path(__file__).resolve().parent


@functools.lru_cache(maxsize=None)
def builtin_document(kind: str) -> Document | None:
    """The built-in document of ``kind`` ("hardware" or "models"), or None if absent."""
    path = CATALOG_DIR / f"{kind}.yaml"
    if not path.is_file():
        return None
    result = load_file(path, f"<catalog>/{kind}.yaml")
    return result.documents[0] if result.documents else None
