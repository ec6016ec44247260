"""Feedback: how users reacted to answers over time, per model and per profile, and the worst turns."""

from __future__ import annotations

import shlex
from datetime import UTC, datetime, time, timedelta

import pandas as pd
import streamlit as st

from core import usecases as uc
from dashboard import feedback_charts as charts
from dashboard.feedback_view import render_rating_tiles, render_tiles, render_transcript
from dashboard.resources import current_instance, get_workbench
from dashboard.ui import attempt, plural

PERIODS = {"24 hours": timedelta(days=1), "7 days": timedelta(days=7), "30 days": timedelta(days=30),
           "90 days": timedelta(days=90)}
CUSTOM = "Custom"
DATES_PX = 260  # the date range "2026/11/24 – 2026/12/07" and its calendar button, whole
# The filters, kept under a key no widget owns: Streamlit forgets a widget's state when its page is left,
# so each widget is seeded from here when the page is opened again.
KEPT = "fb_kept"
# Past this many conversations the filter offers the most recent ones, and any other is typed: a list of
# every conversation of a busy period (11,664 in 14 days at 100,000 answers) is most of what the page sends.
CHAIN_OPTIONS = 200
FILTERS = ("fb_period", "fb_dates", "fb_imported", "fb_models", "fb_profiles", "fb_tags", "fb_chains",
           "fb_sources", "fb_keys", "fb_corrected_only", "fb_rated_down_only", "fb_charts")


def seed(key: str, default=None, options=None) -> None:
    """Give a filter's widget its kept value (only values still among `options`), or `default`."""
    if key in st.session_state:
        return
    value = st.session_state.get(KEPT, {}).get(key, default)
    if options is not None and value is not None:
        value = [v for v in value if v in options]
    if value is not None:
        st.session_state[key] = value


def keep_filters() -> None:
    st.session_state.setdefault(KEPT, {}).update({k: st.session_state[k] for k in FILTERS if k in st.session_state})


def _load(instance: str, since: datetime, until: datetime, imported: bool) -> pd.DataFrame:
    """Read anew at every run: the workbench keeps the rows and reads only what changed since its last
    look (`core.analytics.frames`), so each figure is current. The sweep runs inside the load, so figures
    count answers abandoned since the last look."""
    with st.spinner("Loading feedback…"):
        return uc.feedback_answers(get_workbench(), uc.FeedbackWindow(instance=instance, since=since,
                                                                      until=until, include_imported=imported))


st.title("Feedback")
st.caption("How users reacted to answers: a follow-up soon after scores high, an acknowledgement adds, a "
           "correction takes away, and no follow-up for 10 minutes marks the answer abandoned.")
wb = get_workbench()
instance = current_instance()
fast, deep = wb.settings.model_fast, wb.settings.model_deep


def model_label(name: str) -> str:
    return f"{name} (deep)" if name == deep else f"{name} (fast)" if name == fast else name


def source_label(name: str) -> str:
    return "unknown (stored before sources were recorded)" if name == "unknown" else name


def key_label(name: str) -> str:
    return name or "(no key)"


# -- the period -----------------------------------------------------------------------------------
# The Period control at its own width, the dates beside it while they fit and under it when not: in [3, 2]
# columns a 1,100 px window (beside the sidebar) gave the control 376 of the 386 px its options need, so it
# scrolled, cutting off "Custom", or "24 hours" once Custom was picked.
top = st.container(horizontal=True, vertical_alignment="bottom", gap="medium")
seed("fb_period", "7 days")
period = top.segmented_control("Period", [*PERIODS, CUSTOM], key="fb_period", width="content") or "7 days"
# "now" rounded up to the minute: no answer of this minute is cut off, and the captions read in minutes.
now = datetime.now(UTC).replace(second=0, microsecond=0) + timedelta(minutes=1)
if period == CUSTOM:
    seed("fb_dates", (now.date() - timedelta(days=13), now.date()))
    picked = top.date_input("Dates (UTC)", max_value=now.date(), key="fb_dates", width=DATES_PX)
    start_day, end_day = (picked if isinstance(picked, tuple | list) and len(picked) == 2
                          else (picked[0], picked[0]) if isinstance(picked, tuple | list) else (picked, picked))
    since = datetime.combine(start_day, time.min, UTC)
    # The last day's last microsecond, not the next day's midnight: that instant is the next day's
    # (as `workbench feedback summary --until DAY` reads it), not to be counted in two windows.
    day_end = datetime.combine(end_day, time.min, UTC) + timedelta(days=1, microseconds=-1)
    until = min(now, day_end)
    until_arg = end_day.isoformat() if until == day_end else f"{until:%Y-%m-%dT%H:%MZ}"
