"""An old chat turn's "why" after its profile was saved over (the tuning report's D3): the turn recorded
the fusion it ranked with, so its rows still add up from the page; a turn stored before turns recorded it
reads the profile by name and says it is the profile as it is now."""

from __future__ import annotations

import re
import uuid

from core import usecases as uc
from core.conversation.thoughts import CATEGORY_METRICS, thought_key
from core.conversation.turn import Remember, UiRememberParams
from tests.app.conftest import open_page


def why_caption(at) -> str:
    """The last turn's."""
    return [c.value for c in at.caption if "How the scores add up" in c.value][-1]


def rows_add_up(at, how: str) -> None:
    w = [float(x) for x in re.search(r"own = ([\d.]+)·sem \+ ([\d.]+)·text \+ ([\d.]+)·rec", how).groups()]
    frame = [df.value for df in at.dataframe if "content" in df.value][-1]  # the last turn's
    assert len(frame)
    for row in frame.to_dict("records"):
        own = w[0] * row["semantic"] + w[1] * row["text"] + w[2] * row["recency"] + 0.2 * row["speaker"]
        assert abs((own + 0.3 * row["chain score"]) / 1.3 - row["combined"]) < 0.01, (how, row)


def test_an_old_turns_why_keeps_the_weights_it_used_after_its_profile_is_saved_over(app_env, workbench,
                                                                                     instance):
    name = f"recent-{uuid.uuid4().hex[:6]}"
    uc.save_profile(workbench, uc.SaveProfile(instance=instance, activate=True, profile=uc.FusionProfile(
        name=name, w_sem=0.6, w_text=0.25, w_rec=0.15, tau_s=604800.0)))
    Remember(workbench).run(UiRememberParams(thought="I wrote the wiki note about the release checklist",
                                             chain_id="notes"), instance=instance)
    turn = Remember(workbench).run(UiRememberParams(thought="Which wiki note did I write?", chain_id="notes"),
                                   instance=instance)
    assert turn.fusion is not None and turn.fusion.tau_s == 604800.0
    # Saved over: the name now means other weights, which this turn never used.
    uc.save_profile(workbench, uc.SaveProfile(instance=instance, profile=uc.FusionProfile(
        name=name, w_sem=0.1, w_text=0.1, w_rec=0.8, tau_s=3600.0)))

    at = open_page("pages/chat.py", instance=instance)
    at.selectbox(key="chat_chain_select").select("notes").run()
    assert not at.exception, at.exception
    how = why_caption(at)
    assert f"with {name}'s weights as this turn used them: own = 0.60·sem + 0.25·text + 0.15·rec" in how
    assert "rec = exp(−age / τ), half-life 4.85 d (τ 1 w)" in how and "as it is now" not in how
    rows_add_up(at, how)

    # A turn stored before turns recorded their fusion: the profile by name, as it is now, said so.
    workbench.redis().hdel(thought_key(instance, "notes", turn.thought3_id), "fusion")
    (stored,) = [t for t in workbench.thoughts.chain_thoughts(instance, "notes") if t.id == turn.thought3_id]
    assert stored.category == CATEGORY_METRICS and "fusion" not in stored.extra
    at.run()
    assert not at.exception, at.exception
    how = why_caption(at)
    assert f"with {name}'s weights, the profile as it is now: this turn was stored before turns recorded" in how
    assert "own = 0.10·sem + 0.10·text + 0.80·rec" in how and "rec = exp(−age / τ), half-life 41.6 min (τ 1 h)" in how
