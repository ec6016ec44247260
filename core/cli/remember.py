"""`workbench remember`: one ui_remember turn."""

from __future__ import annotations

import click

from core.cli.context import WorkbenchContext
from core.cli.output import emit

BRIEF_FIELDS = {"status", "thought1_id", "thought2_id", "thought3_id", "model_used", "usage_total_tokens"}


@click.command("remember")
@click.argument("text")
@click.option("--chain", "chain_id", default=None, help="Conversation chain id (new chain if omitted).")
@click.option("--style", default=None, help="default | deep | chronological")
@click.option("--top-k", type=int, default=5, show_default=True)
@click.option("--profile", default=None, help="Fusion profile (default: the instance's active one).")
@click.option("--similarity-threshold", type=float, default=0.0, show_default=True)
@click.option("--token-cap", type=int, default=None, help="Token budget for retrieved context.")
@click.option("--tag", "tags", multiple=True, help="Tag stored with the turn (repeatable).")
@click.option("--filter-tags", is_flag=True, help="Retrieve only memories carrying one of the --tag values.")
@click.option("--temporal", default=None, help="Time hint restricting retrieval, e.g. 'last week'.")
@click.option("--search-type", type=click.Choice(["hybrid", "vector", "text"]), default="hybrid",
              show_default=True, help="Which retrieval legs run.")
@click.option("--thought-number", type=int, default=None,
              help="The turn's place in the chain; the store numbers turns itself (a different number is noted).")
@click.option("--total-thoughts", type=int, default=1, show_default=True)
@click.option("--final", is_flag=True, help="No follow-up expected (next_thought_needed = false).")
@click.option("--request-id", default=None,
              help="Idempotency key: a repeated id returns the first result. Made for you when left out; a "
                   "turn whose outcome is unknown names its id, to retry with.")
@click.option("--step", "steps", multiple=True, metavar="TITLE=TEXT",
              help="An earlier tool's output, put into the prompt's intermediate tool outputs (repeatable).")
@click.option("--no-history", is_flag=True, help="Leave the chain's chat history out of the prompt.")
@click.option("--brief", is_flag=True,
              help="Print only the status, the three thought ids, the model and the tokens.")
@click.pass_obj
def remember(ctx: WorkbenchContext, text: str, chain_id: str | None, style: str | None, top_k: int,
             profile: str | None, similarity_threshold: float, token_cap: int | None, tags: tuple[str, ...],
             filter_tags: bool, temporal: str | None, search_type: str, thought_number: int | None,
             total_thoughts: int, final: bool,
             request_id: str | None, steps: tuple[str, ...], no_history: bool, brief: bool) -> None:
    """Run one ui_remember turn and print the result as JSON."""
    from core import usecases as uc

    params = uc.UiRememberParams(  # validated before any server starts
        thought=text, chain_id=chain_id, style=style, top_k=top_k, profile=profile,
        similarity_threshold=similarity_threshold, token_cap=token_cap, tags=list(tags),
        filter_tags=filter_tags,
        temporal=temporal, search_type=search_type, thought_number=thought_number,
        total_thoughts=total_thoughts, next_thought_needed=not final, request_id=request_id,
        intermediate_steps=parse_steps(steps), include_history=not no_history)
    result = uc.remember(ctx.wb, params, origin=uc.Origin(source="cli"))
    emit(result.model_dump(include=BRIEF_FIELDS) if brief else result)


def parse_steps(steps: tuple[str, ...]) -> dict[str, str]:
    """--step TITLE=TEXT options as intermediate steps; a title given twice is refused, not overwritten."""
    out: dict[str, str] = {}
    for step in steps:
        title, sep, text = step.partition("=")
        if not sep:
            raise click.BadParameter(f"{step[:40]!r}: write TITLE=TEXT", param_hint="--step")
        if title in out:
            raise click.BadParameter(f"step {title!r} is given twice", param_hint="--step")
        out[title] = text
    return out
