"""`workbench bank …` (memory banks), `workbench chains …` and `workbench memory …` (explore and delete)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import click

BANK_OPTION = click.option("--bank", "name", default="default", show_default=True, help="Memory bank name.")


def register(cli: click.Group) -> None:
    @cli.group()
    def bank() -> None:
        """Memory banks: an agent's step-by-step task memory, compressed into summaries."""

    @bank.command("list")
    @click.pass_obj
    def bank_list(ctx) -> None:
        """The instance's banks with their entry and summary counts."""
        from core.bank import list_banks
        from core.cli import emit

        emit([b.model_dump(mode="json") for b in list_banks(ctx.wb, ctx.wb.settings.instance)])

    @bank.command("add")
    @BANK_OPTION
    @click.option("--skill", "skill_name", default="CommandSkill", show_default=True)
    @click.option("--thinking", default="")
    @click.option("--command", default="")
    @click.option("--result", default="")
    @click.option("--summary", default="", help="Left empty, it is made from thinking, command and result.")
    @click.option("--importance", type=float, default=0.5, show_default=True)
    @click.option("--tag", "tags", multiple=True, help="Repeatable.")
    @click.option("--step", "step_number", type=int, default=0, help="Step number (default: the next one).")
    @click.option("--max-entries", type=int, default=6, show_default=True)
    @click.option("--compression-threshold", type=int, default=6, show_default=True)
    @click.pass_obj
    def bank_add(ctx, name, skill_name, thinking, command, result, summary, importance, tags, step_number,
                 max_entries, compression_threshold) -> None:
        """Add an entry; prints it as stored, with the compression it triggered (if any)."""
        from core.bank import MemoryBank, MemoryEntry
        from core.cli import emit

        entry = MemoryEntry(skill_name=skill_name, thinking=thinking, command=command, result=result,
                            summary=summary, importance=importance, tags=list(tags), step_number=step_number)
        membank = MemoryBank(ctx.wb, ctx.wb.settings.instance, name, max_entries=max_entries,
                             compression_threshold=compression_threshold)
        emit(membank.add_entry(entry))

    @bank.command("query")
    @BANK_OPTION
    @click.option("--keyword", "keywords", multiple=True, help="Any of them matches (case-insensitive).")
    @click.option("--min-importance", type=float, default=0.0, show_default=True)
    @click.option("--max-results", type=int, default=10, show_default=True)
    @click.option("--tag", "tags", multiple=True)
    @click.option("--date-from", type=click.DateTime(), default=None)
    @click.option("--date-to", type=click.DateTime(), default=None)
    @click.pass_obj
    def bank_query(ctx, name, keywords, min_importance, max_results, tags, date_from: datetime | None,
                   date_to: datetime | None) -> None:
        """Live entries and summaries matching the query, by importance then time."""
        from core.bank import MemoryQuery
        from core.cli import emit

        q = MemoryQuery(keywords=list(keywords), min_importance=min_importance, max_results=max_results,
                        tags=list(tags), date_from=date_from, date_to=date_to)
        found = _open(ctx, name).get_relevant_memories(q)
        emit([e.model_dump(mode="json") for e in found])

    @bank.command("stats")
    @BANK_OPTION
    @click.pass_obj
    def bank_stats(ctx, name) -> None:
        """Counts, settings and compression totals of a bank."""
        from core.cli import emit

        emit(_open(ctx, name).stats())

    @bank.command("show")
    @BANK_OPTION
    @click.pass_obj
    def bank_show(ctx, name) -> None:
        """Every entry, summary and compression event of a bank."""
        from core.cli import emit

        emit(_open(ctx, name).snapshot())

    @bank.command("clear")
    @BANK_OPTION
    @click.confirmation_option(prompt="Remove every entry and summary of this bank?")
    @click.pass_obj
    def bank_clear(ctx, name) -> None:
        """Remove every entry, summary and compression event (the bank stays)."""
        from core.cli import emit

        emit({"bank": name, "entries_removed": _open(ctx, name).clear()})

    @bank.command("delete")
    @BANK_OPTION
    @click.confirmation_option(prompt="Delete this bank and everything in it?")
    @click.pass_obj
    def bank_delete(ctx, name) -> None:
        """Delete the bank with everything in it, from every store."""
        from core.cli import emit
        from core.admin.deletion import delete_bank

        emit(delete_bank(ctx.wb, ctx.wb.settings.instance, name))

    @cli.group()
    def chains() -> None:
        """Conversation chains: list, export as JSON, delete."""

    @chains.command("list")
    @click.option("--page", type=int, default=1, show_default=True)
    @click.option("--page-size", type=int, default=20, show_default=True)
    @click.option("--order", type=click.Choice(["newest", "oldest"]), default="newest", show_default=True)
    @click.pass_obj
    def chains_list(ctx, page, page_size, order) -> None:
        """One page of chains, by last activity."""
        from core.cli import emit
        from core.admin.explorer import list_chains

        emit(list_chains(ctx.wb, ctx.wb.settings.instance, page=page, page_size=page_size, order=order))

    @chains.command("export")
    @click.argument("chain_id")
    @click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
                  help="Write to this file instead of standard output.")
    @click.pass_obj
    def chains_export(ctx, chain_id, output: Path | None) -> None:
        """A chain's thoughts and feedback as JSON."""
        from core.admin.explorer import export_chain

        doc = export_chain(ctx.wb, ctx.wb.settings.instance, chain_id)
        if output:
            output.write_text(doc, encoding="utf-8")
            click.echo(f"wrote {output}")
        else:
            click.echo(doc)

    @chains.command("delete")
    @click.argument("chain_id")
    @click.confirmation_option(prompt="Delete this chain from every store?")
    @click.pass_obj
    def chains_delete(ctx, chain_id) -> None:
        """Delete a chain: thoughts, feedback, queued index writes and index rows."""
        from core.cli import emit
        from core.admin.deletion import delete_chain

        emit(delete_chain(ctx.wb, ctx.wb.settings.instance, chain_id))

    @cli.group()
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
    def memory_search(ctx, query, mode, kinds, chain_id, tags, top_k) -> None:
        """Full-text, semantic or hybrid search; each hit names its chain or bank."""
        from core.cli import emit
        from core.admin.explorer import ExplorerSearch, search_memory

        req = ExplorerSearch(query=query, instance=ctx.wb.settings.instance, mode=mode, kinds=list(kinds),
                             chain_id=chain_id, tags=list(tags), top_k=top_k)
        emit(search_memory(ctx.wb, req))

    @memory.command("delete")
    @click.argument("memory_id")
    @click.option("--chain", "chain_id", default=None, help="The thought's chain, if it is not indexed yet.")
    @click.confirmation_option(prompt="Delete this memory from every store?")
    @click.pass_obj
    def memory_delete(ctx, memory_id, chain_id) -> None:
        """Delete one memory (a thought, a bank entry or summary, or any indexed item)."""
        from core.cli import emit
        from core.admin.deletion import delete_memory

        emit(delete_memory(ctx.wb, ctx.wb.settings.instance, memory_id, chain_id=chain_id))


def _open(ctx, name: str):
    from core.bank import MemoryBank

    return MemoryBank.open(ctx.wb, ctx.wb.settings.instance, name)
