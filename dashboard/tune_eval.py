"""The Tune page's evaluation panel: pick a labelled set, compare the active and the candidate profile on
it (cancellable), then the optimiser (`dashboard.tune_optimise`)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd
import plotly.express as px
import streamlit as st

from core import usecases as uc
from core.usecases.tuning import (
    HANDED_DEFINITION,
    RANKING,
    SCOPE_HOW,
    SCOPE_LABEL,
    SCOPE_RANKING,
    SCOPE_SURFACES,
    all_definitions,
    evaluation_pool,
    left_out,
    metric_definition,
    pool_label,
    set_notes,
    side_by_side_summary,
)
from dashboard.resources import get_workbench
from dashboard.tune_optimise import K, optimiser_panel, run_cancellable, show_cancelled
from dashboard.ui import as_plain_line, attempt, plural, table_height

KS = (1, 5, 10, 25)
HANDED = "handed "  # the prefix of the columns of what chat hands over: "handed recall@10"
# The chart's first metric: recall at the number of memories a chat turn asks for by default.
CHAT_RECALL = f"recall@{uc.UiRememberParams.model_fields['top_k'].default}"


def _dataset(source: str | bytes, instance: str, samples: tuple[str, ...], name: str) -> uc.EvalDataset:
    """The set as `workbench eval --data` reads it, at each run: the file as it is now, a JSONL set's ids
    checked against the instance as it is now (1,000 queries: 17 ms). Only a LoCoMo set is kept (LoCoMo dev
    parses in 0.3 s), under what the file is: it names no memory of the instance, so it cannot go stale."""
    identity = hashlib.sha256(source).hexdigest() if isinstance(source, bytes) else _file_identity(source)
    kept = _locomo(identity, source, samples, name, instance) if identity else None
    return kept if kept is not None else _read(source, instance, samples, name)


def _read(source: str | bytes, instance: str, samples: tuple[str, ...], name: str) -> uc.EvalDataset:
    return uc.read_dataset(get_workbench(), uc.ReadDataset(
        instance=instance, source=source if isinstance(source, bytes) else Path(source), name=name,
        samples=list(samples) or None))


def _file_identity(path: str) -> str | None:
    """The path with its file's modification time and size: a changed file is read again."""
    try:
        stat = Path(path).stat()
    except OSError:
        return None  # read_dataset says what is wrong with the path
    return f"{path}\0{stat.st_mtime_ns}\0{stat.st_size}"


@st.cache_resource(max_entries=4, show_spinner="Reading the labelled set…")
def _locomo(identity: str, _source: str | bytes, samples: tuple[str, ...], name: str,
            _instance: str) -> uc.EvalDataset | None:
    """The LoCoMo set the file `identity` holds; None for a JSONL set, whose ids are checked at each read."""
    dataset = _read(_source, _instance, samples, name)
    return dataset if dataset.kind == "locomo" else None


def _fingerprint(dataset: uc.EvalDataset) -> str:
    """Which set results belong to: its queries and instances, not only its name."""
    h = hashlib.sha1(dataset.name.encode())
    for q in dataset.queries:
        h.update(f"{q.qid}\0{q.query}\0{q.instance}\0{','.join(q.relevant)}".encode())
    return h.hexdigest()


# The uploaded file, kept apart from the uploader: this panel's tab runs only while open, and an uploader's
# file, unlike other widgets' values, cannot be kept while its tab is hidden.
UPLOADED = K + "uploaded"


def _keep_upload() -> None:
    """On each change of the uploader: its file (name, bytes) kept, or forgotten when the user removed it."""
    up = st.session_state.get(K + "upload")
    if up is None:
        st.session_state.pop(UPLOADED, None)
    else:
        st.session_state[UPLOADED] = (up.name, up.getvalue())


def _choose_dataset(instance: str) -> uc.EvalDataset | None:
    locomo = uc.default_locomo_path()
    options = (["LoCoMo dev (shared/bench)"] if locomo else []) + ["Upload a file", "Path on the server"]
    source = st.radio("Labelled set", options, horizontal=True, key=K + "source", persist_state="page")
    if source.startswith("LoCoMo"):
        st.caption(f"`{locomo}` — LoCoMo (CC BY-NC 4.0): each conversation is loaded once into its own "
                   "evaluation instance; questions of category 5 (adversarial) are left out.")
        samples = st.multiselect("Conversations (all when empty)", _sample_ids(str(locomo)),
                                 key=K + "samples", persist_state="page")
        return attempt("read the LoCoMo file",
                       lambda: _dataset(str(locomo), instance, tuple(samples), locomo.stem))
    if source == "Upload a file":
        up = st.file_uploader('LoCoMo JSON, or JSONL with {"query", "relevant": [ids], "category"?} '
                              "per line",
                              type=["json", "jsonl"], key=K + "upload", on_change=_keep_upload)
        if (kept := st.session_state.get(UPLOADED)) is None:
            return None
        name, raw = kept
        if up is None:  # the uploader forgot it while its tab was hidden
            st.caption(f"Using **{as_plain_line(name)}**, uploaded earlier; upload another file to replace it.")
        st.caption(f"A JSONL set is evaluated against the instance **{instance}** (sidebar).")
        return attempt("read the uploaded file",
                       lambda: _dataset(raw, instance, (), Path(name).stem))
    path = st.text_input("Path of a LoCoMo JSON or JSONL file", key=K + "path", persist_state="page")
    if not path.strip():
        return None
    path = path.strip()
    return attempt("read the file", lambda: _dataset(path, instance, (), Path(path).stem))


