"""The evaluation stage: each budget's numbers, computed once.

After the model is built, :func:`evaluate_budget` turns one budget into one
:class:`BudgetEvaluation`: the roofline analysis (bound and realistic) with
a verdict per promise, the memory fit, the levers, and the linked benchmark
evidence with its comparisons. Rules, ``explain``, the report rows and every
reporter read this one result; nothing downstream computes physics again,
so rule order and ``select``/``ignore`` can change which findings are shown
but never a number in the report.

What evaluation needs besides the budget (the catalog, the run's assumed
efficiencies, the benchmark files read once per run) is an
:class:`Environment`, built once per run by the pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

from budgetlint.evaluate.evidence.records import BudgetEvidence, Link
from budgetlint.evaluate.evidence.store import BenchFile, BenchStore
from budgetlint.evaluate.roofline import PromiseVerdict, RooflineEvaluation
from budgetlint.model.types import Budget


@dataclass(frozen=True)
class Assumptions:
    """The realistic efficiencies a run assumes where a deployment does not say.

    ``None`` (the default): each deployment's class default, the median of
    public runs of its class (``physics.default_efficiency``,
    docs/calibration.md); a number set here (a flag or the config file)
    applies to every class."""

    efficiency_bandwidth: float | None = None
    efficiency_compute: float | None = None
    collective_overhead: float | None = None
    memory_usable_fraction: float = 0.9
    memory_reserve_bytes: float | None = None  # None: physics_inputs.DEFAULT_RUNTIME_RESERVE_BYTES


@dataclass
class Environment:
    """What every budget's evaluation shares in one run."""

    catalog: Any
    assumptions: Assumptions = field(default_factory=Assumptions)
    bench: BenchStore = field(default_factory=BenchStore)
    run_files: tuple[BenchFile, ...] = ()  # the run's --bench files, as read
    only_budget: bool = False  # the run has one budget: --bench files speak for it
    simulate: bool = True  # the load simulation (docs/load.md); --no-simulate turns it off
    load_cache: dict = field(default_factory=dict)  # identical configurations simulated once per run
    calibrations: dict = field(default_factory=dict)  # calibration files, read once per run
    today: Any = None  # datetime.date: evidence age and `bench:` expiry (the suppressions' day)
    evidence_defaults: Any = None  # freshness.Policy from the config's evidence-* keys
    shared: dict = field(default_factory=dict)  # levers of identical physics inputs, once per run (analysis_cache.py)
    calibration_max_age_days: float = 180.0  # BL311 (config `calibration-max-age`)
    prometheus: Any = None  # evaluate.prometheus_live.LiveSource: `check --prometheus URL` (docs/slo.md)
    slo_export: bool = False  # `budgetlint slo`: every budget's promises are production SLOs (BL601-BL603 speak)
    deployed_cache: dict = field(default_factory=dict)  # deployed configuration files, read once per run
    deployed_discovery: tuple = ()  # (folder, globs) of the config's `deployed-config` (docs/deployed-config.md)
    work: Any = None  # workbudget.WorkBudget: the run's events for the load simulation (None: no cap)
    load_disk: Any = None  # pathlib.Path: the simulation cache between runs (evaluate/load_disk.py); None: off
    prices: dict = field(default_factory=dict)  # the config's price list: hardware name -> USD/s (docs/cost.md)


@dataclass(frozen=True)
class BudgetEvaluation:
    """Everything computed about one budget; read by rules, explain and reporters."""

    budget: Budget
    roofline: RooflineEvaluation
    levers: tuple[Any, ...] = ()
    evidence: BudgetEvidence = field(default_factory=BudgetEvidence)
    analysis: Mapping[str, Any] = field(default_factory=dict)  # the report's `analysis`
    load: Any = None  # evaluate.load.LoadEvaluation when the budget declares traffic
    calibration: Any = None  # evaluate.calibration.CalibrationEvaluation when the deployment names one
    lengths: tuple[Any, ...] = ()  # evaluate.lengths.LengthsSource per `from_bench` length
    slo: Any = None  # evaluate.production.SloEvaluation: the promises as SLOs, production evidence
    deployed: Any = None  # evaluate.deployed.DeployedEvaluation when the deployment links a configuration
    cost: Any = None  # evaluate.cost.CostEvaluation: USD/Mtok, USD/request, J/token at the operating point
    #: promise -> judge.Judgement: set by the judgement step (budgetlint.judge.judged), after this one
    judgement: Mapping[str, Any] = field(default_factory=dict)

    @property
    def verdicts(self) -> Mapping[str, PromiseVerdict]:
        return self.roofline.verdicts

    @property
    def links(self) -> tuple[Link, ...]:
        return self.evidence.links

    def verdict_words(self) -> dict[str, str]:
        """promise -> verdict word, as the report's ``verdicts``: the judged word
        (budgetlint.judge) where the judgement step ran, else the roofline's."""
        out = {k: v.verdict for k, v in self.roofline.verdicts.items()}
        out.update({k: j.verdict for k, j in self.judgement.items()})
        return out


