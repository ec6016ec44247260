"""The use-case layer: everything a user can do, each one typed function `(wb, request) -> result`.

Front ends (the dashboard pages, the CLI, and the MCP and HTTP servers) parse their input into a
request, call one of these functions and render the result; they hold no behaviour of their own. So a
turn made from the command line is stored, scored, indexed and shown exactly like one from the Chat
page, or from a program that uses the core as a library. `docs/ARCHITECTURE.md` maps each use case to
the feature folder that implements it; the README's "Using the core from Python" shows a whole loop
(`tests/integration/test_library_use.py` runs it as written).

    from core import usecases as uc
    from core.runtime import Workbench

    with Workbench() as wb:
        result = uc.remember(wb, uc.UiRememberParams(thought="Where did I park?", chain_id="car"))

A refusal or a failure the core foresaw is a `core.errors.WorkbenchError` whose message says what to
do; an outage can also come as the client library's own error (`redis.RedisError`, `psycopg.Error`):
`core.errors.describe(exc, "cli")` words either kind as the CLI would.
"""

from typing import TYPE_CHECKING

from core.usecases.access import (CreatedKey, CreateKey, KeyRef, authenticate, create_key, keys_exist,
                                  list_keys, revoke_key)
from core.usecases.admin import (ChainDocument, ChainExport, ChainList, ChainRef, DemoLoad, DemoOutcome, MemoryRef,
                                 RecentRequest, ReembedResult, ServicesReport, chain, chain_delete, chain_export, chains,
                                 demo_load, demo_reset, hits_export, instance_names, instances, memory_browse,
                                 memory_delete, memory_export, memory_search, recent, reembed, services,
                                 stored_counts)
from core.usecases.archive import (ExportArchive, ExportResult, RestoreArchive, RestoreResult, export_archive,
                                   is_archive, restore_archive)
from core.usecases.bank import (BankAdd, BankQuery, BankRef, bank_add, bank_clear, bank_delete, bank_list,
                                bank_query, bank_snapshot, bank_stats, default_bank)
from core.usecases.base import InstanceRequest, Origin, Progress, Request
from core.usecases.conversation import (AnswerRestarts, Conversation, ConversationMessage, ConversationRef,
                                        SweepResult, Synthesising,
                                        UiRememberParams, UiRememberResult, conversation, mark_abandoned,
                                        remember, remember_stream, summarise_quiet_chains, sweep,
                                        sweep_instance, warm_up_in_background)
from core.usecases.importing import (ImportFile, ImportResult, discard_upload, import_file, import_preview,
                                     keep_upload, prune_uploads)
from core.usecases.formation import (FactHistory, FactHistoryRequest, FormationResult, FormationRun,
                                    HistoryFact, SupersededRequest, fact_history, formation_run,
                                    superseded_memories)
from core.usecases.memories import (AddedMemory, AddMemory, Forget, RateAnswer, RatingRecord, add_memory,
                                    forget, rate_answer)
from core.usecases.past_tasks import (EmbedPending, EmbedPendingResult, HistoryRequest, IngestedFile,
                                      IngestFiles, IngestTexts, ListTexts, MarkDeleted, PastTaskCatalogue,
                                      PastTaskQuery, TextFile, catalogue, embed_pending, ingest_files,
                                      ingest_texts, internal_memory, list_texts, mark_deleted,
                                      read_text_files, tool_history)
from core.usecases.retrieval import (ActivateProfile, CompareRequest, DeleteProfile, ProfileList, ProfileRef,
                                     RetrievalReport, RetrieveReportRequest, RetrieveRequest, SaveProfile,
                                     activate_profile, compare, delete_profile, get_profile, list_profiles,
                                     retrieval_report, retrieve_memory, save_profile, undo_activation)
from core.usecases.retrieval import ReadMessageParams, ReadMessageRequest, ReadMessageResult, read_message
from core.usecases.tuning import (ClearLabels, EvaluateRequest, MarkRelevance, OptimiseRequest, ReadDataset,
                                  SaveTuned, SideBySideRequest, TuneReport, TuneRequest, clear_labels, evaluate,
                                  evaluate_side_by_side, labelled_set, mark_relevance, optimise, read_dataset,
                                  save_tuned, tune, unknown_ids_note)

# Checks and lookups a front end needs beside the use cases above.
from core.usecases.admin import embedder_name, repair_redis, service_statuses, stop_services
from core.usecases.past_tasks import CheckedFiles, check_text_files, check_user_id, past_task_defaults
from core.limits import MESSAGE_MAX_CHARS, QUERY_MAX_CHARS, TITLE_FILTER_MAX_CHARS, limit_caption
from core.usecases.tuning import default_pool, evaluation_pool, locomo_sample_ids, pool_label
from core.retrieval.timeparse import read_window  # a window's bounds as written (feedback, past tasks)
from core.usecases.windows import read_answer_window  # the same, refused when it starts in the future

