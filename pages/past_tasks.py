"""Past tasks: the internal memory tool — search a user's past tasks, add texts, see history."""

from __future__ import annotations

import math

import streamlit as st

from core import usecases as uc
from dashboard.resources import current_instance, get_workbench
from dashboard.ui import as_plain_line, attempt

st.title("Past tasks")
st.caption("The internal memory tool: the nearest texts you produced for a user (cosine distance), "
           "with the key points that answer the query.")

wb = get_workbench()
instance = current_instance()
known = attempt("list the users", lambda: uc.catalogue(wb, uc.InstanceRequest(instance=instance)))
if known is None:
    st.stop()
users = known.users
user = st.selectbox("User", users, index=0 if users else None, key="pt_user", accept_new_options=True,
                    placeholder="Choose a user, or type a new user id",
                    help="Each user searches only their own past tasks.")
if not user:
    st.info("No past tasks yet in this instance. Type a user id above and add texts, or load the demo "
            "with `workbench demo load`.")
    st.stop()
if attempt("use this user id", lambda: uc.check_user_id(user)) is None:
    st.stop()
if not known.llm_configured:
    st.caption("No LLM configured: key points are the sentences most similar to the query (extractive). "
               "Set GROQ_API_KEY (or LLM_BASE_URL for an OpenAI-compatible server) to have an LLM extract them.")

search_tab, add_tab, history_tab, texts_tab = st.tabs(["Search", "Add texts", "History", "Stored texts"])


def filter_inputs(key: str) -> dict:
    """The task-type multiselect and the produced-date range of a tab, as the request fields they make (a
    range with one day picked is that day). The dates are days in UTC, both included, as the CLI reads
    --since/--until."""
    types_col, dates_col = st.columns(2)
    types = types_col.multiselect("Task types", known.types_in_use, key=f"{key}_types",
                                  placeholder="every type", help="Only texts of these task types.")
    days = dates_col.date_input("Produced between (UTC)", value=(), key=f"{key}_dates", format="YYYY-MM-DD",
                                help="The date of each text's latest version; both days are included. "
                                     "Pick one day twice for that day alone.")
    start, end = (days[0], days[-1]) if days else (None, None)
    return {"task_types": types, "date_from": start, "date_to": end}


def plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _widen(to: float) -> None:
    st.session_state["pt_max_distance"] = to
    st.session_state["pt_search_again"] = True


def render_result(result: uc.InternalMemoryResult, *, key: str, compact: bool = False) -> None:
    kp = result.keypoints
    # Extractive key points' note says what the caption above the tabs says already: no LLM configured.
    if kp.note and not compact and kp.mode != "extractive":
        (st.warning if kp.failed_batches else st.caption)(kp.note)
    if message := result.nothing_within:
        st.info(message)
        nearest = result.search.nearest_distance
        suggested = math.floor(nearest * 100 + 1) / 100 if nearest is not None else None
        if not compact and suggested is not None and suggested <= 1.0:
            st.button(f"Search again with max distance {suggested:.2f}", key=f"{key}_widen", on_click=_widen,
                      args=(suggested,))
        return
    label, found = result.query.label(), result.search
    # The filter as the user set it, and how many texts it let through of all the user's searchable ones.
    searched = (f" · {as_plain_line(label)} ({found.candidates} of {found.searchable} searchable match)"
                if label else f" (of {found.candidates} searchable)")
    st.markdown(f"**{plural(len(found.hits), 'past task')}** within distance {result.query.max_distance:.2f}"
                + searched + f" · key points: {kp.mode}"
                + (f" · {kp.llm_calls} LLM calls, {kp.total_tokens} tokens" if kp.mode == "llm" else ""))
    refs = {r.user_task_execution_pk: r for r in kp.references}
    failed = {pk: b.reason for b in kp.failed_batches for pk in b.user_task_execution_pks}
    for hit in result.search.hits:
        with st.container(border=True):
            icon_col, body = st.columns([1, 15])
            icon_col.markdown(f"### {as_plain_line(hit.task_icon)}")
            body.markdown(f"**{as_plain_line(hit.title)}**")
            body.caption(f"{as_plain_line(hit.task_name)} · {hit.date:%d %b %Y %H:%M} · "
                         f"distance {hit.distance:.4f} · execution #{hit.user_task_execution_pk}")
            ref = refs.get(hit.user_task_execution_pk)
            if ref:
                body.markdown("\n".join(f"- {as_plain_line(p)}" for p in ref.extracted_informations))
            elif hit.user_task_execution_pk in failed:
                body.warning("Key point extraction failed for this batch: "
                             + as_plain_line(failed[hit.user_task_execution_pk]))
            else:
                body.caption("Judged irrelevant to the query by the LLM.")
            if not compact:
                with body.expander("Full text"):
                    text = hit.production or ""
                    st.text(text)
    if not compact:
        with st.expander("Tool result as JSON (each past task's key points, with distance and date)"):
            st.json([r.model_dump(mode="json") for r in kp.references])