@st.cache_data(show_spinner=False)
def _sample_ids(path: str) -> list[str]:
    return uc.locomo_sample_ids(Path(path))


def _metrics_frame(reports: list[uc.EvalReport]) -> pd.DataFrame:
    """One row per report and category: the ranking's figures, each recall@k followed by the recall of
    what chat hands over ("handed recall@k"), so the two are read side by side."""
    rows = []
    for rep in reports:
        handed = {row.category: row.values for row in rep.handed.rows} if rep.handed else {}
        for row in rep.table.rows:
            cells = {"profile": rep.label, "category": row.category, "queries": row.queries}
            for m, v in row.values.items():
                cells[m] = round(v, 4)
                if m in handed.get(row.category, {}):
                    cells[HANDED + m] = round(handed[row.category][m], 4)
            rows.append(cells)
    return pd.DataFrame(rows)


def evaluation_panel(instance: str, active: uc.FusionProfile, candidate: uc.FusionProfile,
                     params: uc.ScopeParams, pool: int | None) -> None:
    """`params`: the op parameters of the controls beside it, retrieve_memory's output scored with them;
    `pool`: their candidates per leg (None: a chat turn's for the deepest cut-off), the rankings' and the
    optimiser's."""
    wb = get_workbench()
    pool_size = evaluation_pool(KS, pool)
    dataset = _choose_dataset(instance)
    if dataset is None:
        return
    cats = f"in categories {', '.join(dataset.categories)}" if dataset.categories else "without categories"
    st.caption(f"**{dataset.name}**: {plural(len(dataset.queries), 'query', 'queries')} {cats}"
               + (f" · left out: {left_out(dataset.skipped)}" if dataset.skipped else ""))
    # Named, never in silence: unknown ids (not scored as misses), queries without relevant ids (left out),
    # repeated queries (counted once).
    for note in [uc.unknown_ids_note(dataset.unknown_ids), *set_notes(dataset)]:
        if note:
            st.warning(note, icon=":material/help:")
    st.caption(f"Scored on {RANKING}: the Rankings tab's *combined* order, not its MemoryScope output; from "
               f"{pool_label(pool_size, max(KS))} (*Candidates per leg*, left).", help=all_definitions("\n\n"))
    show_cancelled()
    leg_col, scope_col = st.columns(2)
    legs = leg_col.toggle("Each leg alone too (BM25, dense)", value=True, key=K + "legs", persist_state="page",
                          help="Evaluates the text leg alone (BM25) and the dense leg alone beside the profiles, "
                               "without the speaker and chain parts, which only a hybrid search uses: what hybrid "
                               "retrieval buys on this set. Twice the time.")
    scope = scope_col.toggle("What an agent gets too (retrieve_memory)", value=False, key=K + "memoryscope",
                             persist_state="page",
                             help=f"Also scores {SCOPE_RANKING}, with each profile and the retrieval and rerank "
                                  "parameters on the left.")
    if st.button("Evaluate the active and the candidate profile", type="primary", key=K + "run"):
        reports = run_cancellable("Evaluating", lambda progress, stop: uc.evaluate_side_by_side(
            wb, uc.SideBySideRequest(instance=instance, dataset=dataset, profiles=[active, candidate],
                                     legs=legs, memoryscope=scope, scope_params=params, ks=list(KS),
                                     pool_size=pool_size), progress=progress, stop=stop))
        if reports is not None:
            st.session_state[K + "reports"] = (_fingerprint(dataset), reports)
    stored = st.session_state.get(K + "reports")
    if stored and stored[0] == _fingerprint(dataset):
        _show_reports(stored[1])
    st.divider()
    optimiser_panel(wb, dataset, _fingerprint(dataset), instance, active, pool_size)


