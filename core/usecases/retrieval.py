"""Retrieval: MemoryScope's personal memory retrieval, fusion profiles, and the live profile comparison."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, field_serializer

from core.conversation.indexing import sync_before_search
from core.errors import NotFound
from core.ids import Id
from core.models import PRESET_PROFILES, FusionProfile, ProfileName
from core.retrieval.fusion import BEST_SHARE, CHAIN_WEIGHT, SPEAKER_WEIGHT, relevance_weights
from core.retrieval.memoryscope import ChatMessage, OpTrace, ScopeParams, ScopeResult, run_memoryscope
from core.retrieval.memoryscope.chain_messages import read_chain_messages
from core.retrieval.memoryscope.params import DEFAULT_FUSE_RATIOS, ReadMessageParams
from core.retrieval.profile_text import describe_profile, recency_label
from core.retrieval.profiles import Activation
from core.retrieval.timeparse import TimeHint
from core.tuning.compare import Comparison, compare_profiles
from core.usecases.base import InstanceRequest, Request

if TYPE_CHECKING:
    from core.runtime import Workbench

# For the front ends: the models they build requests from and render results with.
__all__ = ["BEST_SHARE", "CHAIN_WEIGHT", "DEFAULT_FUSE_RATIOS", "SPEAKER_WEIGHT", "Activation", "Comparison", "FusionProfile", "OpTrace", "ScopeParams",
           "ScopeResult", "describe_profile", "recency_label", "relevance_weights"]


class ProfileRef(InstanceRequest):
    """A profile by name; no name means the instance's active profile."""

    name: Id | None = None


def get_profile(wb: Workbench, req: ProfileRef) -> FusionProfile:
    return wb.profiles.get(req.name) if req.name else wb.profiles.active(req.instance_in(wb))


class ProfileList(BaseModel):
    instance: str
    active: str
    profiles: list[FusionProfile]
    presets: list[str] = Field(description="the shipped profiles among `profiles`: they cannot be deleted")
    last_activation: Activation | None = Field(description="the instance's last change of active profile, "
                                                           "which `undo_activation` reverts")


def list_profiles(wb: Workbench, req: InstanceRequest) -> ProfileList:
    """The shipped presets and the saved profiles, which one the instance uses, and since when."""
    instance = req.instance_in(wb)
    # The active profile is read first: a profile saved and activated between the two reads is then in
    # the list too, so `active` always names one of `profiles`.
    active = wb.profiles.active(instance).name
    return ProfileList(instance=instance, active=active, profiles=wb.profiles.list(),
                       presets=list(PRESET_PROFILES), last_activation=wb.profiles.last_activation(instance))


class ProfileReplacement(BaseModel):
    """What saving under a name already taken replaces: the saved profile of that name, and the instances it
    is active in. Their live retrieval changes the moment it is saved, and no activation is recorded, so
    `undo_activation` cannot bring the old weights back."""

    previous: FusionProfile
    active_in: list[str] = Field(description="the instances whose active profile it is, sorted")

    def _in_use(self, remedy: str) -> str:
        if not self.active_in:
            return ""
        shown = ", ".join(self.active_in[:5]) + (f" and {len(self.active_in) - 5} more"
                                                 if len(self.active_in) > 5 else "")
        return (f"; it is active in instances: {shown}, whose chat retrieves with the new weights at once, and "
                f"undo cannot bring the old ones back ({remedy})")

    @property
    def warning(self) -> str:
        """Before the save: what saving under this name will replace."""
        return (f"Saving replaces {self.previous.name!r} ({describe_profile(self.previous)})"
                + self._in_use("save under another name to keep them") + ".")

    @property
    def note(self) -> str:
        """After the save: what it replaced."""
        return (f"replaced {self.previous.name!r} (was {describe_profile(self.previous)})"
                + self._in_use("save them again to restore them") + ".")


def profile_replacement(wb: Workbench, req: ProfileRef) -> ProfileReplacement | None:
    """What saving a profile under `req.name` would replace; None for a new name (or a preset's, which
    cannot be saved over)."""
    if not req.name or req.name in PRESET_PROFILES:
        return None
    try:
        previous = wb.profiles.get(req.name)
    except NotFound:
        return None
    return ProfileReplacement(previous=previous, active_in=wb.profiles.active_in(req.name))


class SaveProfile(InstanceRequest):
    profile: FusionProfile
    activate: bool = False


def save_profile(wb: Workbench, req: SaveProfile) -> FusionProfile:
    """Save a profile (the last write wins: `profile_replacement` says beforehand what it replaces); with
    `activate`, every later turn of the instance uses it."""
    saved = wb.profiles.save(req.profile)
    if req.activate:
        wb.profiles.activate(req.instance_in(wb), saved.name)
    return saved


class ActivateProfile(InstanceRequest):
    name: Id


def activate_profile(wb: Workbench, req: ActivateProfile) -> FusionProfile:
    """Make the profile the instance's active one; the change is recorded, so it can be undone."""
    return wb.profiles.activate(req.instance_in(wb), req.name)


