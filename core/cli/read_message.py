"""`workbench memory read-message CHAIN`: MemoryScope's read_message over a stored chain."""

from __future__ import annotations

import click

from core.cli.context import WorkbenchContext
from core.cli.output import emit


@click.command("read-message")
@click.argument("chain_id", metavar="CHAIN")
@click.option("--max", "max_count", type=int, default=10, show_default=True,
              help="op.read_message_op.params.contextual_msg_max_count: most messages to return.")
@click.option("--target", "target_name", default=None,
              help="op.read_message_op.params.target_name: only if the chain holds a message of this role "
                   "name; then all its unread messages are listed, whoever said them.")
@click.pass_obj
def read_message(ctx: WorkbenchContext, chain_id: str, max_count: int, target_name: str | None) -> None:
    """Print CHAIN's recent messages that are not memorized yet (not in the memory index), oldest first."""
    from core import usecases as uc

    params = uc.ReadMessageParams(contextual_msg_max_count=max_count, target_name=target_name)
    request = uc.ReadMessageRequest(chain_id=chain_id, params=params)  # bad input fails before any service starts
    result = uc.read_message(ctx.wb, request)
    emit(result.model_dump(mode="json", exclude={"trace": {"output"}}))
