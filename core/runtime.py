"""`Workbench`: the settings and the clients one process shares (services, embedder, LLM).

Built once per process (the dashboard caches it with `st.cache_resource`); nothing connects or loads
a model until first used.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Self

from core.config import Settings, load_settings
from core.embeddings import Embedder, make_embedder
from core.errors import WorkbenchError
from core.llm import LLM, make_llm
from core.services import Services
from core.index.memory_index import MemoryIndex
from core.past_tasks.store import PastTaskStore
from core.retrieval.hybrid import SEARCH_SESSION
from core.retrieval.profiles import ProfileStore
from core.conversation.thoughts import ThoughtStore
from core.access.keys import KeyStore

if TYPE_CHECKING:
    from core.analytics.frames import FeedbackFrames


class WorkbenchClosed(WorkbenchError, RuntimeError):
    """A use case was handed a Workbench after its `close` (or the end of its `with` block)."""


# The stores a Workbench makes on first use: each holds the clients it was made with, which `close` closes.
STORES = ("thoughts", "feedback_frames", "index", "profiles", "past_tasks", "keys")


class Workbench:
    """One process's way into the memory: its settings, services and models, each made on first use.

    Pass it to the use cases (`core.usecases`); `close` (or the end of a `with` block, or
    `uc.stop_services`) closes its connections and gives up its lease on the embedded servers
    (`core.services.leases`), and from then on a use case given it raises `WorkbenchClosed` (make a new
    one to go on): its stores would otherwise fail later with a closed pool's error, or a turn go on without
    its memory. Embedded servers it started keep running for the next program (`uc.stop_services`,
    `workbench services stop`).

        with Workbench(load_settings(data_dir=Path("my-data"))) as wb:
            uc.remember(wb, uc.UiRememberParams(thought="Where did I park?", chain_id="car"))
    """

    def __init__(self, settings: Settings | None = None, *, embedder: Embedder | None = None,
                 llm: LLM | None = None):
        self.settings = settings or load_settings()
        self.services = Services(self.settings)
        self._closed = False
        if embedder is not None:
            self.__dict__["embedder"] = embedder
        if llm is not None:
            self.__dict__["llm"] = llm

    @cached_property
    def embedder(self) -> Embedder:
        return make_embedder(self.settings)

    @cached_property
    def llm(self) -> LLM:
        return make_llm(self.settings)

    def _open(self) -> Services:
        """The services, or WorkbenchClosed once `close` ran (`wb.services` itself stays usable after: the
        CLI releases the embedded servers through it)."""
        if self._closed:
            raise WorkbenchClosed("this Workbench is closed (close() or stop_services was called, or its `with` "
                                  "block ended): make a new Workbench to go on")
        return self.services

    @cached_property
    def thoughts(self) -> ThoughtStore:
        return ThoughtStore(self._open().redis(), cluster=self.settings.redis_cluster)

    @cached_property
    def feedback_frames(self) -> FeedbackFrames:
        """The feedback analytics' rows, kept between loads (`core.analytics.frames`)."""
        # Imported here: the analytics pull in pandas, which a command that reads no feedback skips.
        from core.analytics.frames import FeedbackFrames

        return FeedbackFrames(self.thoughts)

    @cached_property
    def index(self) -> MemoryIndex:
        return MemoryIndex(self._open().pool(), self.embedder)

    @cached_property
    def profiles(self) -> ProfileStore:
        return ProfileStore(self._open().pool())

    @cached_property
    def past_tasks(self) -> PastTaskStore:
        return PastTaskStore(self._open().pool(), self.embedder)

    @cached_property
    def keys(self) -> KeyStore:
        return KeyStore(self._open().pool())

    def redis(self):
        return self._open().redis()

    def redis_glance(self):
        """The Redis client for reads a caller can go without (`Services.redis_glance`)."""
        return self._open().redis_glance()

    def pool(self):
        return self._open().pool()

    def search_pool(self):
        """The pool for hybrid retrieval (`core.retrieval.hybrid`): its connections' sessions carry the
        search's settings, so a search sends its statement alone."""
        return self._open().pool(SEARCH_SESSION)

    def close(self) -> None:
        """Close the connections and give up the lease (`Services.leave`; a command's stays until its exit);
        the stores made with them are dropped, so none is used closed. Closing again does nothing more."""
        self._closed = True
        for name in STORES:
            self.__dict__.pop(name, None)
        self.services.leave()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
