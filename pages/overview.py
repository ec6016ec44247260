"""Overview: what the current instance holds, in counts that add up (its conversations, and its indexed
memories by kind: their messages, what formation made of them, memory-bank items), and which embedding
model made the memories' vectors (with a button to re-embed those of another model)."""

from __future__ import annotations

from datetime import UTC
from pathlib import Path

import streamlit as st

from core import usecases as uc
from dashboard.resources import current_instance, get_workbench
from dashboard.ui import attempt, plural

st.title("Memory Workbench")
st.caption("Conversational and agent memory: what is stored, how it is retrieved, and how users react.")

wb = get_workbench()
instance = current_instance()
if done := st.session_state.pop("overview_reembedded", None):
    st.success(f"Re-embedded {done.reembedded:,} memories of {done.instance} with `{done.model}`: the vector "
               "leg finds them now.")
stats = attempt("read what is stored", lambda: uc.stored_counts(wb, uc.InstanceRequest(instance=instance)))
PAGES = Path(__file__).resolve().parent
# A first path through the pages: (page file, label, what to do there).
FIRST_STEPS = [("chat.py", "Chat", ("talk to the assistant: every turn is remembered, and each answer shows "
                                    "the memories it drew on and why")),
               ("explorer.py", "Memory explorer", ("search what is stored, open the conversation a memory "
                                                   "came from, delete what should be forgotten")),
               ("past_tasks.py", "Past tasks", "add texts you wrote for a user and search them by meaning"),
               ("feedback.py", "Feedback", "see how users reacted to the answers"),
               ("tune.py", "Tune retrieval", "measure and tune how memories are ranked"),
               ("import_data.py", "Import", "bring in conversations from ChatGPT, Claude or a file")]


def render_first_steps(empty: bool) -> None:
    """What a new user does first, and how to connect an LLM (without one, answers are extractive). Open
    while there is nothing stored or no LLM connected: the two things a new user has to do."""
    with st.expander("New here? What to do first", expanded=empty or not wb.llm.configured,
                     icon=":material/flag:", key="overview_first_steps"):
        if empty:
            st.markdown("Nothing is stored in this instance yet: load the demo data with `workbench demo load` "
                        "in a terminal (then reload this page), or start on the Chat page.")
        for file, label, what in FIRST_STEPS:
            left, right = st.columns([1, 4], vertical_alignment="center")
            left.page_link(str(PAGES / file), label=label)
            right.caption(what)
        llm = "connected" if wb.llm.configured else "not connected: answers are put together from the memories"
        st.markdown(f"**Connect an LLM** (now {llm}). Set one of these in the environment or in "
                    "`.streamlit/secrets.toml`, then restart the dashboard:")
        st.markdown("- **Groq**: `GROQ_API_KEY=gsk_…`\n"
                    "- **Any OpenAI-compatible server**: `LLM_BASE_URL=https://host/v1` and `LLM_API_KEY=…` "
                    "(wins over Groq)\n"
                    "- **A local model, e.g. Ollama**: `LLM_BASE_URL=http://localhost:11434/v1`, with "
                    "`MODEL_FAST` and `MODEL_DEEP` set to models you pulled (e.g. `llama3.2`)")


render_first_steps(empty=bool(stats) and not stats.memories_by_model)  # nothing indexed in this instance


def _reembed(stats: uc.Overview) -> None:
    """Re-embed the memories of other models, with a progress bar; the page reloads with the new counts."""
    bar = st.progress(0.0, text="Re-embedding…")

    def step(done: int, total: int, _what: str) -> None:
        bar.progress(min(1.0, done / max(1, total)), text=f"Re-embedded {done:,} of {total:,}")

    result = attempt("re-embed the memories", lambda: uc.reembed(
        wb, uc.InstanceRequest(instance=stats.instance), progress=step))
    if result:
        st.session_state["overview_reembedded"] = result
        st.rerun()


