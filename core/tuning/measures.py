"""What an evaluation's figures measure, in the words every front end shows beside them (`workbench eval
--help` and its output, the Tune page's tooltips and captions): one text, so the CLI and the page cannot
say different things. Text only, without imports: `workbench eval --help` reads it before anything loads.
"""

from __future__ import annotations

# The ranking scored: what `core.retrieval.hybrid.hybrid_search` returns, the order ui_remember (chat) puts
# its context in. MemoryScope's fuse_rerank reorders that list afterwards (type ratios, time ratio, score
# threshold); `workbench retrieve` and the Tune page's "MemoryScope output" show that other order.
RANKING = ("the fusion ranking that ui_remember (chat) uses, before MemoryScope's fuse_rerank (its type "
           "ratios, time ratio and score threshold change no figure)")

# What an agent gets: retrieve_memory's final memories (MCP `retrieve_memory`, HTTP /retrieve, `workbench
# retrieve`), fuse_rerank applied, scored by `core.tuning.evaluate.evaluate_memoryscope` when asked for.
SCOPE_LABEL = "retrieve_memory's output (MemoryScope, after fuse_rerank): what an agent gets"
SCOPE_SURFACES = "MCP retrieve_memory, HTTP /retrieve and `workbench retrieve`"
SCOPE_HOW = ("the fusion ranking's top_k reordered by fuse_rerank (type ratios, time ratio, score threshold), its "
             "first output_memory_max_count kept; scored at the cut-offs up to the most it returns")
SCOPE_RANKING = f"{SCOPE_LABEL} from {SCOPE_SURFACES}: {SCOPE_HOW}"

# What chat hands over: ui_remember asks for k memories, then hands none when no relevance reaches the floor,
# else those reaching half of it and 0.35 of the best's relevance, or the floor itself beside a best stating the
# attribute the query asks (`core.retrieval.ranking.above_floor`).
# Shown beside the ranking's figures, as "handed recall@k".
HANDED = ("handed recall@k: the share of a query's relevant ids a chat turn asking for k memories hands to "
          "synthesis: its own search for k (max(10, 2k) candidates a leg, as chat draws them, where the ranking "
          "above draws the pool size), none when no memory's relevance reaches the relevance floor "
          "(RELEVANCE_FLOOR), else those reaching half of it and 0.35 of the best's relevance (the floor itself "
          "beside a best stating the attribute the query asks, of whom it asks it), as ui_remember leaves the "
          "others out of its context. \"handed@k\": how many memories it hands over, on average")


def handed_label(floor: float) -> str:
    """The plain label of the handed figures: "handed to chat: floor 0.33 applied"."""
    return f"handed to chat: floor {floor:.2f} applied"


# Each metric family, for tooltips and help texts (`core.tuning.metrics.metric_from_hits` has the formulas).
DEFINITIONS = {
    "recall": ("recall@k: the share of a query's relevant ids found in its top k (2 relevant, 1 found: 0.5), "
               "not the hit rate"),
    "ndcg": ("nDCG@k: binary gains (a relevant id counts 1, any other 0), each divided by log2(rank + 1), "
             "summed over the top k and divided by the same sum for the best order (every relevant id first)"),
    "mrr": ("MRR@k: 1/rank of the first relevant id when it is in the top k, else 0. The table's MRR is cut at "
            "its largest k (mrr@25 by default); the optimiser's metric \"mrr\" without @k is not cut (the "
            "whole candidate pool)"),
}
MEAN = "Each figure is the mean over the queries (a query with no relevant id is left out)."


def definition(metric: str) -> str:
    """The definition of `metric` ("recall@5", "ndcg@10", "mrr@25", "mrr"); "" for another name."""
    return DEFINITIONS.get(metric.split("@")[0].strip().lower(), "")


def all_definitions(sep: str = "\n") -> str:
    """Every definition, then how they are averaged, one per line (or joined by `sep`)."""
    return sep.join([*DEFINITIONS.values(), MEAN])


def help_paragraphs() -> list[str]:
    """What `workbench eval --help` says of its figures: the ranking scored, what chat hands over of it,
    then each metric."""
    ranking = f"Figures are scored on {RANKING}; `workbench retrieve` shows MemoryScope's output, in its own order."
    scope = (f"With --memoryscope, also {SCOPE_RANKING}, with the op parameters --param gives (the defaults an "
             "agent gets otherwise).")
    return [ranking, HANDED, scope, *DEFINITIONS.values(), MEAN]
