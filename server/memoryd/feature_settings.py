"""The feature sections of the settings (config.Settings): limits, keyed memory, recall,
sessions, snapshots, lifecycle and durability. Plain pydantic models with no behaviour
beyond their own checks; ``memoryd.config`` composes them and names them again."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, SecretStr, model_validator

from memoryd.domain.limits import MAX_TTL
from memoryd.domain.models import SecurityLevel
from memoryd.security.settings import Clearance

#: Reciprocal rank fusion's weights when unset: measured best there, recall_all@10 at
#: a vector weight of 1.0 / 0.5 / 0.3: 0.415 / 0.434 / 0.434, MRR 0.428 / 0.438 / 0.451
#: (at equal weights a paraphrase-level vector match outvoted an exact keyword match).
RRF_WEIGHTS = {"hybrid_vector_weight": 0.3, "hybrid_text_weight": 1.0}


class LimitsSettings(BaseModel):
    max_content_bytes: int = Field(8 * 1024, ge=1)
    max_batch_size: int = Field(1000, ge=1)
    max_top_k: int = Field(100, ge=1)
    max_page_size: int = Field(500, ge=1)
    max_tags: int = Field(32, ge=0)
    max_tag_bytes: int = Field(128, ge=1)
    max_metadata_bytes: int = Field(16 * 1024, ge=0)
    max_namespace_bytes: int = Field(256, ge=1)
    max_agent_id_bytes: int = Field(128, ge=1)
    max_request_bytes: int = Field(16 * 1024 * 1024, ge=1024)


class KeysSettings(BaseModel):
    """Keyed memory (SetMemory / GetKey / ListKeys / KeyHistory)."""

    #: UTF-8 bytes of a normalised key.
    max_key_bytes: int = Field(512, ge=2, le=4096)
    #: Not enforced any more (a long segment is shortened plus a hash in file paths);
    #: kept so that configuration files setting it still load.
    max_segment_bytes: int = Field(255, ge=1, le=4096)
    #: UTF-8 bytes of a key's content as compact JSON.
    max_content_bytes: int = Field(64 * 1024, ge=2)
    #: Keys held in the default-read index, over all partitions (about 1 KB each with
    #: their summaries); past it the least recently read partitions are dropped and
    #: reloaded on demand.
    read_index_max_entries: int = Field(250_000, ge=1)
    #: The live memory_root: every partition's keys as files (log.jsonl, index/,
    #: state.jsonl, as memoryctl export-tree writes them) under
    #: <mirror_dir>/<tenant>/<agent>/, for an agent's ls, grep, jq and cat. On unless
    #: turned off here; with a shared Qdrant store it is off unless asked for, and then
    #: refused (each replica's directory would hold only the keys it wrote).
    mirror: bool = True
    #: Where the memory_root is. Unset: <data_dir>/memory_root.
    mirror_dir: Path | None = None
    #: Keys above this level are not written to the mirror: whoever can read the
    #: directory reads what is in it.
    mirror_clearance: Clearance = SecurityLevel.INTERNAL
    #: When a key's long-term memory (its "mirror", found by recall and snapshots) is
    #: embedded: "behind" the answer, by a background pass that embeds the latest
    #: version of each key written since it last looked, every read of the agent's
    #: memories waiting for it (read-your-writes); or "before_answer", as every write
    #: of a store shared by replicas does whatever this says.
    mirror_embedding: Literal["behind", "before_answer"] = "behind"


class RecallSettings(BaseModel):
    default_limit: int = Field(10, ge=1)
    half_life_hours: float = Field(168.0, gt=0)
    similarity_weight: float = Field(0.6, ge=0)
    recency_weight: float = Field(0.2, ge=0)
    importance_weight: float = Field(0.2, ge=0)
    #: What recency counts from: "updated" (the last update) or "last_access" (the
    #: later of the last access and update: memories in use stay fresh).
    recency_basis: Literal["updated", "last_access"] = "updated"
    #: The preset of a Recall that names none (ScoringPreset): "blended" weighs
    #: recency and importance into the relevance, as the layered-memory design asks.
    default_preset: Literal[
        "blended", "relevance", "similarity", "decayed", "weighted", "layered"
    ] = "blended"
    #: The blended preset: score = (1 - r - i) * relevance + r * exp(-days since the
    #: last access (else update) / blend_decay_days) + i * importance. Chosen by
    #: bench/recency_sweep.py on REALTALK's dev chats and MemDaily (docs/quality.md).
    blend_recency_weight: float = Field(0.05, ge=0, le=1)
    blend_importance_weight: float = Field(0.05, ge=0, le=1)
    blend_decay_days: float = Field(30.0, gt=0)
    #: Whether Recall fuses full-text (BM25) and vector rankings when the request does
    #: not say (RecallRequest.hybrid unset). Chosen by bench/quality.py on REALTALK with
    #: the local model (2026-11-22, in-memory BM25): recall_all@10 / recall_any@10 / MRR
    #: hybrid 0.434 / 0.684 / 0.451, vector-only 0.329 / 0.555 / 0.334, BM25-only
    #: 0.417 / 0.659 / 0.450; hybrid also finds exact codes and names.
    hybrid_default: bool = True
    #: How hybrid recall fuses the vector and full-text searches. "convex": each
    #: candidate's cosine (min-max scaled) and BM25 score (over the best one's) mixed by
    #: the weights below; "rrf": reciprocal rank fusion. Convex keeps how much better a
    #: match is (REALTALK, issue 24: recall_all@10 dev 0.452 (rrf) -> 0.461).
    fusion: Literal["convex", "rrf"] = "convex"
    #: k of reciprocal rank fusion: score = sum of weight / (k + rank).
    rrf_k: float = Field(60.0, gt=0)
    #: Weights of the two rankings in the fusion. A weight of 0 drops that search
    #: altogether: hybrid_vector_weight=0 makes hybrid recall rank by BM25 alone
    #: (similarity is still computed and returned) - how bench/quality.py measures it.
    #: Unset: the embedder's (model_catalog.Profile, tuned per model on REALTALK's dev
    #: chats: MiniLM 1.0 / 1.0, e5 see E5_PROFILE), 0.3 / 1.0 with rrf.
    hybrid_vector_weight: float = Field(1.0, ge=0)
    hybrid_text_weight: float = Field(1.0, ge=0)
    #: Convex fusion scales the candidates' cosines by max(highest - lowest, this):
    #: a narrow spread (a small store, or no memory much closer than another) is not
    #: stretched to 0..1 (service/memories/hybrid.py). Unset: the embedder's (MiniLM
    #: 0.5; e5, whose cosines crowd into a narrow band, far less: at 0.5 its vector
    #: side was flattened and e5 gained nothing over MiniLM, issue 32).
    convex_min_spread: float = Field(0.5, ge=0, le=2)
    #: Context expansion of hybrid recall (service/memories/context.py), the default of
    #: RecallRequest.context_window: the turns this many steps before and after each of
    #: the ``context_seeds`` best candidates (of its session by sequence when it has one,
    #: else of its namespace by created_at) join the results just below it (relevance x
    #: ``context_discount`` per step); 0 (the default) turns it off. On REALTALK (e5,
    #: bench/context_expansion.py, 2026-11-29; window 1, 1 seed, discount 0.5, chosen on
    #: the dev chats) recall_all@10 gained 6 dev questions of 562 and 1 held-out of 134,
    #: lost none, MRR level: too little to change every client's results unasked (and a
    #: store that is no conversation would get its namespace neighbours), so it is
    #: opt-in, per request.
    context_neighbours: int = Field(0, ge=0, le=5)
    context_seeds: int = Field(1, ge=1, le=10)
    #: Chosen on REALTALK's dev chats (0.9 / 0.7 / 0.6 / 0.5 / 0.4 / 0.3: recall_all@10
    #: 0.487 / 0.493 / 0.491 / 0.498 / 0.493 / 0.487, off 0.487): a neighbour at 0.9 of
    #: its seed pushed found evidence out of the top 10 as often as it brought some in.
    context_discount: float = Field(0.5, gt=0, le=1)
    #: Neighbour support (service/memories/support.py): a hybrid candidate's relevance r
    #: becomes r + weight * s * (1 - r), s the best relevance of another candidate within
    #: ``neighbour_window`` turns of it in its session; 0 turns it off. Chosen on
    #: REALTALK's dev chats (bench/neighbour_support.py, e5, 2026-11-29; weight 0.1-0.7 x
    #: window 1-3, the best dev sum of recall_all@10, recall_any@10 and MRR among those
    #: that keep MemDaily): all chats 0.493 / 0.744 / 0.553 -> 0.496 / 0.760 / 0.556,
    #: held-out 0.515 / 0.821 / 0.572 -> 0.530 / 0.843 / 0.579; MemDaily level. A wider
    #: window found more on REALTALK but lifted whole MemDaily trajectories.
    neighbour_weight: float = Field(0.3, ge=0, le=1)
    neighbour_window: int = Field(1, ge=1, le=5)
    #: Pseudo-relevance feedback (service/memories/feedback.py): a second full-text search with
    #: the ``feedback_terms`` terms most particular to the ``feedback_seeds`` best
    #: candidates added, mixed into relevance with ``feedback_weight``; 0 terms: off.
    feedback_terms: int = Field(0, ge=0, le=20)
    feedback_seeds: int = Field(3, ge=1, le=10)
    feedback_weight: float = Field(0.3, ge=0, le=1)
    #: Time-aware recall (service/memories/temporal.py): a query naming a time ("yesterday",
    #: "on 29 Dec 2023", "上周三") favours memories whose event time (occurred_at, else
    #: created_at) falls in it, widened by the hours before and after; relevance
    #: becomes (1 - w) * relevance + w * temporal. 0 turns it off.
    temporal_weight: float = Field(0.3, ge=0, le=1)
    temporal_before_hours: float = Field(24.0, ge=0)
    temporal_after_hours: float = Field(48.0, ge=0)

    @model_validator(mode="after")
    def _one_ranking_counts(self) -> RecallSettings:
        if self.fusion == "rrf" and "hybrid_vector_weight" not in self.model_fields_set:
            # Left unset (not marked as set: a model's profile may still supply it).
            object.__setattr__(self, "hybrid_vector_weight", RRF_WEIGHTS["hybrid_vector_weight"])
        if self.hybrid_vector_weight == 0 and self.hybrid_text_weight == 0:
            raise ValueError("recall.hybrid_vector_weight and hybrid_text_weight are both 0")
        if self.blend_recency_weight + self.blend_importance_weight > 1:
            raise ValueError("recall.blend_recency_weight + blend_importance_weight exceed 1")
        return self


class DedupSettings(BaseModel):
    """Remember updates an existing memory instead of adding a duplicate (same
    partition, namespace and security level; never a keyed memory)."""

    #: Exact duplicates: same content after NFKC, casefolding and whitespace collapsing.
    enabled: bool = True
    #: Near duplicates: cosine similarity at or above this; 0 or above 1 disables them.
    #: Unset with the multilingual embedder: MULTILINGUAL_DEDUP_THRESHOLD.
    threshold: float = Field(0.95, ge=0)


class ContradictionSettings(BaseModel):
    """Remember archives an older memory that the new one supersedes or contradicts
    (memoryd.service.memories.contradiction): the newest memory about a subject wins."""

    #: "auto": the LLM judges when llm.url is set, else the rules; "rules"; "llm" (the
    #: rules when no LLM is configured or it fails); "off".
    mode: Literal["auto", "rules", "llm", "off"] = "auto"
    #: Stored memories judged per new memory: the closest at or above min_similarity
    #: (all-MiniLM-L6-v2: "I live in Paris" / "I moved to Berlin" 0.45, "I work at
    #: Google" / "I work for Microsoft now" 0.42).
    candidates: int = Field(5, ge=1, le=50)
    min_similarity: float = Field(0.35, ge=0, le=1)
    #: Rules: two values of a predicate that names no category ("prefers X") are of one
    #: kind when their embeddings' cosine is at least this (all-MiniLM-L6-v2: red /
    #: dark blue 0.64, green / red 0.70, tea / red 0.35). Unset with the multilingual
    #: embedder: 0.95 (e5's cosines crowd into 0.8-1.0: tea / red 0.85).
    value_similarity: float = Field(0.5, ge=0, le=1)
    #: Batches larger than this are judged by the rules even with an LLM (one call per
    #: new memory).
    llm_max_batch: int = Field(20, ge=0)


class McpSettings(BaseModel):
    """MCP over Streamable HTTP served by the daemon (memoryd/mcp/), off by default.
    Identity and TLS are the gRPC listener's (``auth``); the stdio bridge is
    ``memoryd mcp --address``."""

    #: host:port of the endpoint ("" : off), e.g. 127.0.0.1:8765.
    listen: str = ""
    #: The endpoint's path.
    path: str = Field("/mcp", pattern=r"^/[A-Za-z0-9._~/-]*$")
    #: The agent a tool call uses when it names none (its ``agent_id`` argument).
    default_agent: str = Field("default", min_length=1, max_length=128)


class WorkingMemorySettings(BaseModel):
    #: Largest working-memory object, as compact JSON.
    max_content_bytes: int = Field(64 * 1024, ge=1)
    #: Largest JSON Schema kept for a scope, as compact JSON.
    max_schema_bytes: int = Field(64 * 1024, ge=1)
    #: Longest thread_id / resource_id.
    max_scope_id_bytes: int = Field(256, ge=1)
    #: CPU time one schema check or validation may use (in a worker thread) before
    #: the write is refused (INVALID_ARGUMENT): a client schema must not hold the
    #: daemon's workers.
    schema_time_budget_ms: float = Field(250.0, gt=0, le=60_000)
    #: Schema CPU each tenant may use on average, per second of wall time (a token
    #: bucket refilled continuously). Past it the tenant's own schema-checked writes
    #: answer RESOURCE_EXHAUSTED until it refills; other tenants are not slowed.
    schema_cpu_ms_per_s: float = Field(100.0, gt=0, le=1000)
    #: How much schema CPU a tenant may save up and spend at once (at least one
    #: check's budget, schema_time_budget_ms).
    schema_cpu_burst_ms: float = Field(1000.0, gt=0, le=3_600_000)
    #: Schema checks of one tenant that may wait for a worker; more are refused
    #: (RESOURCE_EXHAUSTED) rather than queued towards their deadlines.
    schema_max_waiting: int = Field(16, ge=1, le=10_000)
    #: Worker processes schemas are evaluated in (started on first use, ~25 MB each):
    #: evaluations at once, one per tenant.
    schema_workers: int = Field(2, ge=1, le=64)
    #: The workers' niceness above the daemon's: when the CPU is short, requests are
    #: served before schemas are evaluated. Higher starves schema checks on a host
    #: busy with other work; 0 shares the CPU evenly.
    schema_worker_niceness: int = Field(5, ge=0, le=19)

    @model_validator(mode="after")
    def _burst_holds_one_check(self) -> WorkingMemorySettings:
        if self.schema_cpu_burst_ms < self.schema_time_budget_ms:
            raise ValueError(
                f"working_memory.schema_cpu_burst_ms ({self.schema_cpu_burst_ms:g}) must be at "
                f"least schema_time_budget_ms ({self.schema_time_budget_ms:g}): a tenant could "
                "never run a check that uses its whole budget"
            )
        return self


class ProfileSettings(BaseModel):
    #: Largest agent.md document.
    max_content_bytes: int = Field(64 * 1024, ge=1)


class SessionSettings(BaseModel):
    """Short-term memory: limits, expiry and when older turns are summarised."""

    #: A session expires this long after its last append (a request may set its own).
    ttl_s: float = Field(7 * 24 * 3600.0, gt=0, le=MAX_TTL.total_seconds())
    #: Messages one session may receive in total (RESOURCE_EXHAUSTED beyond).
    max_messages: int = Field(10_000, ge=1)
    max_message_bytes: int = Field(32 * 1024, ge=1)
    max_fixed_zone_entries: int = Field(32, ge=1)
    max_session_id_bytes: int = Field(256, ge=1)
    #: Compress when this many turns are kept verbatim...
    compress_threshold_messages: int = Field(30, ge=2)
    #: ...or when they take this share of context_budget_tokens.
    compress_token_ratio: float = Field(0.3, gt=0, le=1)
    context_budget_tokens: int = Field(8000, ge=16)
    #: Turns kept verbatim when older ones are folded into the summary.
    keep_recent_messages: int = Field(10, ge=0)
    summary_max_tokens: int = Field(512, ge=16)
    #: "auto": the local model's tokenizer when installed, else the estimate.
    token_counter: Literal["auto", "tokenizer", "estimate"] = "auto"
    #: At most this many memories extracted by EndSession (or by one summary).
    max_extracted_memories: int = Field(20, ge=1)
    #: Extract long-term memories from the turns folded into the summary whenever
    #: one is made (the layered-memory design's "when a context summary is made"),
    #: not only at EndSession: the users' fact sentences (an LLM: what it extracts).
    extract_on_summary: bool = True
    #: Tool results larger than this (UTF-8 bytes) are offloaded to an attachment,
    #: the message keeping a stub that names it; 0: never (a session may set its own).
    offload_bytes: int = Field(5 * 1024, ge=0)
    #: A tool result to be offloaded may be this large (others: max_message_bytes).
    max_attachment_bytes: int = Field(1024 * 1024, ge=1)
    #: Characters of an offloaded result its stub quotes.
    offload_preview_chars: int = Field(200, ge=0)
    #: The window joins consecutive messages of the same role and name (a session may
    #: set its own).
    merge_adjacent_messages: bool = False
    #: Static control: memories a window retrieves for the newest user message...
    long_term_memory_limit: int = Field(5, ge=1)
    #: ...within this share of the window's token budget.
    long_term_memory_token_ratio: float = Field(0.25, gt=0, le=1)

    @model_validator(mode="after")
    def _keep_fewer_than_threshold(self) -> SessionSettings:
        if self.keep_recent_messages >= self.compress_threshold_messages:
            raise ValueError(
                "sessions.keep_recent_messages must be below sessions.compress_threshold_messages"
            )
        return self


class LLMSettings(BaseModel):
    """The optional OpenAI-compatible chat endpoint (session summaries, extraction)."""

    #: Base URL, e.g. http://127.0.0.1:8080/v1; unset: no LLM (extractive summaries).
    url: str | None = None
    model: str = "gpt-4o-mini"
    api_key: SecretStr | None = None
    timeout_s: float = Field(30.0, gt=0)


class HistorySettings(BaseModel):
    """The memory history behind as-of reads (docs/as-of.md)."""

    #: Keep the memory history (off: as-of reads are UNIMPLEMENTED,
    #: and writes keep no after-images).
    enabled: bool = True
    #: Keep it in files under <data_dir>/as_of (one per agent), so reads as of an
    #: instant before a restart are answered as they were then; off: in process
    #: memory only, and a restart moves the horizon.
    persist: bool = True
    #: fsync the files before a write is answered (in groups: one fsync per file for
    #: every write waiting meanwhile): a power loss then loses no version of an
    #: answered write, at the cost of a second fsync per write after the log's. Off
    #: (the default: one fsync per write): written at once, so a restart or a SIGKILL
    #: loses nothing, and made durable by each log checkpoint (which syncs the data
    #: dir's file system before the log drops what it covers); a power loss may lose
    #: the versions of the writes since the last checkpoint.
    fsync: bool = False
    #: How far back a read may be answered as of: versions superseded before then are
    #: pruned by maintenance, and an older ``as_of`` is OUT_OF_RANGE. Key history
    #: older than maintenance.history_archive_after_days is archived to files and
    #: no longer read as of either.
    retention_hours: float = Field(72.0, gt=0)
    #: At most this many versions in all (memories, profiles, working memories and
    #: session records) held in process memory by the agents loaded (about a memory's
    #: size each, vectors shared): past it the oldest superseded versions
    #: go first, and the agents they were of can be read as of a later instant only
    #: (OUT_OF_RANGE names it), as if the retention were shorter for them.
    max_versions: int = Field(1_000_000, ge=1000)


class SnapshotSettings(BaseModel):
    """BuildSnapshot, DefaultRead and SaveState / LoadState (SnapshotService)."""

    #: BuildSnapshot's budget when the request leaves token_budget unset.
    default_token_budget: int = Field(500, ge=1)
    #: Largest token_budget (and DefaultRead token_limit) a request may ask for.
    max_token_budget: int = Field(100_000, ge=1)
    semantic_limit: int = Field(3, ge=1)
    recent_limit: int = Field(5, ge=1)
    recent_window_s: float = Field(24 * 3600.0, gt=0)
    #: Most memories the pinned section considers (tag "pinned"), most important first.
    max_pinned: int = Field(50, ge=1)
    #: DefaultRead's token_limit when the request leaves it unset.
    default_read_token_limit: int = Field(300, ge=1)
    #: Longest summary of one DefaultRead line, in characters.
    default_read_summary_chars: int = Field(160, ge=16)
    #: DefaultRead's ranking: recency_weight * 2^(-age / half_life) + importance_weight
    #: * importance + tag_weight * (share of the request's tags the key carries).
    default_read_recency_weight: float = Field(0.6, ge=0)
    default_read_importance_weight: float = Field(0.25, ge=0)
    default_read_tag_weight: float = Field(0.15, ge=0)
    default_read_half_life_hours: float = Field(24.0, gt=0)
    #: Largest saved state component (compact JSON), and components per session.
    max_state_bytes: int = Field(256 * 1024, ge=2)
    max_state_components: int = Field(64, ge=1)
    max_state_name_bytes: int = Field(128, ge=1)


class ConsolidationSettings(BaseModel):
    """Consolidate (and maintenance, when enabled): groups of related older memories
    condensed into one derived memory each; the originals are archived, not deleted."""

    #: Run in every maintenance run (RunMaintenance's consolidate overrides it).
    enabled: bool = False
    #: Only memories neither updated nor accessed for this many days.
    min_age_days: int = Field(30, ge=0, le=36_500)
    #: Groups with fewer memories are left alone.
    min_group_size: int = Field(5, ge=2)
    #: Memories per derived memory (a larger group makes several).
    max_group_size: int = Field(50, ge=2)
    #: Untagged memories group with their neighbours at this cosine or above.
    cluster_similarity: float = Field(0.75, gt=0, le=1)
    #: Older memories clustered per run (the oldest first): clustering is pairwise.
    max_cluster_candidates: int = Field(2000, ge=2)
    #: Summarise a group with the LLM when one is configured (else: merge).
    use_llm: bool = True


class CompressionSettings(BaseModel):
    """The layered-memory design's compression (seed 001, compress_old_memories), in
    every maintenance run: memories neither updated nor accessed for ``min_age_days``
    and accessed fewer than ``max_access_count`` times, grouped by memory type; a group
    of ``min_group_size`` or more becomes 1 to ``max_parts`` condensed memories (the LLM's
    summary when configured, else service/lifecycle/condense.py: near-identical
    statements merged, superseded values dropped, distinct facts kept). The originals
    are archived and UndoConsolidation restores them."""

    enabled: bool = True
    min_age_days: int = Field(90, ge=0, le=36_500)
    max_access_count: int = Field(5, ge=1)
    min_group_size: int = Field(3, ge=2)
    max_parts: int = Field(3, ge=1)


class MaintenanceSettings(BaseModel):
    """RunMaintenance / Compact defaults and the daemon's maintenance schedule."""

    #: Run maintenance on a schedule, one partition at a time.
    enabled: bool = True
    #: Seconds between scheduled runs, each shifted by up to +-jitter of it.
    interval_s: float = Field(3600.0, gt=0)
    jitter: float = Field(0.1, ge=0, lt=1)
    #: Seconds after start before the first scheduled run.
    initial_delay_s: float = Field(300.0, ge=0)
    #: Live (unarchived) memories an agent keeps; the lowest-scored excess is archived.
    #: None (the default) archives nothing: a memory store should not hide memories
    #: unless asked to (RunMaintenance's max_entries asks for one run).
    max_entries: int | None = Field(None, ge=1)
    #: Delete memories created more than this many days ago; None keeps them.
    retention_days: int | None = Field(None, ge=1, le=36_500)
    #: Tag groups with more live memories than this are checked for near-duplicates.
    merge_group_threshold: int = Field(50, ge=2)
    #: A tag group (one namespace and security level) with more live memories than
    #: this is condensed in every maintenance run, whatever their age (seed 003's
    #: compaction_threshold): the consolidation of that tag, originals archived and
    #: restorable with UndoConsolidation. None: off.
    tag_compaction_threshold: int | None = Field(50, ge=2)
    #: Cosine similarity for merging; None: the remember-time dedup.threshold.
    merge_similarity: float | None = Field(None, gt=0, le=1)
    #: Records per store write (and per id lookup) of lifecycle operations; requests
    #: run between batches. LanceDB's merge costs grow with the table, not the batch:
    #: fewer, bigger batches rewrite faster (50k of 100k rows: 28 s at 500, 18 s at 5000).
    batch_size: int = Field(1000, ge=1, le=10_000)
    #: Key history: "keep" keeps every write; "archive" moves writes older than
    #: history_archive_after_days (except each key's latest) to dated JSONL files
    #: under <data_dir>/history/ when compacting.
    history_policy: Literal["keep", "archive"] = "keep"
    history_archive_after_days: int = Field(90, ge=1)
    consolidation: ConsolidationSettings = Field(default_factory=ConsolidationSettings)
    compression: CompressionSettings = Field(default_factory=CompressionSettings)