# What the front ends build requests from and render results with: models, defaults and constants.
from core.ids import ID_PATTERN, ID_RULE, SHARED_INSTANCE, USER_ID_PATTERN, validate_id
from core.usecases.access import LOCAL_USER, ApiKeyInfo, Principal, authorize
from core.usecases.admin import (BROWSE_EXPORT_MAX, ChainDetail, ChainPage, DeletionReport, ExplorerSearch,
                                 InstanceRow, MemoryBrowse, MemoryExport, MemoryPage, Overview, RedisRepair,
                                 SearchOutcome, ServicesStopped, ServiceStatus)
from core.usecases.bank import (DEFAULT_BANK, SUMMARY_SKILL, AddEntryResult, BankInfo, BankSnapshot,
                                MemoryEntry, MemoryQuery, StepContext, StepOutcome, TaskMemory)
from core.usecases.importing import (IMPORT_FORMATS, ImportCounts, ImportOutcome, ImportPreview,
                                     InvalidRecord)
from core.usecases.conversation import (ABANDON_AFTER_S, CATEGORY_ASSISTANT, CATEGORY_USER, ContextItem,
                                        FeedbackRecord, Thought, TurnMetrics)
from core.usecases.past_tasks import (DEFAULT_MAX_DISTANCE, DEFAULT_N_MAX, TEXT_SUFFIXES, IngestedText,
                                      InternalMemoryResult, PastTaskFilter, PastToolExecution, ProducedTextInput, SearchDefaults,
                                      StoredText, text_from_file)
from core.usecases.retrieval import (BEST_SHARE, CHAIN_WEIGHT, DEFAULT_FUSE_RATIOS, SPEAKER_WEIGHT, Activation, Comparison, FusionProfile, OpTrace, ScopeParams,
                                     ScopeResult, describe_profile, recency_label, relevance_weights)
from core.retrieval.memoryscope import ScopeMemory  # one of `retrieve_memory`'s memories: `.memory.content`, scores
from core.usecases.tuning import (DEFAULT_TAUS, EvalDataset, EvalReport, LabelledQuery, LabelledSet,
                                  OptimiseReport, default_locomo_path, is_evaluation_instance)

# The feedback analytics are imported on first use (`__getattr__` at the end), not here: they pull in
# pandas, a quarter of a second that every other command of the `workbench` CLI would wait for.
_ANALYTICS = ("AnswerSpan", "EXTRACTIVE_MODEL", "FeedbackExport", "FeedbackFilter", "FeedbackReport", "FeedbackSummary",
              "FeedbackWindow", "SummaryRequest", "Transcript", "TurnRef", "answers_csv", "apply_filter",
              "feedback_answers", "feedback_export", "feedback_span", "feedback_summary", "latency_table", "lowest_scored", "previous_window",
              "questions", "summarize", "summarize_by", "summarize_split", "transcript",
              "warm_feedback", "with_empty_periods")
if TYPE_CHECKING:  # the same names, for editors and type checkers
    from core.usecases.analytics import (
        EXTRACTIVE_MODEL,
        AnswerSpan,
        FeedbackExport,
        FeedbackFilter,
        FeedbackReport,
        FeedbackSummary,
        FeedbackWindow,
        SummaryRequest,
        Transcript,
        TurnRef,
        answers_csv,
        apply_filter,
        feedback_answers,
        feedback_export,
        feedback_span,
        feedback_summary,
        latency_table,
        lowest_scored,
        previous_window,
        questions,
        summarize,
        summarize_by,
        summarize_split,
        transcript,
        warm_feedback,
        with_empty_periods,
    )