def evaluate_budget(budget: Budget, env: Environment) -> BudgetEvaluation:
    """The one evaluation of ``budget``.

    Workload lengths given ``from_bench`` are read first (evaluate/lengths.py):
    the evaluation's ``budget`` is then the budget with those lengths in it, and
    rules and reporters read that one."""
    from budgetlint.evaluate import roofline
    from budgetlint.evaluate.evidence import linking, summary
    from budgetlint.evaluate.levers import levers_for

    lengths: tuple[Any, ...] = ()
    if budget.workload is not None and budget.workload.reads_bench_lengths:  # else nothing to read (or import)
        from budgetlint.evaluate.lengths import resolve_lengths

        budget, lengths = resolve_lengths(budget, env.bench)
    deployed = None
    if budget.deployment is not None and (budget.deployment.config or budget.deployment.engine
                                          or budget.deployment.engine_version or env.deployed_discovery):
        from budgetlint.evaluate.deployed import resolve_deployed

        budget, deployed = resolve_deployed(budget, env)
    roof = roofline.evaluate(budget, env.assumptions)
    found = linking.link_budget(budget, bool(roof.skipped), env.catalog, env.bench, env.run_files,
                                 env.only_budget, env.today, env.evidence_defaults)
    cal = None
    if budget.deployment is not None and budget.deployment.calibration:
        from budgetlint.evaluate.calibration import evaluate_calibration

        today = env.today
        if today is None:
            import datetime as _dt

            today = _dt.date.today()
        cal = evaluate_calibration(budget, roof, found.links, today, env.calibration_max_age_days,
                                   getattr(env.bench, "roots", None), env.calibrations)
    levers: tuple[Any, ...] = ()
    if not roof.skipped and roof.pools is not None:  # the pools' levers: replicas moved between them
        from budgetlint.evaluate.disaggregated import simulate_splits

        work = getattr(env, "work", None)
        simulate_splits(roof.pools, budget, roof.efficiency, work.take if work is not None else None,
                        getattr(env, "load_cache", None))
    elif not roof.skipped and any(v.verdict != "met" for v in roof.verdicts.values()):
        levers = levers_for(env.catalog, roof, env.shared)
        roof.levers = list(levers)
    from budgetlint.evaluate.arithmetic import e2e_arithmetic

    analysis = roof.as_dict()
    analysis.update(e2e_arithmetic(budget))
    for seg in budget.segments:  # each segment row is owned by its segment's team
        if seg.owner and f"segment:{seg.name}" in roof.verdicts:
            analysis[f"owner_segment:{seg.name}"] = seg.owner
    if budget.cost_owner and budget.promise.cost_usd_per_token is not None:  # the cost row's own team
        analysis["owner_cost"] = budget.cost_owner
    analysis.update(summary.evidence_analysis(budget, found.links))
    if cal is not None:
        analysis["calibration"] = cal.as_dict()
    if deployed is not None:
        analysis.update(deployed.as_dict())
    load = None
    if budget.declares_load:  # else no simulation (and its module is not imported)
        from budgetlint.evaluate.load import evaluate_load

        sim = None
        if roof.pools is not None and not roof.skipped:  # both pools: the prefill queue feeding the decode pool's
            from budgetlint.evaluate.disaggregated import simulate_pools_load as sim
        load = evaluate_load(budget, roof, env, cal, sim)
    from budgetlint.evaluate.cost import evaluate_cost

    cost = evaluate_cost(budget, roof, load, env.prices)
    if cost is not None:
        analysis["cost"] = cost.as_dict()
    cost_promise = budget.promise.cost_usd_per_token
    if not roof.skipped and not levers and cost is not None and cost_promise is not None and \
            cost.usd_per_token is not None and cost.usd_per_token > cost_promise:
        levers = levers_for(env.catalog, roof, env.shared)  # a cost miss alone: what would make it cheaper
    if levers and cost is not None and (cost.price_usd_per_s is not None or cost_promise is not None):
        from budgetlint.evaluate.levers import with_costs  # a priced deployment's levers say what they cost

        levers = with_costs(levers, roof, env.catalog, env.prices, cost.price_usd_per_s if cost else None,
                            cost_promise, cost.point)
        roof.levers = list(levers)
        analysis["levers"] = roof.as_dict().get("levers", [])
    from budgetlint.evaluate.production import evaluate_slo

    live: tuple[Any, ...] = ()
    live_problems: tuple[Any, ...] = ()
    if env.prometheus is not None:
        live = env.prometheus.links(budget, env.today, env.evidence_defaults)
        live_problems = env.prometheus.problems_for(budget.name)
    slo = evaluate_slo(budget, found, load, live, live_problems, env.slo_export)
    if slo.production or slo.attainment:
        analysis["slo"] = slo.as_dict()
    return BudgetEvaluation(budget, roof, levers, found, MappingProxyType(analysis), load, cal, lengths,
                            slo=slo, deployed=deployed, cost=cost)
