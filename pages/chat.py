"""Chat: talk to the memory-backed assistant (ui_remember) and see what was retrieved and why."""

from __future__ import annotations

import uuid

import streamlit as st
from pydantic import ValidationError

from core import usecases as uc
from core.errors import NotFound, OutcomeUnknown
from dashboard.chat_picker import conversation_caption, open_chain, render_picker
from dashboard.chat_view import MESSAGE_DIRECTION, render_conversation
from dashboard.resources import current_instance, get_workbench, summarise_in_background
from dashboard.ui import as_plain_line, as_plain_markdown, attempt, show_error, show_invalid

WATCH_EVERY_S = 5  # how soon a chain made elsewhere (CLI, MCP, HTTP, another tab) shows in the list
ORIGIN = uc.Origin(source="dashboard")
# The turn's fields by the labels of their inputs, for messages about a refused input.
INPUT_LABELS = {"thought": "Message", "temporal": "Time hint", "tags": "Tags for this turn",
                "intermediate_steps": "Earlier tool and its output", "token_cap": "Token cap",
                "top_k": "top_k", "similarity_threshold": "Similarity threshold", "profile": "Fusion profile"}

st.title("Chat")
st.html(MESSAGE_DIRECTION)  # a right-to-left message laid out right to left
wb = get_workbench()
instance = current_instance()
# The sweep: answers left without a follow-up marked at once, the quiet chains summarised without the page
# waiting (`summarise_in_background`).
marked = attempt("sweep abandoned answers",
                 lambda: uc.mark_abandoned(wb, uc.InstanceRequest(instance=instance)))
if marked is not None:
    summarise_in_background(wb, instance)

# -- choose or start a chain ------------------------------------------------------------------
picked = render_picker(wb, instance)
chain_id = picked.chain_id


def signature(page_of_chains: uc.ChainPage) -> tuple:
    """What a turn made elsewhere changes in the listing: the total, the chains in order, and each one's turn
    count and last activity (a new turn in the chain already first changes only these)."""
    return page_of_chains.total, tuple((c.chain_id, c.turns, c.last_at) for c in page_of_chains.chains)


# The list is read once per run, so chains made or continued elsewhere would only show after the user did
# something. This fragment re-reads the page of chains every few seconds and, when its `signature` differs
# from what this run listed, reruns the whole page (the open conversation with it). It watches rather than
# draws the list: a widget inside a fragment reruns only the fragment, so picking a chain there would not
# load its conversation below.
@st.fragment(run_every=WATCH_EVERY_S)
def watch_chains(listed: tuple) -> None:
    try:
        fresh = uc.chains(wb, picked.watched)
    except Exception:  # noqa: BLE001  (the run that listed the chains has shown the error, if any)
        return
    if signature(fresh) != listed:
        st.rerun(scope="app")


if picked.listing is not None:
    watched = picked.listing if picked.watched.title == picked.listing.title else attempt(
        "list conversations", lambda: uc.chains(wb, picked.watched))
    if watched is not None:
        watch_chains(signature(watched))
conversation, gone = None, False
if chain_id:
    try:
        conversation = uc.conversation(wb, uc.ConversationRef(instance=instance, chain_id=chain_id))
    except NotFound:  # deleted elsewhere (the explorer, the CLI, an assistant's forget) since it was listed
        gone, chain_id = True, None  # a message now starts a new conversation, not one on the deleted id
    except Exception as e:  # noqa: BLE001 - shown as a message with what to do, never a traceback
        show_error(e, "load the conversation")
if conversation:
    st.caption(conversation_caption(conversation, picked.summary))

# -- turn settings ------------------------------------------------------------------------------
known = attempt("list profiles", lambda: uc.list_profiles(wb, uc.InstanceRequest(instance=instance)))
profiles = [p.name for p in known.profiles] if known else ["balanced-default"]
active = known.active if known else profiles[0]
# A key keeps the expander open or closed across reruns (a turn reruns the page).
with st.expander("Turn settings", key="chat_turn_settings", on_change="rerun"):
    c1, c2, c3 = st.columns(3)
    top_k = c1.slider("top_k (context items)", 1, 20, 5)
    style = c2.selectbox("Style", ["default", "deep", "chronological"],
                         help="deep → the deep model; chronological → answer in time order")
    if style == "deep" and not wb.llm.configured:
        c2.caption("No LLM is connected, so answers are put together from the memories themselves: "
                   "“deep” changes nothing until one is (see the Overview page).")
    profile = c3.selectbox("Fusion profile", profiles, index=profiles.index(active) if active in profiles else 0)
    c4, c5, c6 = st.columns(3)
    threshold = c4.slider("Similarity threshold (min semantic)", 0.0, 1.0, 0.0, 0.05)
    token_cap = c5.number_input("Token cap for context (0 = none)", 0, 100_000, 0, step=100)
    temporal = c6.text_input("Time hint", placeholder="e.g. last week, in March")
    c9, c10, c11 = st.columns([2, 1, 1], vertical_alignment="bottom")
    tags = c9.multiselect("Tags for this turn", options=[], accept_new_options=True,
                          help="Stored with the turn; with the filter on, they also choose what is retrieved.")
    filter_tags = c10.toggle("Retrieve only these tags", value=False, key="chat_filter_tags", disabled=not tags,
                             help="Only memories carrying one of this turn's tags are retrieved.") and bool(tags)
    search_type = c11.selectbox("Search", ["hybrid", "vector", "text"], key="chat_search_type",
                                help="hybrid: meaning and keywords; vector: meaning only; text: keywords "
                                     "only. The speaker and chain parts of a memory's score: in hybrid only.")
    c7, c8 = st.columns([1, 2])
    include_history = c7.toggle("Include chat history", value=True, key="chat_include_history",
                                help="Off: the prompt gets no earlier turns of this conversation.")
    step_title = c7.text_input("Earlier tool", placeholder="e.g. web_search", key="chat_step_title")
    step_output = c8.text_area("Its output (goes into the prompt's intermediate tool outputs)", height=90,
                               key="chat_step_output")