# What each tile counts, shown on hovering its help mark.
TILE_HELP = {
    "Conversations": "the instance's chains: each chat, and each conversation an import brought",
    "Messages": "the conversations' messages in the index: each user message, and each answer but the extractive "
                "ones (they only restate memories, and are kept in their conversation)",
    "Indexed memories": "everything search finds: the messages, what formation made of them, memory-bank items "
                        "and memories imported as such (the table below, by kind)",
    "Past tasks": "texts produced for a user, searched on the Past tasks page (kept apart from the index)",
    "Answers": "every answer given or imported, whose users' reactions the Feedback page reads; extractive "
               "ones too, which the index leaves out (so Messages counts fewer answers)",
    "Instances": "the instances holding conversations or indexed memories (those an evaluation made too, which "
                 "the sidebar's picker leaves out)",
}
# Each part of the indexed memories (`Overview.index_parts`), as one and as many.
INDEX_PARTS = {"messages": ("message", "messages"), "formed": ("observation or summary", "observations and summaries"),
               "bank": ("memory-bank item", "memory-bank items"), "other": ("other memory", "other memories")}
COUNT = st.column_config.NumberColumn(format="localized")  # "36,430", as the tiles and captions write it


def index_caption(stats: uc.Overview) -> str:
    """One line of how the counts relate: the indexed memories as the sum of their parts."""
    conversations = plural(stats.tiles["Conversations"], "conversation")
    said = [plural(n, *INDEX_PARTS[part]) + (f" of the {conversations}" if part == "messages" else "")
            for part, n in stats.index_parts().items() if n]
    return f"{stats.tiles['Indexed memories']:,} indexed memories = " + (" + ".join(said) or "none yet") + "."


def span_caption(stats: uc.Overview) -> str | None:
    """The time the instance's memory spans (a year of use, or an import's original times), or None."""
    if stats.first_at is None or stats.last_at is None:
        return None
    first, last = stats.first_at.astimezone(UTC), stats.last_at.astimezone(UTC)
    days = (last.date() - first.date()).days + 1
    return (f"Memories stored from {first:%d %b %Y} to {last:%d %b %Y} (UTC, "
            f"{plural(days, 'day', 'days')}): the Chat page's time hint and the Memory explorer's dates narrow "
            "a search to part of it.")


def render_kinds(stats: uc.Overview) -> None:
    """The indexed memories by kind, with what each kind is."""
    st.subheader("What the index holds")
    st.caption(index_caption(stats))
    st.dataframe([{"kind": kind, "memories": n, "what it is": meaning}
                  for kind, n, meaning in stats.kinds_explained()],
                 hide_index=True, width="stretch", column_config={"memories": COUNT})


if stats:
    cols = st.columns(len(stats.tiles))
    for col, (label, value) in zip(cols, stats.tiles.items(), strict=True):
        col.metric(label, f"{value:,}", help=TILE_HELP.get(label))
    if span := span_caption(stats):
        st.caption(span)
    if stale := stats.not_in_vector_leg:
        st.warning(f"{stale:,} memories of {stats.instance} have no vector of the active embedder "
                   f"`{stats.active_model}`: semantic search (the vector leg) misses them, and only the text "
                   "leg finds them, until they are re-embedded (`workbench reembed` does the same).")
        if st.button(f"Re-embed {stale:,} memories with {stats.active_model}", key="overview_reembed"):
            _reembed(stats)
    if stats.memories_by_kind:
        render_kinds(stats)
    if stats.memories_by_model:
        st.subheader("Memories per embedding model")
        st.dataframe([{"model": model, "memories": count, "in the vector leg": model == stats.active_model}
                      for model, count in stats.memories_by_model.items()], hide_index=True, width="stretch",
                     column_config={"memories": COUNT})
    st.subheader("Settings in use")
    st.dataframe([{"setting": k, "value": str(v)} for k, v in wb.settings.public_view().items()],
                 hide_index=True, width="stretch")
