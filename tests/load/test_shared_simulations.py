"""Simulations are shared by configuration and traffic, not promises, across ``--jobs`` workers
too (issue 28): budgets that differ only in their promises simulate the declared traffic once,
and two workers never run one simulation twice; the declared traffic's stream may start once per
worker (a worker that needs a later checkpoint than the other published starts it again)."""

from __future__ import annotations

import os
from pathlib import Path

import budgetlint.physics.serving_sim as serving_sim
from budgetlint.run import check as check_mod

BUDGET = """\
version: 1
kind: budgets
budgets:
  - name: svc-{i}
    owner: "@acme/serving"
    percentile: p95
    workload: {{prompt_tokens: 1000, output_tokens: 200, arrival_rate: {rate} request/s}}
    promise: {{ttft: {ttft}, tpot: 60 ms}}
    deployment: {{model: llama-3.1-8b, hardware: h100-sxm}}
"""


class _Logged:
    log: Path = Path("/dev/null")
    real = None


def _logged_work(path):  # type: ignore[no-untyped-def]
    """A worker's pass 2, noting which process ran it (module level: the pool pickles it by name)."""
    with open(_Logged.log, "a") as fh:
        fh.write(f"{os.getpid()}\n")
    return _Logged.real(path)


def _count_runs(monkeypatch, log: Path) -> None:
    """Every simulation appends its inputs to ``log`` (forked workers inherit the patch); a stream
    read at checkpoints (sample size by need, issue 28) is one line, marked ``stream``, however far
    it is read."""
    import budgetlint.physics.capacity as capacity_mod

    def logged(real, mark: str):  # type: ignore[no-untyped-def]
        def counted(cost, traffic, scheduler, **kw):  # type: ignore[no-untyped-def]
            with open(log, "a") as fh:
                fh.write(f"{os.getpid()} {traffic!r} {scheduler!r} {kw.get('requests')}{mark}\n")
            return real(cost, traffic, scheduler, **kw)

        return counted

    counted = logged(serving_sim.run, "")
    monkeypatch.setattr(serving_sim, "run", counted)
    monkeypatch.setattr(capacity_mod, "run", counted)
    monkeypatch.setattr(serving_sim, "stream", logged(serving_sim.stream, " stream"))


def _write(tmp_path: Path, specs: list[tuple[float, str]]) -> Path:
    d = tmp_path / "budgets"
    d.mkdir()
    for i, (rate, ttft) in enumerate(specs):
        (d / f"svc-{i:02d}.yaml").write_text(BUDGET.format(i=i, rate=rate, ttft=ttft))
    return d


def test_promises_do_not_split_the_simulation(tmp_path: Path, monkeypatch) -> None:
    """Three budgets of one traffic and three TTFT promises: one declared-traffic simulation
    (each lists its own verdicts from the same requests) and no closed-loop run: the saturation is a
    closed form (physics.capacity.steady_state, issue 25)."""
    log = tmp_path / "runs.log"
    _count_runs(monkeypatch, log)
    d = _write(tmp_path, [(2.0, "300 ms"), (2.0, "1 s"), (2.0, "3 s")])
    from budgetlint.options import Options

    check_mod.run_check([str(d)], Options(jobs=1))
    lines = log.read_text().splitlines()
    declared = [ln for ln in lines if "arrival_rate_per_s=2.0" in ln]
    closed = [ln for ln in lines if "concurrency=" in ln and "concurrency=None" not in ln]
    assert len(declared) == len(set(ln.split(" ", 1)[1] for ln in declared))  # none twice
    # the declared traffic: one stream of up to 2,000 requests, read by all three at its checkpoints
    assert len([ln for ln in declared if ln.endswith(" 2000 stream")]) == 1
    assert len(closed) == 0


def test_two_workers_never_simulate_one_configuration_twice(tmp_path: Path, monkeypatch) -> None:
    """12 files, 3 configurations (4 budgets each, differing only in their promise), --jobs 2:
    every (traffic, scheduler, requests) is simulated once over both workers."""
    log = tmp_path / "runs.log"
    _count_runs(monkeypatch, log)
    monkeypatch.setattr(check_mod, "MIN_PARALLEL_CHARS", 0)
    workers = tmp_path / "workers.log"
    monkeypatch.setattr(_Logged, "log", workers)
    monkeypatch.setattr(_Logged, "real", check_mod._work)
    monkeypatch.setattr(check_mod, "_work", _logged_work)
    specs = [(rate, ttft) for rate in (1.0, 3.0, 5.0) for ttft in ("400 ms", "800 ms", "2 s", "4 s")]
    d = _write(tmp_path, specs)
    from budgetlint.options import Options

    check_mod.run_check([str(d)], Options(jobs=2))
    lines = log.read_text().splitlines()
    pids = set(workers.read_text().split())
    assert len(pids) >= 1 and os.getpid() not in {int(p) for p in pids}, "the run used no workers"
    bodies = [ln.split(" ", 1)[1] for ln in lines]
    runs = [b for b in bodies if not b.endswith(" stream")]
    assert len(runs) == len(set(runs)), [b for b in runs if runs.count(b) > 1][:2]
    # the declared traffic's stream (sample size by need, issue 28): each checkpoint read is shared, but a
    # worker that needs a later checkpoint than the other has published starts the stream again (a
    # generator does not cross processes): never twice in one worker, and at most once per worker
    per_worker = [ln for ln in lines if ln.endswith(" stream")]
    assert len(per_worker) == len(set(per_worker)), [b for b in per_worker if per_worker.count(b) > 1][:2]
    streams = {ln.split(" ", 1)[1] for ln in per_worker}
    assert len(streams) == 3  # one configuration each: the promises do not split them
    closed = [b for b in bodies if "concurrency=None" not in b]
    assert closed == []  # the saturation is a closed form (issue 25): no closed-loop run