class DurabilitySettings(BaseModel):
    """The write-ahead log (memoryd/durability); docs/durability.md."""

    #: Off: writes go straight to the store (acknowledged writes may be lost on a crash).
    wal_enabled: bool = True
    #: Directory of the log; None: <data_dir>/wal.
    wal_dir: Path | None = None
    segment_mb: int = Field(64, ge=1)
    #: The change feed (Watch, docs/watch.md) reads the log: this much of it (MiB,
    #: the newest segments) is kept past the checkpoint; a cursor older than what is
    #: kept is expired. Whole segments are deleted, so up to ``segment_mb`` more is
    #: kept. 0: only what replay needs (a cursor survives only while its changes wait).
    feed_retention_mb: int = Field(64, ge=0)
    #: How often the store's files are synced and the applied checkpoint advanced.
    checkpoint_interval_s: float = Field(1.0, gt=0)
    #: Longest wait between attempts to apply logged writes to a failing store.
    store_retry_max_s: float = Field(5.0, gt=0)
    #: Memories a memory write may leave to be applied after it is acknowledged (it
    #: is in the fsynced log and reads overlay it); past this a write waits for its
    #: apply. None: 16,384 on LanceDB, 0 on Qdrant, whose other replicas read the store
    #: directly. 0: every write is applied before it is acknowledged.
    apply_behind: int | None = Field(None, ge=0)
    #: How long the background apply of such writes waits for more to join its one
    #: store commit (group commit: each LanceDB commit costs ~10 ms of CPU, taken
    #: from the embedding model and the requests on a small machine; half a pass's
    #: worth of writes starts it at once). No read waits for it: reads overlay the
    #: log or apply it at once. 0: apply as soon as a write is logged. At 1 s a lone
    #: SetMemory writer cost the daemon 7 ms of CPU per write against 16 ms at 0.1 s
    #: (issue 31: three LanceDB commits per pass).
    apply_delay_ms: float = Field(1000.0, ge=0, le=10_000)
