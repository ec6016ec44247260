"""`workbench memory search|delete`: what is stored, across chains and banks."""

from __future__ import annotations

import click

from core.cli.confirm import confirmation_option
from core.cli.context import WorkbenchContext
from core.cli.output import emit


@click.group("memory")
def memory() -> None:
    """Search what is stored, and delete a single memory."""


@memory.command("search")
@click.argument("query")
@click.option("--mode", type=click.Choice(["hybrid", "vector", "text"]), default="hybrid",
              show_default=True)
@click.option("--kind", "kinds", multiple=True, help="Only these kinds (repeatable): user, assistant, "
              "bank_entry, bank_summary, …")
@click.option("--chain", "chain_id", default=None)
@click.option("--tag", "tags", multiple=True)
@click.option("--top-k", type=int, default=20, show_default=True)
@click.pass_obj
def search(ctx: WorkbenchContext, query: str, mode: str, kinds: tuple[str, ...], chain_id: str | None,
           tags: tuple[str, ...], top_k: int) -> None:
    """Full-text, semantic or hybrid search; each hit names its chain or bank."""
    from core import usecases as uc

    request = uc.ExplorerSearch(query=query, instance=ctx.wb.settings.instance, mode=mode, kinds=list(kinds),
                                chain_id=chain_id, tags=list(tags), top_k=top_k)
    emit(uc.memory_search(ctx.wb, request))


@memory.command("delete")
@click.argument("memory_id")
@click.option("--chain", "chain_id", default=None, help="The thought's chain, if it is not indexed yet.")
@confirmation_option("Delete this memory from every store?")
@click.pass_obj
def delete(ctx: WorkbenchContext, memory_id: str, chain_id: str | None) -> None:
    """Delete one memory by its id: a thought, an added memory, a bank entry or summary (the id `bank
    add` printed), or any indexed item. An id that names nothing is an error."""
    from core import usecases as uc

    emit(uc.memory_delete(ctx.wb, uc.MemoryRef(memory_id=memory_id, chain_id=chain_id)))
