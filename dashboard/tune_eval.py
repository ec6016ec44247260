"""The Tune page's evaluation panel: pick a labelled set, compare profiles, run the optimiser, save the
winner."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
import plotly.express as px
import streamlit as st

from core import usecases as uc
from dashboard.resources import get_workbench
from dashboard.tune_controls import request_profile_load
from dashboard.ui import attempt

if TYPE_CHECKING:
    from core.runtime import Workbench

K = "tune_eval_"
KS = (1, 5, 10, 25)
TAU_LABELS = {3600.0: "1 h", 86400.0: "1 d", 7 * 86400.0: "1 w", 30 * 86400.0: "30 d", 365 * 86400.0: "1 y"}


@st.cache_resource(max_entries=4, show_spinner="Reading the labelled set…")
def _dataset(key: str, source: str | bytes, instance: str, samples: tuple[str, ...],
             name: str) -> uc.EvalDataset:
    return uc.read_dataset(get_workbench(), uc.ReadDataset(
        instance=instance, source=source if isinstance(source, bytes) else Path(source), name=name,
        samples=list(samples) or None))


def _fingerprint(dataset: uc.EvalDataset) -> str:
    """Which set results belong to: its queries and instances, not only its name."""
    h = hashlib.sha1(dataset.name.encode())
    for q in dataset.queries:
        h.update(f"{q.qid}\0{q.query}\0{q.instance}\0{','.join(q.relevant)}".encode())
    return h.hexdigest()


def _progress_bar(label: str):
    bar = st.progress(0.0, text=label)

    def update(done: int, total: int, what: str) -> None:
        bar.progress(min(1.0, done / max(total, 1)), text=f"{what}: {done:,}/{total:,}")

    return bar, update


def _duration(seconds: float) -> str:
    hours = seconds / 3600
    return f"{hours:.3g} h" if hours < 48 else f"{hours / 24:.3g} d"


def _choose_dataset(instance: str) -> uc.EvalDataset | None:
    locomo = uc.default_locomo_path()
    options = (["LoCoMo dev (shared/bench)"] if locomo else []) + ["Upload a file", "Path on the server"]
    source = st.radio("Labelled set", options, horizontal=True, key=K + "source")
    if source.startswith("LoCoMo"):
        st.caption(f"`{locomo}` — LoCoMo (CC BY-NC 4.0): each conversation is loaded once into its own "
                   "evaluation instance; questions of category 5 (adversarial) are left out.")
        samples = st.multiselect("Conversations (all when empty)", _sample_ids(str(locomo)),
                                 key=K + "samples")
        return attempt("read the LoCoMo file", lambda: _dataset(str(locomo), str(locomo), instance,
                                                                tuple(samples),
                                                                        locomo.stem))
    if source == "Upload a file":
        up = st.file_uploader('LoCoMo JSON, or JSONL with {"query", "relevant": [ids], "category"?} '
                              "per line",
                              type=["json", "jsonl"], key=K + "upload")
        if up is None:
            return None
        raw = up.getvalue()
        st.caption(f"A JSONL set is evaluated against the instance **{instance}** (sidebar).")
        return attempt("read the uploaded file",
                       lambda: _dataset(hashlib.sha256(raw).hexdigest(), raw, instance, (),
                                        Path(up.name).stem))
    path = st.text_input("Path of a LoCoMo JSON or JSONL file", key=K + "path")
    if not path.strip():
        return None
    path = path.strip()
    return attempt("read the file", lambda: _dataset(path, path, instance, (), Path(path).stem))


@st.cache_data(show_spinner=False)
def _sample_ids(path: str) -> list[str]:
    return uc.locomo_sample_ids(Path(path))


def _metrics_frame(reports: list[uc.EvalReport]) -> pd.DataFrame:
    rows = []
    for rep in reports:
        for row in rep.table.rows:
            rows.append({"profile": rep.profile.name, "category": row.category, "queries": row.queries,
                         **{m: round(v, 4) for m, v in row.values.items()}})
    return pd.DataFrame(rows)


def evaluation_panel(instance: str, active: uc.FusionProfile, candidate: uc.FusionProfile,
                     pool_size: int) -> None:
    wb = get_workbench()
    dataset = _choose_dataset(instance)
    if dataset is None:
        return
    st.caption(f"**{dataset.name}**: {len(dataset.queries):,} queries in categories "
               f"{', '.join(dataset.categories)}" + (" · left out: " + "; ".join(
                   f"{v} {k}" for k, v in dataset.skipped.items()) if dataset.skipped else ""))
    if st.button("Evaluate the active and the candidate profile", type="primary", key=K + "run"):
        bar, update = _progress_bar("Evaluating…")
        reports = []
        for profile in (active, candidate):
            rep = attempt(f"evaluate {profile.name}", lambda p=profile: uc.evaluate(
                wb, uc.EvaluateRequest(instance=instance, dataset=dataset, profile=p, ks=list(KS),
                                       pool_size=pool_size), progress=update))
            if rep is None:
                break
            reports.append(rep)
        bar.empty()
        if len(reports) == 2:
            st.session_state[K + "reports"] = (_fingerprint(dataset), reports)
    stored = st.session_state.get(K + "reports")
    if stored and stored[0] == _fingerprint(dataset):
        _show_reports(stored[1])
    st.divider()
    _optimiser_panel(wb, dataset, instance, active, pool_size)


def _show_reports(reports: list[uc.EvalReport]) -> None:
    frame = _metrics_frame(reports)
    a, c = reports
    st.caption(f"{a.queries:,} queries · search p50 {c.search_ms_p50:.1f} ms · load {a.load.seconds:.1f} s "
               f"({len(a.load.loaded)} instances loaded, {len(a.load.reused)} reused) · "
               f"{a.seconds + c.seconds:.1f} s")
    metric = st.selectbox("Metric for the chart", a.table.metrics, index=a.table.metrics.index("recall@10")
                          if "recall@10" in a.table.metrics else 0, key=K + "chart_metric")
    fig = px.bar(frame, x="category", y=metric, color="profile", barmode="group", text_auto=".3f", height=320)
    fig.update_xaxes(type="category")
    fig.update_layout(margin={"l": 10, "r": 10, "t": 30, "b": 10}, legend_title_text="")
    st.plotly_chart(fig, width="stretch")
    st.dataframe(frame, hide_index=True, width="stretch")


def _optimiser_panel(wb: Workbench, dataset: uc.EvalDataset, instance: str, active: uc.FusionProfile,
                     pool_size: int) -> None:
    st.markdown("**Weight optimiser** — the weight simplex (step 0.05) × τ values × fusion method; each "
                "query's candidates are fetched once and re-fused for every point.")
    c1, c2, c3 = st.columns(3)
    metric = c1.selectbox("Maximise", ["recall@1", "recall@5", "recall@10", "recall@25", "ndcg@10", "mrr@25"],
                          index=2, key=K + "opt_metric")
    cat = c2.selectbox("Over", ["all categories"] + dataset.categories, key=K + "opt_cat")
    methods = c3.multiselect("Methods", ["linear", "rrf"], ["linear", "rrf"], key=K + "opt_methods")
    taus = st.multiselect("Recency τ values (linear)", list(TAU_LABELS), list(TAU_LABELS),
                          format_func=TAU_LABELS.get, key=K + "opt_taus")
    unready = not methods or ("linear" in methods and not taus)
    if st.button("Run the optimiser", key=K + "opt_run", disabled=unready):
        bar, update = _progress_bar("Optimising…")
        report = attempt("run the optimiser", lambda: uc.optimise(wb, uc.OptimiseRequest(
            instance=instance, dataset=dataset, metric=metric,
            category=None if cat == "all categories" else cat, methods=methods,
            taus=taus or uc.DEFAULT_TAUS, baseline=active, name="tuned", pool_size=pool_size),
            progress=update))
        bar.empty()
        if report is not None:
            st.session_state[K + "opt"] = (_fingerprint(dataset), report)
    stored = st.session_state.get(K + "opt")
    if stored and stored[0] == _fingerprint(dataset):
        _show_optimiser(wb, stored[1], instance)


def _show_optimiser(wb: Workbench, rep: uc.OptimiseReport, instance: str) -> None:
    b = rep.best
    delta = (None if rep.baseline_value is None
             else f"{rep.best_value - rep.baseline_value:+.4f} vs {rep.baseline.name}")
    c1, c2 = st.columns([1, 2])
    c1.metric(f"Best {rep.metric}" + (f" (category {rep.category})" if rep.category else ""),
              f"{rep.best_value:.4f}", delta)
    c2.markdown(f"**{b.method}** · semantic **{b.w_sem:.2f}** · text **{b.w_text:.2f}** · recency "
                f"**{b.w_rec:.2f}** · " + (f"half-life {_duration(b.half_life_s)}" if b.method == "linear"
                                           else f"rrf k {b.rrf_k}") + "  \n"
                f"{len(rep.surface):,} profiles scored on {rep.queries:,} queries in {rep.seconds:.1f} s")
    surface = pd.DataFrame([p.model_dump() for p in rep.surface])
    groups = [("linear", t) for t in sorted(surface[surface.method == "linear"].tau_s.unique())] + \
             [("rrf", k) for k in sorted(surface[surface.method == "rrf"].rrf_k.unique())]
    labels = [f"linear, τ {TAU_LABELS.get(v, f'{v:g} s')}" if m == "linear" else f"rrf, k {v}"
              for m, v in groups]
    best_label = next((lab for lab, (m, v) in zip(labels, groups, strict=True)
                       if m == b.method and (v == b.tau_s if m == "linear" else v == b.rrf_k)), labels[0])
    shown = st.selectbox("Surface", labels, index=labels.index(best_label), key=K + "surface")
    m, v = groups[labels.index(shown)]
    part = surface[(surface.method == m) & ((surface.tau_s == v) if m == "linear" else (surface.rrf_k == v))]
    fig = px.scatter_ternary(part, a="w_sem", b="w_text", c="w_rec", color="value",
                             color_continuous_scale="Viridis", hover_data={"value": ":.4f"}, height=460)
    fig.update_traces(marker={"size": 11, "symbol": "hexagon"})
    if b.method == m and (b.tau_s == v if m == "linear" else b.rrf_k == v):
        fig.add_scatterternary(a=[b.w_sem], b=[b.w_text], c=[b.w_rec], mode="markers", name="best",
                               marker={"size": 18, "symbol": "star", "color": "red",
                                       "line": {"width": 1, "color": "white"}})
        fig.update_layout(showlegend=False)
    fig.update_layout(ternary={"aaxis_title": "semantic", "baxis_title": "text", "caxis_title": "recency"},
                      margin={"l": 30, "r": 30, "t": 30, "b": 30}, coloraxis_colorbar_title=rep.metric)
    st.plotly_chart(fig, width="stretch")
    st.dataframe(surface.sort_values("value", ascending=False).head(10), hide_index=True, width="stretch")
    name = st.text_input("Save the best as", value=f"tuned-{rep.metric.replace('@', '-at-')}",
                         key=K + "save_name")
    c1, c2 = st.columns(2)
    if c1.button("Save and make active", type="primary", key=K + "save"):
        saved = attempt("save the profile", lambda: uc.save_tuned(
            wb, uc.SaveTuned(instance=instance, report=rep, name=name.strip(), activate=True)))
        if saved:
            st.session_state[K + "saved"] = f"Saved **{saved.name}**, active for **{instance}**: " \
                                            "the next chat turn retrieves with it."
            request_profile_load(saved)
            st.rerun()
    if c2.button("Load into the candidate controls", key=K + "load"):
        request_profile_load(b)
        st.rerun()
    if msg := st.session_state.pop(K + "saved", None):
        st.success(msg)