def _show_reports(all_reports: list[uc.EvalReport]) -> None:
    reports = [r for r in all_reports if r.search_type != "memoryscope"]
    agent = [r for r in all_reports if r.search_type == "memoryscope"]
    frame = _metrics_frame(reports)
    a, c = reports[:2]
    st.caption(f"{plural(a.queries, 'query', 'queries')} · search p50 {c.search_ms_p50:.1f} ms · load {a.load.seconds:.1f} s "
               f"({len(a.load.loaded)} instances loaded, {len(a.load.reused)} reused) · "
               f"{sum(r.seconds for r in reports):.1f} s · ranked from {a.pool_label}")
    st.caption(side_by_side_summary(all_reports, CHAT_RECALL), help=HANDED_DEFINITION)
    for note in dict.fromkeys(r.depth_note for r in all_reports if r.depth_note):
        st.info(note, icon=":material/info:")
    handed = [c for c in frame.columns if c.startswith(HANDED)]
    metric = st.selectbox("Metric for the chart", [*a.table.metrics, *handed],
                          index=a.table.metrics.index(CHAT_RECALL) if CHAT_RECALL in a.table.metrics else 0,
                          key=K + "chart_metric", persist_state="page",
                          help=all_definitions("\n\n") + "\n\n" + HANDED_DEFINITION)
    st.plotly_chart(_chart(frame, metric), width="stretch")
    if handed:
        same = all(r.handed.value(f"recall@{k}") == r.value(f"recall@{k}") for r in reports if r.handed for k in r.ks)
        st.caption(f"The *{HANDED.strip()} recall@k* columns: the recall of what a chat turn asking for k memories "
                   f"puts in its context: its own search for k, none when no memory reaches the relevance floor "
                   f"{a.relevance_floor:.2f} (RELEVANCE_FLOOR), else those reaching half of it and {uc.BEST_SHARE:g} of the best's "
                   "relevance (the floor itself beside a best stating the attribute the query asks, of whom it asks it)."
                   + (" On this set they equal the ranking's recall: chat hands over every relevant memory the "
                      "ranking holds." if same else ""), help=HANDED_DEFINITION)
    st.dataframe(frame, hide_index=True, width="stretch", height=table_height(len(frame)),
                 column_config=metric_columns(a.table.metrics) | handed_columns(handed, a.handed_label))
    if agent:
        _agent_table(agent)


# Standing side by side (4 profiles × 7 categories), the bars left each value room only inside its bar,
# turned on its side and too small to read. Lying down, each bar has its value beside it, level, and the
# chart grows with the bars.
BAR_PX = 18


def _chart(frame: pd.DataFrame, metric: str):
    """`metric` per category and profile, horizontal bars with their values written beside them."""
    fig = px.bar(frame, y="category", x=metric, color="profile", barmode="group", orientation="h",
                 text_auto=".3f", height=80 + BAR_PX * len(frame))
    fig.update_traces(textposition="outside", textangle=0, textfont_size=12, constraintext="none",
                      cliponaxis=False)
    fig.update_yaxes(type="category", autorange="reversed", title_text="")
    top = max(1.0, frame[metric].max())  # the values lie in [0, 1]; room on the right for the labels
    fig.update_xaxes(range=[0, top * 1.12])
    fig.update_layout(margin={"l": 10, "r": 10, "t": 30, "b": 10}, legend_title_text="",
                      legend={"traceorder": "normal"})
    return fig


def _agent_table(reports: list[uc.EvalReport]) -> None:
    """retrieve_memory's output scored, its own table: its cut-offs stop at the most it returns, and its
    order is not the ranking's above."""
    st.markdown(f"**{SCOPE_LABEL}**")
    st.caption(f"From {SCOPE_SURFACES}, with the retrieval and rerank parameters on the left ("
               f"{reports[0].pool_label}): {SCOPE_HOW}. "
               f"retrieve_memory p50 {reports[0].search_ms_p50:.1f} ms per query.", help=all_definitions("\n\n"))
    frame = pd.DataFrame([{"profile": r.profile.name, "category": row.category, "queries": row.queries}
                          | {m: round(v, 4) for m, v in row.values.items()}
                          for r in reports for row in r.table.rows])
    st.dataframe(frame, hide_index=True, width="stretch", height=table_height(len(frame)),
                 column_config=metric_columns(reports[0].table.metrics))


def metric_columns(metrics: list[str]) -> dict:
    """Each metric column with its definition on hover (`recall@5`: the share of relevant ids found...)."""
    return {m: st.column_config.NumberColumn(m, help=metric_definition(m)) for m in metrics}


def handed_columns(columns: list[str], label: str) -> dict:
    return {c: st.column_config.NumberColumn(c, help=f"{label}. {HANDED_DEFINITION}") for c in columns}
