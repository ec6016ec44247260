"""Overview: what is stored, per service, for the current instance, and which embedding model made the
memories' vectors (with a button to re-embed those of another model)."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from core import usecases as uc
from dashboard.resources import current_instance, get_workbench
from dashboard.ui import attempt

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


if stats:
    cols = st.columns(len(stats.tiles))
    for col, (label, value) in zip(cols, stats.tiles.items(), strict=True):
        col.metric(label, f"{value:,}")
    if stale := stats.not_in_vector_leg:
        st.warning(f"{stale:,} memories of {stats.instance} have no vector of the active embedder "
                   f"`{stats.active_model}`: semantic search (the vector leg) misses them, and only the text "
                   "leg finds them, until they are re-embedded (`workbench reembed` does the same).")
        if st.button(f"Re-embed {stale:,} memories with {stats.active_model}", key="overview_reembed"):
            _reembed(stats)
    if stats.memories_by_model:
        st.subheader("Memories per embedding model")
        st.dataframe([{"model": model, "memories": count, "in the vector leg": model == stats.active_model}
                      for model, count in stats.memories_by_model.items()], hide_index=True, width="stretch")
    st.subheader("Settings in use")
    st.dataframe([{"setting": k, "value": str(v)} for k, v in wb.settings.public_view().items()],
                 hide_index=True, width="stretch")