def undo_activation(wb: Workbench, req: InstanceRequest) -> Activation:
    """Give the instance back the profile it used before its last activation (again: one further back)."""
    return wb.profiles.undo_activation(req.instance_in(wb))


class DeleteProfile(Request):
    name: Id


def delete_profile(wb: Workbench, req: DeleteProfile) -> FusionProfile:
    """Delete a saved profile (presets and a profile some instance uses are refused); returns it."""
    return wb.profiles.delete(req.name)


class RetrieveRequest(InstanceRequest):
    """MemoryScope's flow for one query, with its ops' parameters under their own names."""

    query: str = Field(min_length=1, max_length=10_000)
    profile: ProfileName | FusionProfile | None = Field(None, description="a profile, its name, or None for "
                                                                           "the instance's active one")
    params: ScopeParams = ScopeParams()


def resolve_profile(wb: Workbench, instance: str | None, profile: str | FusionProfile | None
                    ) -> FusionProfile:
    """A request's profile: given whole, by name, or None for the instance's active one."""
    if isinstance(profile, FusionProfile):
        return profile
    return get_profile(wb, ProfileRef(instance=instance, name=profile))


def retrieve_memory(wb: Workbench, req: RetrieveRequest) -> ScopeResult:
    """set_query → (extract_time ∥ retrieve_memory → semantic_rank) → fuse_rerank → print_memory; first, the
    thoughts still queued for the memory index are indexed (`sync_before_search`)."""
    sync_before_search(wb)
    profile = resolve_profile(wb, req.instance, req.profile)
    return run_memoryscope(wb, req.query, instance=req.instance_in(wb), profile=profile, params=req.params)


class RetrieveReportRequest(RetrieveRequest):
    trace: bool = Field(False, description="keep every op's input size, output, parameters and time")


class RetrievalReport(BaseModel):
    """A retrieval as a JSON front end shows it: each memory one flat row of its scores with its formatted
    line, and the trace only when asked for."""

    query: str
    instance: str
    profile: str = Field(description="the fusion profile's name")
    timestamp: datetime
    time: TimeHint | None = Field(description="the time the query speaks of, if any")
    memories: list[dict[str, Any]] = Field(description="best first: id, type, content, the scores, formatted")
    answer: str
    total_ms: float
    trace: list[OpTrace] | None = None

    @field_serializer("timestamp")
    def _iso(self, when: datetime) -> str:  # with its offset as written, e.g. +00:00
        return when.isoformat()


def retrieval_report(wb: Workbench, req: RetrieveReportRequest) -> RetrievalReport:
    """`retrieve_memory`, summed up for a JSON front end (the CLI's `retrieve`, an HTTP API)."""
    result = retrieve_memory(wb, req)
    return RetrievalReport(
        query=result.query, instance=result.instance, profile=result.profile.name, timestamp=result.timestamp,
        time=result.time_hint, memories=[m.summary() | {"formatted": m.formatted} for m in result.memories],
        answer=result.answer, total_ms=round(result.total_ms, 2), trace=result.trace if req.trace else None)


class CompareRequest(InstanceRequest):
    """Two profiles' rankings of one query's candidates; `active` None means the instance's active one."""

    query: str = Field(min_length=1, max_length=10_000)
    candidate: FusionProfile
    active: FusionProfile | None = None
    pool_size: int | None = Field(None, ge=1, le=2000, description="candidates per leg; None: those a chat "
                                  "turn asking for `rows` memories draws from")
    similarity_threshold: float = Field(0.0, ge=0, le=1, allow_inf_nan=False)
    rows: int = Field(10, ge=1, le=200)


def compare(wb: Workbench, req: CompareRequest) -> Comparison:
    sync_before_search(wb)  # so it ranks what chat would retrieve
    instance = req.instance_in(wb)
    active = req.active or wb.profiles.active(instance)
    return compare_profiles(wb, instance, req.query, active, req.candidate, pool_size=req.pool_size,
                            similarity_threshold=req.similarity_threshold, rows=req.rows)


class ReadMessageRequest(InstanceRequest):
    """MemoryScope's read_message over one chain (parameters `op.read_message_op.params.*`)."""

    chain_id: Id
    params: ReadMessageParams = ReadMessageParams()


class ReadMessageResult(BaseModel):
    instance: str
    chain_id: str
    messages: list[ChatMessage] = Field(description="the unmemorized messages, oldest first")
    trace: OpTrace


def read_message(wb: Workbench, req: ReadMessageRequest) -> ReadMessageResult:
    """The chain's recent messages the memory index does not hold yet (not `memorized`), with the op's trace."""
    instance = req.instance_in(wb)
    messages, trace = read_chain_messages(wb, instance, req.chain_id, req.params)
    return ReadMessageResult(instance=instance, chain_id=req.chain_id, messages=messages, trace=trace)
