"""The Tune page's controls: the candidate fusion profile and the MemoryScope op parameters."""

from __future__ import annotations

import math

import streamlit as st

from core import usecases as uc
from core.usecases.tuning import BOOSTED_AMONG, default_pool

K = "tune_"  # session-state prefix of this page's widgets


def load_profile_into_controls(profile: uc.FusionProfile) -> None:
    """Put a profile's values into the widgets (before they are drawn on the next run); the profile itself is
    kept for its exact values, which the widgets show rounded."""
    st.session_state[K + "loaded"] = profile
    st.session_state[K + "method"] = profile.method
    st.session_state[K + "w_sem"] = round(profile.w_sem, 2)
    st.session_state[K + "w_text_keep"] = round(profile.w_text, 2)
    st.session_state[K + "half_life_h"] = round(profile.half_life_s / 3600, 2)
    st.session_state[K + "rrf_k"] = profile.rrf_k


def request_profile_load(profile: uc.FusionProfile) -> None:
    """Load a profile into the controls on the next run (widgets already drawn cannot change now)."""
    st.session_state[K + "pending"] = profile.model_dump()


def _start_from(profiles: dict[str, uc.FusionProfile]) -> None:
    chosen = profiles.get(st.session_state.get(K + "start"))
    if chosen:
        load_profile_into_controls(chosen)


def profile_controls(profiles: dict[str, uc.FusionProfile], active: uc.FusionProfile) -> uc.FusionProfile:
    """Weights that always sum to 1 (two sliders, the third derived), recency half-life, fusion method."""
    if K + "w_sem" not in st.session_state:
        load_profile_into_controls(active)
    if pending := st.session_state.pop(K + "pending", None):
        load_profile_into_controls(uc.FusionProfile.model_validate(pending))
        if pending["name"] in profiles:
            st.session_state[K + "start"] = pending["name"]
    names = list(profiles)
    st.selectbox("Start from profile", names, index=names.index(active.name) if active.name in names else 0,
                 key=K + "start", on_change=_start_from, args=(profiles,),
                 help="Loads a saved profile's values into the controls below.")
    st.radio("Fusion method", ["linear", "rrf"], key=K + "method", horizontal=True,
             help="linear: weighted sum of the score parts. "
                  "rrf: weighted reciprocal-rank fusion of the legs.")
    w_sem = st.slider("Semantic weight — cosine of memory and query", 0.0, 1.0, step=0.05, key=K + "w_sem",
                      help="The query's vector (with the offline embedder: its words' vectors weighed by how "
                           "rare each word is in the instance) expanded by 0.25 × the mean of its 3 best "
                           "keyword matches (pseudo-relevance feedback): it finds what a vague question is "
                           "about.")
    rest = round(1.0 - w_sem, 2)
    keep = min(st.session_state.get(K + "w_text_keep", 0.0), rest)
    if rest < 0.05:
        w_text = 0.0
        st.caption("Text weight — full-text match: 0.00 (the semantic weight takes everything)")
    else:
        # The slider's range depends on the semantic weight, and a widget whose range changes is a new
        # widget; one key per range, seeded from the kept value, carries the text weight across.
        w_text = st.slider("Text weight — full-text (keyword) match, normalised", 0.0, rest, value=keep,
                           step=0.05, key=f"{K}w_text_{rest:.2f}")
    st.session_state[K + "w_text_keep"] = w_text
    w_rec = round(max(0.0, 1.0 - w_sem - w_text), 2)  # 0.1, not 0.09999999999999995
    st.markdown(f"Recency weight — exp(−age / τ): **{w_rec:.2f}** *(the rest: the three sum to 1)*")
    half_life_h = st.number_input("Recency half-life (hours)", min_value=0.05, max_value=87600.0, step=1.0,
                                  key=K + "half_life_h",
                                  help="Age at which a memory's recency score halves: τ = half-life / ln 2.")
    # Until a control moves, the loaded profile keeps the exact values the controls show rounded: saved
    # unchanged, a preset keeps τ = 86400 s (not 16.64 h turned back into 86423.2 s) and its weights.
    loaded = st.session_state.get(K + "loaded", active)
    if (w_sem, w_text) == (round(loaded.w_sem, 2), round(loaded.w_text, 2)):
        w_sem, w_text, w_rec = loaded.w_sem, loaded.w_text, loaded.w_rec
    tau_s = (loaded.tau_s if half_life_h == round(loaded.half_life_s / 3600, 2)
             else half_life_h * 3600 / math.log(2))
    st.caption("Recency: " + uc.recency_label(tau_s) + (" · not used by rrf, which ranks the memories by age"
                                                        if st.session_state[K + "method"] == "rrf" else ""))
    rrf_k = st.number_input("RRF k", min_value=1, max_value=10_000, step=10, key=K + "rrf_k",
                            disabled=st.session_state[K + "method"] != "rrf",
                            help="Reciprocal-rank fusion constant: larger k flattens the rank differences.")
    return uc.FusionProfile(name="candidate", method=st.session_state[K + "method"], w_sem=w_sem,
                            w_text=w_text, w_rec=w_rec, tau_s=tau_s, rrf_k=int(rrf_k))