else:
    since, until = now - PERIODS[period], now
    day_end = until
    until_arg = f"{until:%Y-%m-%dT%H:%MZ}"
seed("fb_imported")
imported = st.toggle("Include imported answers", key="fb_imported",
                     help="Answers that came in with `workbench import` or the Import page have no feedback "
                          "of their own (no follow-up was ever timed): they are left out of the rates unless "
                          "you include them here.")
keep_filters()
# Chosen days are compared with as many whole days before them, even while the last one is today.
prev_since, prev_until = uc.previous_window(since, day_end)

frame_all = attempt("load feedback", lambda: _load(instance, prev_since, until, imported))
if frame_all is None:
    st.stop()
if frame_all.empty:
    span = attempt("read when the answers were given", lambda: uc.feedback_span(wb, uc.InstanceRequest(
        instance=instance)))
    if span is not None and span.last is not None:
        # "Pick a longer period" misled when the answers ended months before the longest one (90 days).
        # The period chosen (none in the one before it either), and what to change: Custom may be picked.
        pick = "pick those dates" if period == CUSTOM else f"pick **{CUSTOM}** and those dates"
        st.info(f"No answers with feedback in instance **{instance}** between {since:%Y-%m-%d} and "
                f"{until:%Y-%m-%d}. Its {span.answers:,} answers were given from {span.first:%Y-%m-%d} to "
                f"{span.last:%Y-%m-%d} (UTC): {pick}.")
    else:
        st.info(f"No answers with feedback in instance **{instance}** yet. Feedback is recorded for every "
                "ui_remember answer: talk to the assistant on the Chat page, or load the demo data with "
                "`workbench demo load`.")
    st.stop()

# -- filters (options from the loaded period) ------------------------------------------------------
recent_chains = frame_all["chain_id"].iloc[::-1].unique()  # the latest answer's conversation first
many_chains = len(recent_chains) > CHAIN_OPTIONS
options = {"fb_models": sorted(frame_all["model"].unique()), "fb_profiles": sorted(frame_all["profile"].unique()),
           "fb_tags": sorted({t for ts in frame_all["tags"] for t in ts}),
           "fb_chains": list(recent_chains[:CHAIN_OPTIONS]) if many_chains else sorted(recent_chains),
           "fb_sources": sorted(frame_all["source"].unique()), "fb_keys": sorted(frame_all["key"].unique())}
for key, choices in options.items():
    seed(key, options=None if key == "fb_chains" and many_chains else choices)
with st.container(border=True):
    f1, f2, f3, f4 = st.columns([4, 3, 3, 3])
    models = f1.multiselect("Model", options["fb_models"], format_func=model_label,
                            placeholder="all models", key="fb_models",
                            help="The model that wrote the answer (the one the turn was routed to); answers "
                                 f"quoted from the memories, with no LLM call, are “{uc.EXTRACTIVE_MODEL}”.")
    profiles = f2.multiselect("Profile", options["fb_profiles"], placeholder="all profiles",
                              key="fb_profiles")
    tags = f3.multiselect("Tag", options["fb_tags"], placeholder="all tags",
                          key="fb_tags")
    chains = f4.multiselect(
        "Conversation", options["fb_chains"], key="fb_chains", accept_new_options=many_chains,
        placeholder=f"all ({len(recent_chains):,}: type an id)" if many_chains else "all",
        help=f"The {CHAIN_OPTIONS} most recent of {len(recent_chains):,} conversations are listed; type the "
             "id of any other." if many_chains else None)
    f5, f6, _ = st.columns([4, 3, 6])
    sources = f5.multiselect("Came through", options["fb_sources"], format_func=source_label,
                             placeholder="every front end", key="fb_sources",
                             help="The front end a turn came through: dashboard, cli, mcp, http, demo, or "
                                  "python (a program using the core as a library).")
    keys = f6.multiselect("API key", options["fb_keys"], format_func=key_label,
                          placeholder="any key", key="fb_keys",
                          help="The name of the API key a turn came with; “(no key)”: none was needed.")
seed("fb_corrected_only")
seed("fb_rated_down_only")
chosen = {"models": models, "profiles": profiles, "chains": chains, "tags": tags, "sources": sources,
          "keys": keys}
