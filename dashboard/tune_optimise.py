"""The Tune page's weight optimiser: run it (cancellable), say plainly whether its best profile is better
than the active one beyond noise, show the spread across queries and the surface; saving is a secondary
action under a name the user types, offered only for a recommended profile."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import pandas as pd
import plotly.express as px
import streamlit as st

from core import usecases as uc
from core.usecases.retrieval import ProfileRef, ProfileReplacement, profile_replacement
from core.usecases.tuning import PROFILE_NAME_MAX, RANKING, all_definitions, profile_name_refusal
from dashboard.tune_controls import request_profile_load
from dashboard.ui import as_plain_line, attempt

if TYPE_CHECKING:
    from core.runtime import Workbench

K = "tune_eval_"
T = TypeVar("T")
# τ 1 h, 1 d, 1 w, 30 d, 1 y, read as every profile's recency is ("half-life 16.6 h (τ 1 d)").
TAU_LABELS = {tau: uc.recency_label(tau) for tau in uc.DEFAULT_TAUS}
RULE = ("The best profile is recommended only when it beats the active one beyond noise: the 95% paired "
        "bootstrap interval of its mean per-query difference (10,000 resamples of the queries) must lie above "
        "0. It was picked on these same queries, so on a handful of them expect no recommendation.")


def _session_ended() -> Callable[[], bool]:
    """True once the browser tab of this run has gone (Streamlit also stops the run at its next update)."""
    from streamlit.runtime import Runtime
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None or not Runtime.exists():  # AppTest: no server, no tab to close
        return lambda: False
    runtime = Runtime.instance()
    return lambda: not runtime.is_active_session(ctx.session_id)


def _note_cancel(what: str) -> None:
    st.session_state[K + "cancelled"] = what


def run_cancellable(what: str, run: Callable[[uc.Progress, Callable[[], bool]], T]) -> T | None:
    """`run(progress, stop)` in the script thread under a progress bar and a Cancel button.

    A click on Cancel reruns the page: Streamlit stops this run at its next progress update, which the
    core makes between batches of queries, so no work goes on. Closing the tab stops it the same way, and
    `stop` says so too. Returns None when the run failed (the error is shown)."""
    slot = st.empty()
    with slot.container():
        bar = st.progress(0.0, text=f"{what}…")
        st.button("Cancel", key=K + "cancel", on_click=_note_cancel, args=(what,),
                  help="Stops after the current batch of queries; nothing is kept.")

    def progress(done: int, total: int, step: str) -> None:
        bar.progress(min(1.0, done / max(total, 1)), text=f"{step}: {done:,}/{total:,}")

    try:
        return attempt(what.lower(), lambda: run(progress, _session_ended()))
    finally:
        slot.empty()


def show_cancelled() -> None:
    """After a Cancel click: say what was stopped."""
    if what := st.session_state.pop(K + "cancelled", None):
        st.info(f"{what} cancelled: nothing was kept. Run it again when you are ready.")


def optimiser_panel(wb: Workbench, dataset: uc.EvalDataset, fingerprint: str, instance: str,
                    active: uc.FusionProfile, pool_size: int) -> None:
    st.markdown("**Weight optimiser** — the weight simplex (step 0.05) × τ values × fusion method; each "
                "query's candidates are fetched once and re-fused for every point.", help=RULE)
    c1, c2, c3 = st.columns(3)
    metric = c1.selectbox("Maximise", ["recall@1", "recall@5", "recall@10", "recall@25", "ndcg@10", "mrr@25"],
                          index=2, key=K + "opt_metric", persist_state="page",
                          help=f"Scored on {RANKING}.\n\n" + all_definitions("\n\n"))
    cat = c2.selectbox("Over", ["all categories"] + dataset.categories, key=K + "opt_cat", persist_state="page")
    methods = c3.multiselect("Methods", ["linear", "rrf"], ["linear", "rrf"], key=K + "opt_methods",
                             persist_state="page")
    taus = st.multiselect("Recency half-lives tried (linear)", list(TAU_LABELS), list(TAU_LABELS),
                          format_func=TAU_LABELS.get, key=K + "opt_taus", persist_state="page")
    unready = not methods or ("linear" in methods and not taus)
    if st.button("Run the optimiser", key=K + "opt_run", disabled=unready, help=RULE):
        report = run_cancellable("Optimising", lambda progress, stop: uc.optimise(wb, uc.OptimiseRequest(
            instance=instance, dataset=dataset, metric=metric,
            category=None if cat == "all categories" else cat, methods=methods,
            taus=taus or uc.DEFAULT_TAUS, baseline=active, name="tuned", pool_size=pool_size),
            progress=progress, stop=stop))
        if report is not None:
            st.session_state[K + "opt"] = (fingerprint, report)
            # The surface opens on the new best's slice: the picker keeps its value across runs otherwise,
            # and the best's star is drawn on its own slice only.
            st.session_state[K + "surface"] = surface_label(report.best.method, report.best.tau_s
                                                            if report.best.method == "linear" else report.best.rrf_k)
    stored = st.session_state.get(K + "opt")
    if stored and stored[0] == fingerprint:
        _show_optimiser(wb, stored[1], instance)


def _show_optimiser(wb: Workbench, rep: uc.OptimiseReport, instance: str) -> None:
    (st.success if rep.recommended else st.warning)(rep.verdict)
    s, b = rep.spread, rep.best
    cols = st.columns(5)
    cols[0].metric("Queries", f"{rep.queries:,}", help="What every figure here rests on.")
    cols[1].metric("Better on", s.wins, help=f"Queries where the best profile scores higher on {rep.metric}")
    cols[2].metric("Equal on", s.ties)
    cols[3].metric("Worse on", s.losses)
    cols[4].metric("Mean difference", f"{s.mean:+.3f}",
                   help=f"{rep.metric} of the best minus {rep.baseline.name}'s, per query; 95% paired bootstrap interval "
                        f"{s.low:+.3f} to {s.high:+.3f}. {RULE}")
    st.caption(f"95% interval of the mean difference: {s.low:+.3f} to {s.high:+.3f} · {len(rep.surface):,} "
               f"profiles scored on {rep.queries:,} queries, {rep.pool_size} candidates per leg, in "
               f"{rep.seconds:.1f} s · best on these queries: "
               f"{uc.describe_profile(b)}")
    _surface(rep)
    if rep.recommended:
        _save_form(wb, rep, instance)
    if st.button("Load the best into the candidate controls", key=K + "load",
                 help="Compare its rankings with the active profile's on the Rankings tab; nothing is saved."):
        request_profile_load(b)
        st.rerun()
    if msg := st.session_state.pop(K + "saved", None):
        st.success(msg)


def surface_label(method: str, value: float) -> str:
    """The Surface picker's label of one slice: "linear, half-life 4.85 d (τ 1 w)" or "rrf, k 60"."""
    return f"linear, {uc.recency_label(value)}" if method == "linear" else f"rrf, k {value:g}"