with search_tab:
    defaults = attempt("load the embedder", lambda: uc.past_task_defaults(wb))
    if defaults is None:
        st.stop()
    with st.form("pt_search"):
        # No example query: one user's subject ("late pallet deliveries") finds nothing in another's texts,
        # which is what a newcomer trying the example on the demo's first user saw.
        query = st.text_input("Query", key="pt_query", max_chars=uc.QUERY_MAX_CHARS,
                              placeholder="precise keywords from the text: its subject, a name, a place")
        st.caption(uc.limit_caption("Queries", uc.QUERY_MAX_CHARS))
        left, right = st.columns(2)
        # The request's own bounds (cosine distance is at most 2; the CLI and API take up to 2 and 100).
        max_distance = left.slider("Max distance (cosine, strictly below)", 0.0, 2.0, defaults.max_distance,
                                   0.01, key="pt_max_distance")
        left.caption(f"Default for `{defaults.embedder}`: {defaults.max_distance:.2f} "
                     + ("(calibrated on labelled query/text pairs)" if defaults.calibrated
                        else "(the seed's limit; not calibrated for this embedder)"))
        n_max = right.slider("At most (n_max)", 1, 100, defaults.n_max, key="pt_n_max")
        narrow = filter_inputs("pt_search")
        submitted = st.form_submit_button("Search", type="primary")
    again = st.session_state.pop("pt_search_again", False)
    if (submitted or again) and not query.strip():
        st.warning("Type a query first.")
    elif submitted or again:
        with st.spinner("Searching and extracting key points…"):
            result = attempt("search the past tasks", lambda: uc.internal_memory(wb, uc.PastTaskQuery(
                instance=instance, user_id=user, query=query, max_distance=max_distance, n_max=n_max,
                **narrow)))
        st.session_state["pt_result"] = (instance, user, result) if result else None
    shown = st.session_state.get("pt_result")
    if shown and shown[:2] == (instance, user):
        render_result(shown[2], key="current")

