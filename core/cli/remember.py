"""`workbench remember` (one ui_remember turn), `workbench sweep`, and `workbench profiles`."""

from __future__ import annotations

import click


def register(cli: click.Group) -> None:
    @cli.command()
    @click.argument("text")
    @click.option("--chain", "chain_id", default=None, help="Conversation chain id (new chain if omitted).")
    @click.option("--style", default=None, help="default | deep | chronological")
    @click.option("--top-k", type=int, default=5, show_default=True)
    @click.option("--profile", default=None, help="Fusion profile (default: the instance's active one).")
    @click.option("--similarity-threshold", type=float, default=0.0, show_default=True)
    @click.option("--token-cap", type=int, default=None, help="Token budget for retrieved context.")
    @click.option("--tag", "tags", multiple=True, help="Tag stored with the turn (repeatable).")
    @click.option("--temporal", default=None, help="Time hint restricting retrieval, e.g. 'last week'.")
    @click.option("--search-type", default="hybrid", show_default=True, help="hybrid | vector | text")
    @click.option("--thought-number", type=int, default=1, show_default=True)
    @click.option("--total-thoughts", type=int, default=1, show_default=True)
    @click.option("--final", is_flag=True, help="No follow-up expected (next_thought_needed = false).")
    @click.option("--request-id", default=None, help="Idempotency key: a repeated id returns the first result.")
    @click.option("--brief", is_flag=True, help="Print only the seed's result fields.")
    @click.pass_obj
    def remember(ctx, text, chain_id, style, top_k, profile, similarity_threshold, token_cap, tags, temporal,
                 search_type, thought_number, total_thoughts, final, request_id, brief) -> None:
        """Run one ui_remember turn and print the result as JSON."""
        from core.cli import emit
        from core.conversation.turn import Remember, UiRememberParams

        params = UiRememberParams(  # validated before any server starts
            thought=text, chain_id=chain_id, style=style, top_k=top_k, profile=profile,
            similarity_threshold=similarity_threshold, token_cap=token_cap, tags=list(tags),
            temporal=temporal, search_type=search_type, thought_number=thought_number,
            total_thoughts=total_thoughts, next_thought_needed=not final, request_id=request_id)
        result = Remember(ctx.wb).run(params, instance=ctx.wb.settings.instance)
        if brief:
            emit(result.model_dump(include={"status", "thought1_id", "thought2_id", "thought3_id", "model_used",
                                            "usage_total_tokens"}))
        else:
            emit(result)

    @cli.command()
    @click.pass_obj
    def sweep(ctx) -> None:
        """Mark answers with no follow-up for 10 minutes as abandoned; index queued thoughts."""
        from core.cli import emit
        from core.admin.upkeep import upkeep

        emit(upkeep(ctx.wb))

    @cli.group()
    def profiles() -> None:
        """List, save and activate fusion profiles."""

    @profiles.command("list")
    @click.pass_obj
    def list_(ctx) -> None:
        """The shipped presets and saved profiles, and the instance's active one."""
        from core.cli import emit

        wb = ctx.wb
        emit({"active": wb.profiles.active(wb.settings.instance).name,
              "profiles": [p.model_dump() for p in wb.profiles.list()]})

    @profiles.command("save")
    @click.argument("name")
    @click.option("--method", default="linear", show_default=True, help="linear | rrf")
    @click.option("--w-sem", type=float, required=True)
    @click.option("--w-text", type=float, required=True)
    @click.option("--w-rec", type=float, required=True)
    @click.option("--tau", "tau_s", type=float, default=86400.0, show_default=True, help="Recency tau, seconds.")
    @click.option("--rrf-k", type=int, default=60, show_default=True)
    @click.option("--activate", is_flag=True)
    @click.pass_obj
    def save(ctx, name, method, w_sem, w_text, w_rec, tau_s, rrf_k, activate) -> None:
        """Save a custom profile (weights must sum to 1); the last write wins."""
        from core.cli import emit
        from core.models import FusionProfile

        profile = FusionProfile(name=name, method=method, w_sem=w_sem, w_text=w_text, w_rec=w_rec,
                                tau_s=tau_s, rrf_k=rrf_k)
        wb = ctx.wb
        wb.profiles.save(profile)
        if activate:
            wb.profiles.activate(wb.settings.instance, name)
        emit(profile)

    @profiles.command("activate")
    @click.argument("name")
    @click.pass_obj
    def activate_(ctx, name) -> None:
        """Make NAME the profile every ui_remember call of the instance uses."""
        from core.cli import emit

        wb = ctx.wb
        emit(wb.profiles.activate(wb.settings.instance, name))
