"""Before/after table of the hostile-input cases (issues 15 and 18).

Run the hardening tests twice with HOSTILE_FIGURES=FILE (once on the old
code, once on the new), then: python benchmarks/hostile_table.py BEFORE AFTER.
Each row: the case, its exit code, wall seconds and peak RSS (MiB) before and
after; "killed" is the 10 s bound, "MemoryError" the 200 MiB address-space cap.
"""

from __future__ import annotations

import json
import sys


def load(path: str) -> dict[str, dict]:
    rows: dict[str, dict] = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            rows.setdefault(row["test"], row)  # the first run of each case
    return rows


def cell(row: dict | None) -> str:
    if row is None:
        return "-"
    if row["rc"] is None:
        return f"killed at {row['seconds']:.0f} s"
    rc = "MemoryError (exit 3)" if row["memory_error"] else f"exit {row['rc']}"
    peak = "?" if row["peak_mib"] is None else f"{row['peak_mib']} MiB"
    return f"{rc}, {row['seconds']:.2f} s, {peak}"


def main() -> None:
    before, after = load(sys.argv[1]), load(sys.argv[2])
    print("| case | before | after |\n|---|---|---|")
    for test in sorted(set(before) | set(after)):
        print(f"| {test.split('::', 1)[-1]} | {cell(before.get(test))} | {cell(after.get(test))} |")
    print(f"\n{len(set(before) | set(after))} cases")


if __name__ == "__main__":
    main()