# The period and the one before it (which ends where the period starts), through the filters.
both = uc.apply_filter(frame_all, uc.FeedbackFilter(since=prev_since, until=until, **chosen))
cur = uc.apply_filter(both, uc.FeedbackFilter(since=since))
# The terminal and the HTTP API filter by model too (`--model`, repeated); the other filters are the page's.
cli = (f"workbench{'' if instance == wb.settings.instance else f' --instance {instance}'} feedback summary "
       f"--since {since:%Y-%m-%dT%H:%MZ} --until {until_arg}"
       + "".join(f" --model {shlex.quote(m)}" for m in models) + (" --include-imported" if imported else ""))
unmatched = any(v for k, v in chosen.items() if k != "models")
st.caption(f"{since:%Y-%m-%d %H:%M} → {until:%Y-%m-%d %H:%M} UTC, compared with {prev_since:%Y-%m-%d %H:%M} → "
           f"{prev_until:%Y-%m-%d %H:%M}. Same figures in a terminal"
           f"{' (without the filters other than the model)' if unmatched else ''}: `{cli}`")
if cur.empty:
    before = len(both) - len(cur)
    if any(chosen.values()):
        st.info("No answers match these filters in this period. Clear a filter or pick a longer period; "
                f"the previous period had {before} matching answers.")
    else:  # "match these filters" with none chosen sent the user looking for a filter to clear
        st.info(f"No answers in this period ({since:%Y-%m-%d %H:%M} → {until:%Y-%m-%d %H:%M} UTC); the previous "
                f"period had {plural(before, 'answer')}.")
    st.stop()

prev_summary, cur_summary = uc.summarize_split(both, since)
period_label = f"{prev_since:%b %d %H:%M} – {prev_until:%b %d %H:%M} UTC"
render_tiles(cur_summary, prev_summary, period_label)
render_rating_tiles(cur_summary, prev_summary, period_label)
if (cur["model"] == uc.EXTRACTIVE_MODEL).all():
    st.caption(f"ℹ️ Every answer in this view was extractive: quoted from the memories with no LLM call (none "
               f"was configured, or the call failed), so each counts under “{uc.EXTRACTIVE_MODEL}”, not under the "
               "model its turn was routed to.")

# -- charts ---------------------------------------------------------------------------------------
# One group of charts at a time: a tab's charts are built only while it is open (each chart costs the
# browser time to draw; seven at once made this the slowest page). Vega-Lite charts (`feedback_charts`).
CHART_TABS = ("Over time", "Model and profile", "Scores and follow-ups", "Latency and tokens")
seed("fb_charts", CHART_TABS[0])
over_time, by_group, scores, speed = st.tabs(CHART_TABS, key="fb_charts", on_change=keep_filters)
# Days, or weeks past charts.WEEKLY_AFTER_DAYS: a year's daily line was too jagged to read. Every day or week
# of the period is a row, answers or not (as `feedback summary --by day` lists them): the axis is the period's.
unit = charts.unit_for((until - since).total_seconds() / 86400)
if over_time.open or speed.open:
    per_period = uc.with_empty_periods(uc.summarize_by(cur, unit), unit, since, until)
if over_time.open:
    over_time.vega_lite_chart(spec=charts.score_over_time(per_period, unit), width="stretch")
if by_group.open:
    left, right = by_group.columns(2)
    by_model = uc.summarize_by(cur, "model")
    left.altair_chart(charts.compare(by_model, "model", "Fast vs deep: mean score by model (extractive apart)",
                                     {m: model_label(m) for m in by_model["model"]}), width="stretch")
    right.altair_chart(charts.compare(uc.summarize_by(cur, "profile"), "profile", "Profile against profile"),
                       width="stretch")
if scores.open:
    left, right = scores.columns(2)
    if cur["feedback_score"].notna().any():
        left.altair_chart(charts.score_distribution(cur), width="stretch")
    else:
        left.info("No answer in this view has a score yet: scores come from the user's next turn.")
    if cur["time_to_next"].notna().any():
        right.altair_chart(charts.time_to_next(cur), width="stretch")
    else:
        right.info("No follow-ups in this view, so there is no time to next turn to show.")
if speed.open:
    left, right = speed.columns(2)
    lat = uc.latency_table(cur).dropna(subset=["p50"])
    if not lat.empty:
        left.altair_chart(charts.latency(lat), width="stretch")
    else:
        left.info("No latency was recorded for these answers (their metrics thoughts are missing).")
    if cur["tokens"].notna().any():
        right.vega_lite_chart(spec=charts.tokens_over_time(per_period, unit), width="stretch")
    else:
        right.info("No token usage in this view: tokens are reported by the LLM provider, and these answers "
                   "were extractive. Configure GROQ_API_KEY or LLM_BASE_URL to see usage per day.")