def pool_control(rows: int, deepest: int) -> int | None:
    """The candidates per leg of every fusion ranking on the page: the Rankings tab's tables, the evaluations
    and the optimiser. Empty (None), as it opens, each draws what a chat turn asking for as many memories
    does (`default_pool`), so the Rankings tab is the turn asking for `rows` and the evaluation the one asking
    for its `deepest` cut-off; a number fixes them all."""
    pool = st.number_input("Candidates per leg", 1, 2000, None, step=5, key=K + "pool",
                           placeholder="as chat does",
                           help="How many memories the vector leg and the text leg each give the fusion "
                                "ranking. Empty: as many as a chat turn asking for k memories draws, "
                                "max(10, 2 × k), so the rankings are that turn's. A larger pool ranks otherwise: "
                                "the text part is relative to the pool's best match, so the scores, and the "
                                "order, change with the pool. retrieve_memory has its own, among the "
                                "MemoryScope op parameters.")
    if pool is None:
        st.caption(f"Rankings: {default_pool(rows)} a leg, a chat turn's for {rows} memories (Rows shown; "
                   f"{default_pool(max(rows, BOOSTED_AMONG))} when the query names a time, which re-ranks the "
                   f"best {BOOSTED_AMONG}); "
                   f"evaluations: a chat turn's for their deepest cut-off, {default_pool(deepest)} for "
                   f"Evaluate's {deepest}.")
    else:
        st.caption(f"Rankings and evaluations: {int(pool)} a leg. Clear the field to draw as a chat turn does.")
    return None if pool is None else int(pool)


def op_controls(deepest: int) -> tuple[uc.ScopeParams, int, int | None]:
    """Rows shown, candidates per leg (`pool_control`; `deepest`: the evaluation's deepest cut-off),
    thresholds and the MemoryScope ops' parameters. Returns (params, rows shown, candidates per leg)."""
    shown = st.slider("Rows shown", 3, 50, 10, key=K + "rows")
    pool = pool_control(shown, deepest)
    sim = st.slider("Similarity threshold (min. cosine of the query itself)", 0.0, 1.0, 0.0, step=0.05,
                    key=K + "sim", help="Compared with the query's own cosine, not the expanded one "
                                        "the semantic part uses.")
    with st.expander("MemoryScope op parameters"):
        scope_pool = st.number_input(
            "retrieve_memory · pool_size", 1, 2000, uc.ScopeParams().retrieve_memory_op.pool_size, step=5,
            key=K + "scope_pool",
            help="Candidates per leg retrieve_memory fuses before its rerank: its output on the Rankings tab, "
                 "the pipeline trace and what an agent gets (MCP retrieve_memory, HTTP /retrieve, `workbench "
                 "retrieve`, their default), as `workbench eval --memoryscope --param "
                 "op.retrieve_memory_op.params.pool_size=N` sets it. The fusion rankings draw *Candidates per "
                 "leg* above.")
        top_k = st.number_input("retrieve_memory · top_k", 1, 1000, 3, key=K + "top_k")
        use_thr = st.checkbox("retrieve_memory · threshold_score", key=K + "use_thr",
                              help="Minimum relevance: the retrieval score without its recency part, in "
                                   "[0, 1], so a fresh memory does not pass on its age alone.")
        thr = st.slider("threshold_score", 0.0, 1.0, 0.2, 0.05, key=K + "thr", disabled=not use_thr,
                        label_visibility="collapsed")
        ranker = st.checkbox("semantic_rank · enable_ranker (needs an LLM)", True, key=K + "ranker")
        rank_max = st.number_input("semantic_rank · output_memory_max_count", 1, 1000, 10, key=K + "rank_max")
        fuse = uc.ScopeParams().fuse_rerank_op
        also = {kind: fuse.counted_as(kind) for kind in uc.DEFAULT_FUSE_RATIOS}
        counted = "; ".join(f"{', '.join(kinds)} count as {kind}" for kind, kinds in also.items() if kinds)
        st.caption(f"fuse_rerank · fuse_ratio_dict (score multiplier per memory type; {counted})")
        ratios = {}
        cols = st.columns(2)
        for i, (kind, default) in enumerate(uc.DEFAULT_FUSE_RATIOS.items()):
            ratios[kind] = cols[i % 2].number_input(
                kind, 0.0, 100.0, float(default), 0.1, key=K + "ratio_" + kind,
                help=f"Also for memories of kind {', '.join(also[kind])}." if also[kind] else None)
        unknown = st.number_input("any other type", 0.0, 100.0, 0.1, 0.05, key=K + "ratio_unknown",
                                  help="unknown_type_ratio: memory-bank entries and summaries, by default.")
        time_ratio = st.number_input("fuse_rerank · fuse_time_ratio", 0.0, 100.0, 2.0, 0.1,
                                     key=K + "time_ratio",
                                     help="Multiplier when every extracted time part matches the event time.")
        fuse_thr = st.number_input("fuse_rerank · fuse_score_threshold", 0.0, 10.0, 0.1, 0.01,
                                   key=K + "fuse_thr",
                                   help="Minimum relevance: the LLM's score, else the retrieval score "
                                        "without its recency part.")
        out_max = st.number_input("fuse_rerank · output_memory_max_count", 1, 1000, 5, key=K + "out_max")
    params = uc.ScopeParams.from_flat({
        "op.retrieve_memory_op.params.top_k": int(top_k),
        "op.retrieve_memory_op.params.threshold_score": thr if use_thr else None,
        "op.retrieve_memory_op.params.pool_size": int(scope_pool),
        "op.retrieve_memory_op.params.similarity_threshold": float(sim),
        "op.semantic_rank_op.params.enable_ranker": bool(ranker),
        "op.semantic_rank_op.params.output_memory_max_count": int(rank_max),
        "op.fuse_rerank_op.params.fuse_ratio_dict": ratios,
        "op.fuse_rerank_op.params.unknown_type_ratio": float(unknown),
        "op.fuse_rerank_op.params.fuse_time_ratio": float(time_ratio),
        "op.fuse_rerank_op.params.fuse_score_threshold": float(fuse_thr),
        "op.fuse_rerank_op.params.output_memory_max_count": int(out_max),
    })
    return params, int(shown), pool
