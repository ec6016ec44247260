"""Labelling from what you see: "relevant / not relevant" marks on a search's results (the Memory explorer),
and on the Tune page the labelled set they build, evaluated directly and exported as JSONL."""

from __future__ import annotations

import hashlib

import pandas as pd
import streamlit as st

from core import usecases as uc
from core.usecases.tuning import HANDED_DEFINITION, RANKING, all_definitions, metric_definition
from dashboard.resources import get_workbench
from dashboard.ui import as_plain_line, attempt, confirm_in_dialog, plural

MARKS = {"Relevant": True, "Not relevant": False}
K = "label_"  # session-state prefix
KS = [1, 3, 5, 10]


# -- marks on a search's results (the Memory explorer) ---------------------------------------------

def query_marks(instance: str, query: str) -> uc.LabelledQuery | None:
    """The query's marks so far: None when it has none (or they could not be read: the error is shown)."""
    labelled = attempt("read the relevance marks", lambda: uc.labelled_set(
        get_workbench(), uc.InstanceRequest(instance=instance)))
    return labelled.get(query) if labelled else None


def marks_caption(marks: uc.LabelledQuery | None) -> None:
    done = f" So far: {len(marks.relevant)} relevant, {len(marks.not_relevant)} not." if marks else ""
    st.caption("Mark results **Relevant** or **Not relevant** to this query: the marks build this instance's "
               f"labelled set, which the Tune page evaluates and exports.{done}")


def mark_key(instance: str, query: str, memory_id: str) -> str:
    """The widget key of one result's mark control."""
    return f"{K}{hashlib.sha1((instance + chr(0) + query).encode()).hexdigest()[:12]}_{memory_id}"


def mark_control(where, instance: str, query: str, memory_id: str, marks: uc.LabelledQuery | None) -> None:
    """Relevant / Not relevant for one result; clicking the chosen one again takes the mark away."""
    current = None
    if marks is not None and memory_id in marks.relevant:
        current = "Relevant"
    elif marks is not None and memory_id in marks.not_relevant:
        current = "Not relevant"
    # One widget per instance, query and memory: a new query shows its own stored marks, not the last one's.
    key = mark_key(instance, query, memory_id)
    where.segmented_control("Relevant to the query?", list(MARKS), default=current, key=key,
                            on_change=_marked, args=(instance, query, memory_id, key),
                            label_visibility="collapsed")


def _marked(instance: str, query: str, memory_id: str, key: str) -> None:
    kept = attempt("keep the mark", lambda: uc.mark_relevance(get_workbench(), uc.MarkRelevance(
        instance=instance, query=query, memory_id=memory_id, relevant=MARKS.get(st.session_state.get(key)))))
    # None is also the answer to taking a query's last mark away; after a mark, it means it failed.
    if kept is None and st.session_state.get(key) is not None:  # not kept: the control goes back
        st.session_state[key] = None


# -- the labelled set (the Tune page) --------------------------------------------------------------

def _set_rows(labelled: uc.LabelledSet) -> pd.DataFrame:
    return pd.DataFrame([{"query": q.query, "relevant": len(q.relevant), "not relevant": len(q.not_relevant),
                          "relevant ids": ", ".join(q.relevant), "last marked": q.marked_at}
                         for q in labelled.queries])


def _first_relevant(ranking: list[str], relevant: list[str]) -> int | None:
    return next((rank for rank, memory_id in enumerate(ranking, start=1) if memory_id in relevant), None)


def _evaluate(instance: str, labelled: uc.LabelledSet, profiles: list[uc.FusionProfile],
              pool_size: int) -> tuple[uc.EvalDataset, list[uc.EvalReport]] | None:
    wb = get_workbench()
    dataset = attempt("read the labelled set", lambda: uc.read_dataset(wb, uc.ReadDataset(
        instance=instance, source=labelled.jsonl().encode(), name=f"labelled-{instance}")))
    if dataset is None:
        return None
    reports = []
    for profile in profiles:
        report = attempt(f"evaluate {profile.name}", lambda p=profile: uc.evaluate(wb, uc.EvaluateRequest(
            instance=instance, dataset=dataset, profile=p, ks=KS, pool_size=pool_size)))
        if report is None:
            return None
        reports.append(report)
    return dataset, reports


