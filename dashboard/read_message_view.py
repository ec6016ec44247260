"""The Tune page's read_message step: MemoryScope's read_message over one chain of the instance."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from core import usecases as uc
from dashboard.resources import get_workbench
from dashboard.ui import as_plain_line, attempt


def read_message_step(instance: str, params: uc.ReadMessageParams,
                      render_step: Callable[[int, uc.OpTrace], None]) -> None:
    """Pick a chain; its recent messages not memorized yet (not in the memory index) show as a trace step."""
    wb = get_workbench()
    st.markdown("**read_message** — a chain's recent messages the memory index does not hold yet")
    page = attempt("list the chains", lambda: uc.chains(wb, uc.ChainList(instance=instance, page_size=50)))
    if not page or not page.chains:
        st.caption("No chains in this instance yet.")
        return
    chain = st.selectbox("Chain", page.chains, key="tune_read_message_chain", persist_state="page",
                         format_func=lambda c: f"{as_plain_line(c.title)} · {c.turns} turns · {c.chain_id}")
    result = attempt("read the chain's messages", lambda: uc.read_message(wb, uc.ReadMessageRequest(
        instance=instance, chain_id=chain.chain_id, params=params)))
    if result is not None:
        render_step(1, result.trace)