def _surface(rep: uc.OptimiseReport) -> None:
    b = rep.best
    surface = pd.DataFrame([p.model_dump() for p in rep.surface])
    groups = [("linear", t) for t in sorted(surface[surface.method == "linear"].tau_s.unique())] + \
             [("rrf", k) for k in sorted(surface[surface.method == "rrf"].rrf_k.unique())]
    labels = [surface_label(m, v) for m, v in groups]
    best_label = next((lab for lab, (m, v) in zip(labels, groups, strict=True)
                       if m == b.method and (v == b.tau_s if m == "linear" else v == b.rrf_k)), labels[0])
    shown = st.selectbox("Surface", labels, index=labels.index(best_label), key=K + "surface", persist_state="page")
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


def _save_form(wb: Workbench, rep: uc.OptimiseReport, instance: str) -> None:
    """Saving is a deliberate, secondary step: a name the user types, activation only when asked."""
    c1, c2 = st.columns([2, 1])
    name = c1.text_input("Save as…", key=K + "save_name", persist_state="page", max_chars=PROFILE_NAME_MAX,
                         placeholder="a name for the recommended profile")
    activate = c2.checkbox(f"and make it active for {instance}", key=K + "save_activate", persist_state="page")
    replacing = replacement(wb, name)
    if replacing is not None:  # said before the click: saving over a profile in use changes chat at once
        st.warning(as_plain_line(replacing.warning, 600), icon=":material/warning:")
    refused_name(wb, name)
    if st.button("Save as…", key=K + "save", disabled=not name.strip()):
        saved = attempt("save the profile", lambda: uc.save_tuned(
            wb, uc.SaveTuned(instance=instance, report=rep, name=name.strip(), activate=activate)))
        if saved:
            st.session_state[K + "saved"] = f"Saved **{saved.name}**" + (
                f", active for **{instance}**: the next chat turn retrieves with it." if activate else
                ". Activate it from the profiles when you want chat to use it.") + (
                f" It {as_plain_line(replacing.note, 600)}" if replacing else "")
            request_profile_load(saved)
            st.rerun()


def refused_name(wb: Workbench, name: str) -> None:
    """Said before the click, as a replacement is: a name the save would refuse, and why."""
    if refusal := profile_name_refusal(wb, name):
        st.warning(as_plain_line(refusal, 600), icon=":material/block:")


def replacement(wb: Workbench, name: str) -> ProfileReplacement | None:
    """What saving under `name` would replace (None for a new name, a name that is not valid, or when the
    profiles cannot be read: the save itself then says what is wrong)."""
    if not name.strip():
        return None
    try:
        return profile_replacement(wb, ProfileRef(name=name.strip()))
    except Exception:  # noqa: BLE001 - an invalid name or a service down: the save says so
        return None