with add_tab:
    types = known.task_types
    with st.form("pt_add", clear_on_submit=True):
        names = [name for name, _ in types] or ["note"]
        task = st.selectbox("Task type", names, index=names.index("note") if "note" in names else 0,
                            accept_new_options=True,
                            help="Type a new name to create a task type.")
        files = st.file_uploader("Markdown or text files (one produced text each; "
                                 "the first line is the title)",
                                 type=[s.lstrip(".") for s in uc.TEXT_SUFFIXES], accept_multiple_files=True)
        st.caption("…or paste one text:")
        title = st.text_input("Title", key="pt_paste_title")
        pasted = st.text_area("Text", key="pt_paste_text", height=150)
        add = st.form_submit_button("Add to past tasks")
    if add:
        def build() -> uc.CheckedFiles:
            """The uploads checked one by one (a file that is empty or not text is named, the others kept),
            then the pasted text."""
            checked = uc.check_text_files(wb, uc.IngestFiles(
                instance=instance, user_id=user, task=task,
                files=[uc.TextFile(path=f.name, content=f.getvalue()) for f in files])) if files else None
            items = checked.texts if checked else []
            if pasted.strip():
                t, body = ((title.strip(), pasted) if title.strip()
                           else uc.text_from_file(None, pasted))
                items.append(uc.ProducedTextInput(instance=instance, user_id=user, task=task, title=t,
                                                  production=body))
            return uc.CheckedFiles(texts=items, refused=checked.refused if checked else [])

        checked = attempt("read the texts", build)
        items = checked.texts if checked else None
        for reason in checked.refused if checked else []:
            st.warning(f"Not stored: {as_plain_line(reason)}", icon=":material/block:")
        if checked and not items and not checked.refused:
            st.warning("Choose files or paste a text first.")
        elif items:
            bar = st.progress(0.0, text=f"Embedding and storing {len(items)} text(s)…")
            def step(done: int, total: int) -> None:
                bar.progress(done / total, text=f"Stored {done} of {total}")

            stored = attempt("store the texts", lambda: uc.ingest_texts(
                wb, uc.IngestTexts(items=items, batch_size=8), progress=step))
            if stored:
                done = [f"{as_plain_line(s.title)} "
                        f"({'new' if s.new_execution else f'version {s.version_number}'})" for s in stored]
                st.success("Stored: " + "; ".join(done) + ". They are searchable now.")

with history_tab:
    words_col, shown_col = st.columns([3, 1])
    contains = words_col.text_input("Queries containing", key="pt_history_contains", max_chars=uc.QUERY_MAX_CHARS,
                                    placeholder="a word or phrase of the query, in any letter case")
    limit = shown_col.selectbox("Show the newest", [30, 100, 300, 1000], key="pt_history_limit")
    past = attempt("read the query history", lambda: uc.tool_history(
        wb, uc.HistoryRequest(instance=instance, user_id=user, limit=limit, contains=contains))) or []
    if not past:
        st.caption(f"No query holds “{as_plain_line(contains.strip())}”." if contains.strip()
                   else "No queries yet for this user.")
    for i, h in enumerate(past):
        if h.result is None:  # a query that failed or has not finished
            st.caption(f"{h.created_at:%d %b %H:%M} · “{as_plain_line(h.query)}” · {h.status}"
                       + (f": {as_plain_line(h.error)}" if h.error else ""))
            continue
        r = h.result
        narrowed = r.query.label()
        label = (f"{h.created_at:%d %b %H:%M} · “{as_plain_line(h.query)}” · {len(r.references)} "
                 f"result(s) · max distance {r.query.max_distance:.2f}, n_max {r.query.n_max}"
                 + (f" · {as_plain_line(narrowed)}" if narrowed else ""))
        with st.expander(label):
            render_result(r, key=f"h{i}", compact=True)

with texts_tab:
    listing = uc.ListTexts(instance=instance, user_id=user, with_text=False, **filter_inputs("pt_texts"))
    texts = attempt("list the stored texts", lambda: uc.list_texts(wb, listing)) or []
    label = listing.label()
    st.caption(f"{plural(len(texts), 'produced text')} (latest versions)"
               + (f" · {as_plain_line(label)}" if label else "") + ". Deleted texts are never searched.")
    if texts:
        st.dataframe([{"execution": t.user_task_execution_pk, "task": f"{t.task_icon} {t.task_name}",
                       "title": t.title, "date": t.created_at, "versions": t.versions, "deleted": t.deleted,
                       "searchable": t.embedded and not t.deleted} for t in texts], hide_index=True,
                     width="stretch")
        pick = st.selectbox("Text", texts, format_func=lambda t: f"#{t.user_task_execution_pk} · {t.title}"
                            + (" (deleted)" if t.deleted else ""), key="pt_pick")
        if st.button("Restore" if pick.deleted else "Delete (as the user)", key="pt_toggle"):
            def toggle() -> bool:
                uc.mark_deleted(wb, uc.MarkDeleted(instance=instance, user_id=user,
                                                   execution_pk=pick.user_task_execution_pk,
                                                   deleted=not pick.deleted))
                return True

            if attempt("update the text", toggle):
                st.rerun()