__all__ = ["ABANDON_AFTER_S", "AnswerSpan", "CATEGORY_ASSISTANT", "CATEGORY_USER", "BEST_SHARE", "CHAIN_WEIGHT", "DEFAULT_BANK", "DEFAULT_FUSE_RATIOS",
           "DEFAULT_MAX_DISTANCE", "DEFAULT_N_MAX", "DEFAULT_TAUS", "EXTRACTIVE_MODEL", "IMPORT_FORMATS", "LOCAL_USER", "MESSAGE_MAX_CHARS", "QUERY_MAX_CHARS", "TITLE_FILTER_MAX_CHARS", "SHARED_INSTANCE", "ID_PATTERN", "ID_RULE", "USER_ID_PATTERN", "validate_id", "AnswerRestarts", "Synthesising",
           "SPEAKER_WEIGHT", "SUMMARY_SKILL",
           "TEXT_SUFFIXES", "ActivateProfile", "Activation", "AddEntryResult", "AddMemory", "AddedMemory", "ApiKeyInfo",
           "BankAdd",
           "BankInfo", "BankQuery", "BankRef", "BankSnapshot", "ChainDetail", "ChainDocument", "ChainExport", "CheckedFiles", "ChainList",
           "ChainPage", "ChainRef", "ClearLabels", "CompareRequest", "Comparison", "ContextItem", "Conversation",
           "ConversationMessage", "ConversationRef", "CreateKey", "CreatedKey", "DeleteProfile", "DeletionReport", "DemoLoad",
           "DemoOutcome",
           "EmbedPending", "EmbedPendingResult", "EvalDataset", "EvalReport", "EvaluateRequest",
           "ExplorerSearch", "ExportArchive", "ExportResult", "FactHistory", "FactHistoryRequest", "FeedbackExport", "FeedbackFilter", "FeedbackRecord", "FeedbackReport",
           "FeedbackSummary", "FeedbackWindow", "Forget", "FormationResult", "FormationRun", "FusionProfile",
           "HistoryFact", "HistoryRequest", "ImportCounts",
           "ImportFile", "ImportOutcome", "ImportPreview", "ImportResult", "IngestFiles", "IngestTexts",
           "IngestedFile", "IngestedText", "InstanceRequest", "InstanceRow",
           "InternalMemoryResult", "InvalidRecord", "KeyRef", "LabelledQuery", "LabelledSet", "ListTexts", "MarkDeleted", "MarkRelevance", "MemoryEntry", "MemoryQuery",
           "MemoryRef", "MemoryBrowse", "MemoryExport", "MemoryPage", "BROWSE_EXPORT_MAX",
           "OpTrace", "OptimiseReport", "OptimiseRequest", "Origin", "Overview", "PastTaskCatalogue",
           "PastTaskFilter", "PastTaskQuery", "PastToolExecution", "Principal", "ProducedTextInput", "ProfileList",
           "ProfileRef",
           "Progress", "RateAnswer", "RatingRecord", "ReadDataset", "ReadMessageParams", "ReadMessageRequest", "ReadMessageResult", "RecentRequest", "RedisRepair", "ReembedResult", "Request",
           "RestoreArchive", "RestoreResult", "RetrievalReport", "RetrieveReportRequest", "RetrieveRequest", "SaveProfile", "SaveTuned", "SideBySideRequest",
           "ScopeMemory", "ScopeParams", "ScopeResult", "SearchDefaults", "SearchOutcome", "ServiceStatus", "ServicesReport", "ServicesStopped", "StepContext", "StepOutcome", "StoredText",
           "SummaryRequest", "SupersededRequest", "SweepResult", "TaskMemory", "TextFile", "Thought", "Transcript", "TuneReport",
           "TuneRequest", "TurnMetrics", "TurnRef", "UiRememberParams", "UiRememberResult",
           "activate_profile", "add_memory", "answers_csv", "apply_filter", "authenticate", "authorize",
           "bank_add", "bank_clear",
           "bank_delete", "bank_list", "bank_query", "bank_snapshot", "bank_stats", "catalogue", "chain",
           "chain_delete", "chain_export", "chains", "check_text_files", "check_user_id", "clear_labels", "compare", "conversation",
           "create_key", "default_bank", "default_pool", "default_locomo_path", "delete_profile", "demo_load", "describe_profile", "demo_reset", "embed_pending",
           "embedder_name", "evaluate", "evaluation_pool", "evaluate_side_by_side", "export_archive", "fact_history", "feedback_answers", "feedback_export",
           "feedback_span", "feedback_summary", "forget", "formation_run",
           "get_profile", "import_file", "import_preview", "keep_upload", "discard_upload", "prune_uploads",
           "ingest_files", "ingest_texts", "instance_names", "instances", "internal_memory", "is_archive",
           "is_evaluation_instance",
           "keys_exist", "labelled_set", "latency_table", "limit_caption", "list_keys", "list_profiles", "list_texts", "locomo_sample_ids",
           "lowest_scored",
           "mark_abandoned", "mark_deleted", "mark_relevance", "memory_browse", "memory_delete", "memory_export", "memory_search", "hits_export", "optimise", "past_task_defaults", "pool_label", "previous_window",
           "questions",
           "rate_answer", "recency_label", "read_dataset", "relevance_weights", "read_message", "read_answer_window", "read_window", "read_text_files", "recent", "reembed", "remember", "remember_stream", "repair_redis",
           "restore_archive", "retrieval_report", "retrieve_memory", "revoke_key", "save_profile", "save_tuned",
           "service_statuses",
           "services", "stop_services", "stored_counts", "summarize", "summarize_by", "summarize_split", "superseded_memories", "sweep",
           "summarise_quiet_chains", "sweep_instance", "warm_up_in_background",
           "text_from_file", "tool_history", "transcript", "tune", "undo_activation", "unknown_ids_note", "warm_feedback",
           "with_empty_periods"]


def __getattr__(name: str) -> object:
    """The feedback analytics' names (`_ANALYTICS`), imported when first asked for."""
    if name not in _ANALYTICS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from core.usecases import analytics

    value = getattr(analytics, name)
    globals()[name] = value  # asked once: later lookups find it without coming here
    return value