# -- the worst turns --------------------------------------------------------------------------------
st.subheader("Lowest-scored turns")
head = st.columns([2, 2, 2, 3], vertical_alignment="center")
corrected_only = head[0].toggle("Only corrected turns", key="fb_corrected_only",
                                help="Turns whose follow-up read as a correction.")
rated_down_only = head[1].toggle("Only rated down", key="fb_rated_down_only",
                                 help="Turns the user rated down, scored or not, with their comments.")
keep_filters()
# The download holds what the page lists: every answer the filters keep, narrowed by the toggles.
listed = (uc.lowest_scored(cur, len(cur), corrected_only=corrected_only, rated_down_only=rated_down_only)
          if corrected_only or rated_down_only else cur)
narrowed = "-".join(w for w, on in (("corrected", corrected_only), ("rated-down", rated_down_only)) if on)
head[2].download_button("Download CSV", lambda: uc.answers_csv(listed), on_click="ignore",
                        file_name=f"feedback-{instance}-{since:%Y%m%d}-{until:%Y%m%d}"
                                  f"{'-' + narrowed if narrowed else ''}.csv", mime="text/csv",
                        help=f"The {len(listed):,} answers of this view (the filters and toggles above), one row "
                             "each, lowest score first when a toggle is on.", icon=":material/download:")
worst = uc.lowest_scored(cur, 50, corrected_only=corrected_only, rated_down_only=rated_down_only)
if worst.empty:
    st.info("No turns in this view match: " + " and ".join(
        w for w, on in (("corrected", corrected_only), ("rated down", rated_down_only)) if on) + "."
            if corrected_only or rated_down_only else "No scored turns in this view yet.")
    st.stop()
pool = cur[cur["rating"] < 0] if rated_down_only else cur[cur["feedback_score"].notna()]
counted = int(pool["corrected"].sum()) if corrected_only else len(pool)
head[3].caption(f"{len(worst)} of {counted} turns, lowest score first. Click a row to open its transcript.")
questions = attempt("read the questions",
                    lambda: uc.questions(wb, uc.InstanceRequest(instance=instance), worst)) or {}
table = pd.DataFrame({
    "answered (UTC)": worst["answered_at"].dt.tz_localize(None), "score": worst["feedback_score"],
    # Words, not thumbs: the grid draws on a canvas, where an emoji font may be missing.
    "rated": worst["rating"].map({1.0: "up", -1.0: "down"}).fillna(""),
    "question": [questions.get(a, "") for a in worst["answer_id"]],
    "rating comment": worst["rating_comment"], "correction": worst["correction"],
    "next after (s)": worst["time_to_next"], "model": worst["model"].map(model_label),
    "synthesis": worst["synthesis"], "profile": worst["profile"], "tags": worst["tags"].map(", ".join),
    "via": worst["source"] + worst["key"].map(lambda k: f" ({k})" if k else ""),
    "conversation": worst["chain_id"]})
event = st.dataframe(table, hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row",
                     key="fb_worst", column_config={
                         "score": st.column_config.ProgressColumn("score", min_value=0.0, max_value=1.0,
                                                                  format="%.2f"),
                         "answered (UTC)": st.column_config.DatetimeColumn(format="YYYY-MM-DD HH:mm"),
                         "rated": st.column_config.TextColumn(width=60),
                         "question": st.column_config.TextColumn(width=290),
                         "rating comment": st.column_config.TextColumn(width=180),
                         "correction": st.column_config.TextColumn(width=230),
                         "next after (s)": st.column_config.NumberColumn(format="%.0f")})
rows = event.selection.rows if event and event.selection else []
if rows and rows[0] < len(worst):
    picked_row = worst.iloc[rows[0]]
    transcript = attempt("load the transcript", lambda: uc.transcript(wb, uc.TurnRef(
        instance=instance, chain_id=picked_row["chain_id"], answer_id=picked_row["answer_id"])))
    if transcript is None:
        st.warning("This turn is no longer stored (its conversation may have been deleted).")
    else:
        with st.container(border=True):
            st.markdown("**Transcript**")
            render_transcript(transcript, model_label)
else:
    st.caption("Select a row to see the user turn, the answer with its context, and what the user said next.")