# -- the conversation ---------------------------------------------------------------------------


def rate(answer_id: str, rating: str) -> None:
    attempt("rate the answer", lambda: uc.rate_answer(wb, uc.RateAnswer(
        instance=instance, answer_id=answer_id, rating=rating)))


if conversation:
    render_conversation(conversation, rate)
elif gone:
    st.info(f"Conversation {as_plain_line(picked.chain_id)} is no longer there: it was deleted. A message below "
            "starts a new one.", icon=":material/delete:")
else:
    st.info("Start a conversation below. Each answer shows the memories it drew on — from this "
            "conversation and every other one in this instance — with their score parts.")
st.session_state.just_answered = False

# A sent message is the pending turn (`submitted`) until it is answered or refused: the input is disabled
# meanwhile, and a run that is interrupted (another widget touched while the LLM is slow) leaves it pending,
# so the next run answers it, with the same request id (stored once). A second message can't drop the first.
# A turn whose outcome was unknown (the connection to Redis lost while it was stored) is retried the same way.


def submitted(chain_id: str | None) -> None:
    """The chat input's callback, run before the page's next run: the message becomes the pending turn."""
    text = st.session_state.get("chat_text") or ""
    if text.strip():
        st.session_state.chat_pending = {"text": text, "request_id": f"chat-{uuid.uuid4().hex}",
                                         "chain_id": chain_id}
    else:
        st.session_state.chat_blank = True


def stream_answer(params: uc.UiRememberParams) -> uc.UiRememberResult:
    """The answer in the assistant's bubble as it comes: a spinner with the time waited while the LLM is
    asked, then the text as it grows, started over when the LLM broke off mid-answer (the extractive answer
    follows, whole)."""
    events = uc.remember_stream(wb, params, origin=ORIGIN)
    text = ""
    with st.chat_message("assistant"):
        slot = st.empty()
        for event in events:
            if isinstance(event, uc.Synthesising):
                with slot.container(), st.spinner(f"Waiting for {event.model}… (at most {event.timeout_s:g} s, "
                                                  "LLM_TIMEOUT_S)", show_time=True):
                    event = next(events)  # the answer's first piece ends the wait
            if isinstance(event, uc.UiRememberResult):
                return event
            text = "" if isinstance(event, uc.AnswerRestarts) else text + event
            slot.markdown(as_plain_markdown(text))
    raise RuntimeError("the turn ended without its result")  # unreachable: remember_stream ends with it


def answer(turn: dict) -> None:
    """Answer the pending `turn`; a failure is kept for the next run to show above the input, which the
    rerun enables again."""
    user_turns = conversation.user_turns if conversation else 0
    with st.chat_message("user"):
        st.text(turn["text"])
    try:
        params = uc.UiRememberParams(
            instance=instance, thought=turn["text"], chain_id=turn["chain_id"], request_id=turn["request_id"],
            total_thoughts=user_turns + 1,
            top_k=top_k, style=style, profile=profile, similarity_threshold=threshold,
            token_cap=token_cap or None, temporal=temporal or None, tags=tags,
            filter_tags=filter_tags, search_type=search_type,
            include_history=include_history,
            intermediate_steps={(step_title.strip() or "tool"): step_output} if step_output.strip() else {})
        result = stream_answer(params)
        # A new chain is labelled by its first message.
        open_chain(instance, result.chain_id, title=turn["text"][:120])
        st.session_state.just_answered = True
        st.session_state.pop("chat_unsure", None)
    except OutcomeUnknown as e:  # shown above the input with a Retry
        st.session_state.chat_unsure = {**turn, "error": e}
    except Exception as e:  # noqa: BLE001 - shown as a message with what to do, never a traceback
        st.session_state.chat_failed = {"text": turn["text"], "error": e}
    st.session_state.pop("chat_pending", None)
    st.rerun()


if failed := st.session_state.pop("chat_failed", None):
    with st.chat_message("user"):
        st.text(failed["text"])
    if isinstance(failed["error"], ValidationError):  # a setting out of range, named by its label
        show_invalid(failed["error"], "answer this turn", INPUT_LABELS)
    else:
        show_error(failed["error"], "answer this turn")
pending = st.session_state.get("chat_pending")
if (unsure := st.session_state.get("chat_unsure")) and not pending:
    show_error(unsure["error"], "answer this turn")
    if st.button("Retry", key="chat_retry", help="Sends the same message with the same request id: it is "
                                                  "stored at most once."):
        pending = st.session_state.chat_pending = {k: v for k, v in unsure.items() if k != "error"}
if st.session_state.pop("chat_blank", False):
    st.warning("Type a message first.", icon=":material/edit:")
st.caption(uc.limit_caption("Messages", uc.MESSAGE_MAX_CHARS))
st.chat_input("Ask something, or tell the assistant something to remember", max_chars=uc.MESSAGE_MAX_CHARS,
              key="chat_text", on_submit=submitted, args=(chain_id,), submit_mode="disable",
              disabled=pending is not None)
if pending:
    answer(pending)
