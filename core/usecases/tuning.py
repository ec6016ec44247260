"""Tuning: read a labelled query set, evaluate a profile on it, search the weight grid, keep the best."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, Field, model_validator

from core.ids import Id
from core.models import FusionProfile
from core.retrieval.fusion import BOOSTED_AMONG
from core.retrieval.hybrid import default_pool
from core.retrieval.profile_text import tau_label
from core.tuning.datasets import (
    EvalDataset,
    EvalQuery,
    counted,
    default_locomo_path,
    is_evaluation_instance,
    left_out,
    load_dataset,
    set_notes,
)
from core.tuning.evaluate import (
    LEG_LABELS,
    MAX_K,
    EvalReport,
    Retrieve,
    Stop,
    evaluate_memoryscope,
    pool_label,
)
from core.tuning.evaluate import evaluate as run_evaluation
from core.tuning.labels import LabelledQuery, LabelledSet, LabelStore, check_ids
from core.tuning.measures import HANDED as HANDED_DEFINITION
from core.tuning.measures import (
    RANKING,
    SCOPE_HOW,
    SCOPE_LABEL,
    SCOPE_RANKING,
    SCOPE_SURFACES,
    all_definitions,
    help_paragraphs,
)
from core.tuning.measures import definition as metric_definition
from core.tuning.metrics import MetricsTable, parse_metric
from core.tuning.optimise import DEFAULT_RRF_KS, DEFAULT_TAUS, OptimiseReport, fetch_pools, save_best
from core.tuning.optimise import optimise as run_optimiser
from core.usecases.base import InstanceRequest, Progress
from core.usecases.retrieval import (
    ProfileRef,
    ProfileReplacement,
    RetrieveRequest,
    ScopeParams,
    profile_replacement,
    resolve_profile,
    retrieve_memory,
)

if TYPE_CHECKING:
    from core.runtime import Workbench

# For the front ends: the models they render, the optimiser's default τ grid, where the shared LoCoMo dev
# file is (None when absent), and what the figures measure in words (`core.tuning.measures`): the ranking
# scored and each metric's definition, for help texts and tooltips.
__all__ = [
    "BOOSTED_AMONG",
    "DEFAULT_TAUS",
    "HANDED_DEFINITION",
    "MAX_K",
    "PROFILE_NAME_MAX",
    "RANKING",
    "SCOPE_HOW",
    "SCOPE_LABEL",
    "SCOPE_RANKING",
    "SCOPE_SURFACES",
    "EvalDataset",
    "EvalReport",
    "LabelledQuery",
    "LabelledSet",
    "MetricsTable",
    "OptimiseReport",
    "all_definitions",
    "counted",
    "default_locomo_path",
    "default_pool",
    "evaluation_pool",
    "help_paragraphs",
    "is_evaluation_instance",
    "left_out",
    "metric_definition",
    "pool_label",
    "profile_name_refusal",
    "set_notes",
    "tau_label",
]


# The longest profile name the id rule allows (`core.ids.ID_RULE`), for a name field's limit.
PROFILE_NAME_MAX = 128


def profile_name_refusal(wb: Workbench, name: str) -> str | None:
    """Why saving a profile under `name` would be refused (a preset's name, or one differing from a
    profile's only in letter case), said before the click; None when it would not be, or cannot be read."""
    try:
        return wb.profiles.name_refusal(name.strip()) if name.strip() else None
    except Exception:  # noqa: BLE001 - a service down: the save itself says what is wrong
        return None


class ReadDataset(InstanceRequest):
    """A LoCoMo JSON or a JSONL query set, from a path or an upload's bytes; the format is detected. A JSONL
    set is evaluated against `instance`."""

    source: Path | bytes
    name: str | None = None
    samples: list[str] | None = Field(None, description="only these LoCoMo sample ids")


def read_dataset(wb: Workbench, req: ReadDataset) -> EvalDataset:
    """The set as evaluated: a JSONL set's relevant ids the instance does not hold are dropped and named
    (`unknown_ids`), never scored as misses in silence; its queries without relevant ids are left out and
    its repeated ones counted once, named too (`set_notes`)."""
    dataset = load_dataset(req.source, instance=req.instance_in(wb), name=req.name, samples=req.samples)
    return check_ids(wb, dataset) if dataset.kind == "jsonl" else dataset


def unknown_ids_note(ids: list[str]) -> str | None:
    """"3 ids are not in this instance: a, b, c" for a set's unknown relevant ids (`EvalDataset.unknown_ids`,
    `TuneReport.unknown_ids`), None when there are none."""
    if not ids:
        return None
    shown = ", ".join(ids[:10]) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")
    if len(ids) == 1:
        return f"1 id is not in this instance: {shown}. It was left out of the scores."
    return f"{len(ids)} ids are not in this instance: {shown}. They were left out of the scores."


class MarkRelevance(InstanceRequest):
    """A person's judgement of one result of a query: relevant, not relevant, or None to take it back."""

    query: str = Field(min_length=1, max_length=10_000)
    memory_id: Id
    relevant: bool | None


def mark_relevance(wb: Workbench, req: MarkRelevance) -> LabelledQuery | None:
    """Record the mark; returns the query's marks now (None once it has none left)."""
    instance = req.instance_in(wb)
    store = LabelStore(wb.pool())
    store.mark(instance, req.query, req.memory_id, req.relevant)
    return store.labelled_set(instance, req.query).get(req.query)


def labelled_set(wb: Workbench, req: InstanceRequest) -> LabelledSet:
    """The instance's marks by query; `.jsonl()` is the set as the Tune page and `eval --data` read it."""
    return LabelStore(wb.pool()).labelled_set(req.instance_in(wb))


class ClearLabels(InstanceRequest):
    query: str = Field(min_length=1, max_length=10_000)


def clear_labels(wb: Workbench, req: ClearLabels) -> int:
    """Take away every mark of one query; returns how many there were."""
    return LabelStore(wb.pool()).clear(req.instance_in(wb), req.query)


def locomo_sample_ids(path: Path) -> list[str]:
    """The conversations (sample ids) of a LoCoMo JSON file, to evaluate on some of them only."""
    return [str(sample.get("sample_id")) for sample in json.loads(Path(path).read_text(encoding="utf-8"))]


def evaluation_pool(ks: Sequence[int], pool_size: int | None = None) -> int:
    """The candidates per leg an evaluation at the cut-offs `ks` ranks: `pool_size`, else what a chat turn asking
    for the deepest cut-off draws, max(10, 2 × max(ks)) (`default_pool`): 50 at the default cut-offs. The
    evaluation's ranking is one search for that many memories, so by default it is that turn's ranking, as the
    Tune page's Rankings tab is a turn's asking for the rows shown."""
    return pool_size or default_pool(max(ks))


POOL_HELP = "candidates taken from each leg; None: a chat turn's for the deepest cut-off (`evaluation_pool`)"


class EvaluateRequest(InstanceRequest):
    dataset: EvalDataset
    profile: str | FusionProfile | None = Field(None, description="None: the instance's active profile")
    ks: list[int] = Field([1, 5, 10, 25], min_length=1)
    pool_size: int | None = Field(None, ge=1, le=2000, description=POOL_HELP)
    search_type: Literal["hybrid", "vector", "text"] = "hybrid"


class SideBySideRequest(InstanceRequest):
    dataset: EvalDataset
    profiles: list[str | FusionProfile] = Field(min_length=1)
    legs: bool = Field(True, description="also each leg alone: BM25 (text) and the dense leg (vector)")
    memoryscope: bool = Field(False, description="also each profile's retrieve_memory output: what an agent "
                                                 "gets (`evaluate_memoryscope`)")
    scope_params: ScopeParams = Field(ScopeParams(), description="the op parameters retrieve_memory runs with")
    ks: list[int] = Field([1, 5, 10, 25], min_length=1)
    pool_size: int | None = Field(None, ge=1, le=2000, description=POOL_HELP)


def evaluate_side_by_side(wb: Workbench, req: SideBySideRequest, *, progress: Progress | None = None,
                          stop: Stop | None = None) -> list[EvalReport]:
    """Each profile evaluated on the set, then (with `legs`) the text leg alone and the dense leg alone:
    what the fusion buys over either leg on the user's own data; then (with `memoryscope`) each profile's
    retrieve_memory output, which an agent gets instead of the ranking."""
    runs = [(p, "hybrid") for p in req.profiles] + ([(req.profiles[0], "text"), (req.profiles[0], "vector")]
                                                    if req.legs else [])
    reports = [evaluate(wb, EvaluateRequest(instance=req.instance, dataset=req.dataset, profile=p, ks=req.ks,
                                            pool_size=req.pool_size, search_type=t), progress=progress, stop=stop)
               for p, t in runs]
    if req.memoryscope:
        reports += [evaluate_agent_output(wb, ScopeEvaluateRequest(
            instance=req.instance, dataset=req.dataset, profile=p, ks=req.ks, params=req.scope_params),
            progress=progress, stop=stop) for p in req.profiles]
    return reports


class ScopeEvaluateRequest(InstanceRequest):
    dataset: EvalDataset
    profile: str | FusionProfile | None = Field(None, description="None: the instance's active profile")
    ks: list[int] = Field([1, 5, 10, 25], min_length=1)
    params: ScopeParams = Field(ScopeParams(), description="the op parameters retrieve_memory runs with")


def evaluate_agent_output(wb: Workbench, req: ScopeEvaluateRequest, *, progress: Progress | None = None,
                          stop: Stop | None = None) -> EvalReport:
    """The figures of what an agent gets: every query through `retrieve_memory`, the use case MCP
    `retrieve_memory`, HTTP /retrieve and `workbench retrieve` call, with the profile and op parameters, and
    its final memories scored against the labels."""
    profile = resolve_profile(wb, req.instance, req.profile)
    return evaluate_memoryscope(wb, req.dataset, profile, _retrieved_ids(wb, profile), tuple(req.ks),
                                params=req.params, progress=progress, stop=stop)


def _retrieved_ids(wb: Workbench, profile: FusionProfile) -> Retrieve:
    """A query's answer from `retrieve_memory` with `profile`, as the ids of its memories, best first."""
    def retrieve(q: EvalQuery, params: ScopeParams) -> list[str]:
        result = retrieve_memory(wb, RetrieveRequest(instance=q.instance, query=q.query, profile=profile,
                                                     params=params))
        return [m.memory.id for m in result.memories]
    return retrieve


def side_by_side_summary(reports: list[EvalReport], metric: str = "recall@10") -> str:
    """"Overall recall@10: balanced-default 0.938, candidate 0.963, text leg alone (BM25) 0.912, …", then
    the same of what chat hands over, of each report `evaluate_side_by_side` returned (`metric`, else the
    first metric when the reports have not got it). A second profile is the Tune page's candidate, and
    called so."""
    first = reports[0]
    metric = metric if metric in first.table.metrics else first.table.metrics[0]
    names = [r.label for r in reports]
    if len(reports) > 1 and reports[1].search_type == "hybrid" and names[1] != "candidate":
        names[1] = f"candidate {names[1]}"
    ranked = [(n, r) for n, r in zip(names, reports, strict=True) if r.search_type != "memoryscope"]
    line = f"Overall {metric}: " + ", ".join(f"{n} {r.value(metric):.3f}" for n, r in ranked)
    if any(r.search_type in LEG_LABELS for _, r in ranked):
        line += " (what fusing the two legs buys on this set)"
    handed = [(n, r.handed) for n, r in ranked if r.handed]
    if metric.startswith("recall@") and handed:
        line += (f"; {first.handed_label}: "
                 + ", ".join(f"{n} {table.value(metric):.3f}" for n, table in handed))
    return line + "".join(f"; {_agent_gets(r)}" for r in reports if r.search_type == "memoryscope") + "."


def _agent_gets(report: EvalReport) -> str:
    """"what an agent gets with balanced-default (retrieve_memory, 5 memories at most): recall@5 0.842, MRR
    0.798"."""
    most = report.ks[-1]
    return (f"what an agent gets with {report.profile.name} (retrieve_memory, {most} memories at most): "
            f"recall@{most} {report.value(f'recall@{most}'):.3f}, MRR {report.value(f'mrr@{most}'):.3f}")


def evaluate(wb: Workbench, req: EvaluateRequest, *, progress: Progress | None = None,
             stop: Stop | None = None) -> EvalReport:
    """Recall@k, nDCG@k and MRR per category of the profile's rankings (loading the corpora once).
    `stop` is asked between batches of queries; when it says so, `Cancelled` is raised."""
    profile = resolve_profile(wb, req.instance, req.profile)
    return run_evaluation(wb, req.dataset, profile, tuple(req.ks), pool_size=evaluation_pool(req.ks, req.pool_size),
                          progress=progress, stop=stop, search_type=req.search_type)


class OptimiseRequest(InstanceRequest):
    dataset: EvalDataset
    metric: str = "recall@10"
    category: str | None = Field(None, description="maximise over one category only")
    baseline: str | FusionProfile | None = Field(None, description="compared with the best; None: the "
                                                                    "instance's active profile")
    methods: Sequence[Literal["linear", "rrf"]] = ("linear", "rrf")
    taus: Sequence[float] = DEFAULT_TAUS
    rrf_ks: Sequence[int] = DEFAULT_RRF_KS
    name: str = "tuned"
    pool_size: int = Field(50, ge=1, le=2000)


def optimise(wb: Workbench, req: OptimiseRequest, *, progress: Progress | None = None,
             stop: Stop | None = None) -> OptimiseReport:
    """Every profile of the grid scored on the metric, from candidate pools fetched once, and the verdict:
    whether the best beats the baseline beyond noise (`core.tuning.verdict`)."""
    parse_metric(req.metric)
    baseline = resolve_profile(wb, req.instance, req.baseline)
    pools = fetch_pools(wb, req.dataset, req.pool_size, progress=progress, stop=stop)
    return run_optimiser(pools, req.metric, category=req.category, methods=req.methods,
                         taus=req.taus or DEFAULT_TAUS, rrf_ks=req.rrf_ks, baseline=baseline, name=req.name,
                         pool_size=req.pool_size, progress=progress, stop=stop)


class SaveTuned(InstanceRequest):
    report: OptimiseReport
    name: str
    activate: bool = False


def save_tuned(wb: Workbench, req: SaveTuned) -> FusionProfile:
    """Save the optimiser's best profile under `name`; with `activate`, the instance's turns use it.
    Refused (`InvalidInput`) when the report does not recommend it."""
    return save_best(wb, req.report, req.name, activate_for=req.instance_in(wb) if req.activate else None)


class TuneRequest(InstanceRequest):
    """A labelled query set to evaluate a profile on (as `ReadDataset` reads it) and, with `optimise`, the
    weight grid to search for a better one, kept under `save_as`."""

    source: Path | bytes
    name: str | None = None
    samples: list[str] | None = Field(None, description="only these LoCoMo sample ids")
    profile: str | FusionProfile | None = Field(None, description="None: the instance's active profile")
    ks: list[Annotated[int, Field(ge=1)]] = Field([1, 5, 10, 25], min_length=1)
    pool_size: int | None = Field(None, ge=1, le=2000, description=POOL_HELP)
    legs: bool = Field(False, description="also each leg alone: BM25 (text) and the dense leg (vector), as the "
                                          "Tune page's side-by-side evaluation")
    memoryscope: bool = Field(False, description="also retrieve_memory's output with the profile: what an agent "
                                                 "gets (MemoryScope, after fuse_rerank)")
    scope_params: ScopeParams = Field(ScopeParams(), description="the op parameters retrieve_memory runs with")
    optimise: bool = False
    metric: str = Field("recall@10", description="what the optimiser maximises")
    save_as: str | None = Field(None, description="save the optimiser's best profile under this name, "
                                                  "when it is recommended")
    activate: bool = Field(False, description="make the saved profile the instance's active one")

    @model_validator(mode="after")
    def _saved_to_activate(self) -> TuneRequest:
        if self.activate and not self.save_as:
            raise ValueError("activate needs save_as: the name to save the best profile under")
        return self


class TuneReport(BaseModel):
    instance: str
    evaluation: EvalReport
    legs: list[EvalReport] = Field([], description="with legs: the text leg alone, then the dense leg alone")
    memoryscope: EvalReport | None = Field(None, description="with memoryscope: retrieve_memory's output scored, "
                                                             "what an agent gets")
    optimiser: OptimiseReport | None = Field(None, description="with optimise")
    saved: FusionProfile | None = Field(None, description="with optimise and save_as, when the best "
                                                          "profile is recommended")
    unknown_ids: list[str] = Field([], description="relevant ids of a JSONL set the instance does not hold, "
                                                   "left out of the scores")
    left_out_queries: dict[str, list[str]] = Field({}, description="a JSONL set's queries left out, by the "
                                                   "reason the evaluation's `skipped` counts them under")
    set_notes: list[str] = Field([], description="a JSONL set's queries left out (no relevant ids) or counted "
                                                 "once (written more than once), named (`set_notes`)")
    replaced: ProfileReplacement | None = Field(None, description="with save_as: the saved profile of that "
                                                                  "name the save replaced")
    seconds: float = Field(description="the whole run, reading the set included")


def tune(wb: Workbench, req: TuneRequest, *, progress: Progress | None = None) -> TuneReport:
    """Read the set, evaluate the profile on it (with `legs`, each leg alone too, as the Tune page does; with
    `memoryscope`, retrieve_memory's output too);
    with `optimise`, score the weight grid against that
    profile and save the best under `save_as` when it is better beyond noise (the CLI's `eval`)."""
    t0 = time.perf_counter()
    if req.optimise:
        parse_metric(req.metric)  # a misspelt metric fails before the evaluation's minutes
    dataset = read_dataset(wb, ReadDataset(instance=req.instance, source=req.source, name=req.name,
                                           samples=req.samples))
    profile = resolve_profile(wb, req.instance, req.profile)
    evaluation, *others = evaluate_side_by_side(wb, SideBySideRequest(
        instance=req.instance, dataset=dataset, profiles=[profile], legs=req.legs, memoryscope=req.memoryscope,
        scope_params=req.scope_params, ks=req.ks, pool_size=req.pool_size), progress=progress)
    legs = [r for r in others if r.search_type in LEG_LABELS]
    agent = next((r for r in others if r.search_type == "memoryscope"), None)
    optimised = saved = replaced = None
    if req.optimise:
        optimised = optimise(wb, OptimiseRequest(instance=req.instance, dataset=dataset, metric=req.metric,
                                                 baseline=evaluation.profile, name=req.save_as or "tuned",
                                                 pool_size=evaluation.pool_size), progress=progress)
        if req.save_as and optimised.recommended:
            replaced = profile_replacement(wb, ProfileRef(name=optimised.best.name))
            saved = save_tuned(wb, SaveTuned(instance=req.instance, report=optimised, name=req.save_as,
                                             activate=req.activate))
    return TuneReport(instance=req.instance_in(wb), evaluation=evaluation, legs=legs, memoryscope=agent,
                      optimiser=optimised, saved=saved,
                      unknown_ids=dataset.unknown_ids, left_out_queries=dataset.left_out_queries,
                      set_notes=set_notes(dataset), replaced=replaced,
                      seconds=time.perf_counter() - t0)