def _show_results(dataset: uc.EvalDataset, reports: list[uc.EvalReport]) -> None:
    if note := uc.unknown_ids_note(dataset.unknown_ids):
        st.warning(note + " Deleted memories, or marks made in another instance, leave such ids.",
                   icon=":material/help:")
    st.caption(f"Scored on {plural(len(dataset.queries), 'query', 'queries')} (those with a relevant mark), on "
               f"{RANKING}, from {reports[0].pool_label}.", help=all_definitions("\n\n"))
    metrics = reports[0].table.metrics
    st.dataframe(pd.DataFrame([{"profile": r.profile.name, **{m: round(r.value(m), 3) for m in metrics},
                                **_handed(r)} for r in reports]), hide_index=True, width="stretch",
                 column_config={m: st.column_config.NumberColumn(m, help=metric_definition(m)) for m in metrics}
                 | {f"handed {m}": st.column_config.NumberColumn(help=f"{reports[0].handed_label}. "
                                                                      f"{HANDED_DEFINITION}")
                    for m in metrics if m.startswith("recall@")})
    st.markdown("**Rank of the first relevant memory, per query**")
    st.dataframe(pd.DataFrame([{"query": q.query, **{r.profile.name: _first_relevant(r.rankings.get(q.qid, []),
                                                                                   q.relevant)
                                                     for r in reports}} for q in dataset.queries]),
                 hide_index=True, width="stretch",
                 column_config={r.profile.name: st.column_config.NumberColumn(
                     help=f"empty: no relevant memory in the top {KS[-1]}") for r in reports})


def _handed(report: uc.EvalReport) -> dict[str, float]:
    """The recall of what chat hands over, the relevance floor applied, as "handed recall@k" columns."""
    if report.handed is None:
        return {}
    return {f"handed {m}": round(v, 3) for m, v in report.handed.rows[-1].values.items()}


def labelled_set_panel(instance: str, active: uc.FusionProfile, candidate: uc.FusionProfile,
                       pool_size: int) -> None:
    """The instance's labelled set: its queries, an evaluation of the active and the candidate profile on
    it, its export as JSONL, and removing a query's marks."""
    labelled = attempt("read the labelled set", lambda: uc.labelled_set(
        get_workbench(), uc.InstanceRequest(instance=instance)))
    if labelled is None:
        return
    if not labelled.queries:
        st.info(f"No labelled queries in **{as_plain_line(instance)}** yet. Search in the Memory explorer and "
                "mark results Relevant or Not relevant: each query you mark appears here.")
        return
    usable = len(labelled.usable)
    st.caption(f"{plural(len(labelled.queries), 'query', 'queries')} marked in **{as_plain_line(instance)}**; "
               f"{usable} with a relevant memory can be scored" + (
                   " (a query marked only Not relevant is kept, but not scored)."
                   if usable < len(labelled.queries) else "."))
    st.dataframe(_set_rows(labelled), hide_index=True, width="stretch",
                 column_config={"last marked": st.column_config.DatetimeColumn(format="YYYY-MM-DD HH:mm")})
    left, right = st.columns(2)
    run = left.button("Evaluate the labelled set", type="primary", key=K + "run", disabled=not usable,
                      help="Ranks each query with the active and the candidate profile and scores the rankings "
                           f"against the marks: {RANKING}.")
    right.download_button("Export JSONL", data=labelled.jsonl(), file_name=f"labelled-{instance}.jsonl",
                          mime="application/jsonl", key=K + "export", disabled=not usable,
                          help='One {"query", "relevant": [ids]} per line: what the upload above and '
                               "`workbench eval --data` read.")
    if run:
        outcome = _evaluate(instance, labelled, [active, candidate], pool_size)
        if outcome is not None:
            st.session_state[K + "results"] = (instance, labelled.jsonl(), outcome)
    stored = st.session_state.get(K + "results")
    if stored and stored[:2] == (instance, labelled.jsonl()):  # results of this very set only
        _show_results(*stored[2])
    _remove_marks(instance, labelled)


def _remove_marks(instance: str, labelled: uc.LabelledSet) -> None:
    with st.expander("Remove a query's marks"):
        left, right = st.columns([4, 1], vertical_alignment="bottom")
        query = left.selectbox("Query", [q.query for q in labelled.queries], key=K + "remove_pick",
                               persist_state="page")
        if right.button("Remove", key=K + "remove", width="stretch"):
            st.session_state[K + "removing"] = query
    if removing := st.session_state.get(K + "removing"):
        def remove() -> bool:
            return attempt("remove the marks", lambda: uc.clear_labels(get_workbench(), uc.ClearLabels(
                instance=instance, query=removing))) is not None

        confirm_in_dialog("Remove marks?", f"Remove every mark of **{as_plain_line(removing, 80)}**? The "
                          "memories stay; only the labels go.", yes="Yes, remove", key=K + "confirm",
                          on_yes=remove, on_close=lambda: st.session_state.pop(K + "removing", None))
