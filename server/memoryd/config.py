"""The one settings object: defaults < YAML file (--config) < MEMORYD_* environment.

Built once in main() and passed down; nothing reads settings at import time.
Nested values use a double underscore in the environment, for example
``MEMORYD_LIMITS__MAX_CONTENT_BYTES=16384`` or ``MEMORYD_EMBEDDING__OPENAI_URL=...``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, PrivateAttr, SecretStr, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)

from memoryd.embedding.settings import EmbeddingSettings
from memoryd.feature_settings import (
    RRF_WEIGHTS,
    CompressionSettings,
    ConsolidationSettings,
    ContradictionSettings,
    DedupSettings,
    DurabilitySettings,
    HistorySettings,
    KeysSettings,
    LimitsSettings,
    LLMSettings,
    MaintenanceSettings,
    McpSettings,
    ProfileSettings,
    RecallSettings,
    SessionSettings,
    SnapshotSettings,
    WorkingMemorySettings,
)
from memoryd.model_catalog import (
    DEFAULT_EMBEDDER,
    EmbedderKind,
    Profile,
    canonical_kind,
    profile_of,
)
from memoryd.observability.settings import LoggingSettings, MetricsSettings, TracingSettings
from memoryd.resilience.settings import ResilienceSettings
from memoryd.security.settings import (
    AuditSettings,
    AuthSettings,
    MaskingSettings,
    QuotaSettings,
    SidecarSettings,
)
from memoryd.storage.settings import StorageSettings

#: The sections defined next to the code they configure are named here too, so that
#: ``memoryd.config`` stays the one place every setting is reached from.
__all__ = [
    "CompressionSettings",
    "ConsolidationSettings",
    "ContradictionSettings",
    "DedupSettings",
    "DurabilitySettings",
    "EmbedderKind",
    "EmbeddingSettings",
    "HistorySettings",
    "KeysSettings",
    "LLMSettings",
    "LimitsSettings",
    "LoggingSettings",
    "MaintenanceSettings",
    "McpSettings",
    "MetricsSettings",
    "ProfileSettings",
    "RecallSettings",
    "ResilienceSettings",
    "SessionSettings",
    "Settings",
    "SidecarSettings",
    "SnapshotSettings",
    "TracingSettings",
    "WorkingMemorySettings",
]

#: The memory_root's directory in the data dir when keys.mirror_dir is unset.
MEMORY_ROOT_DIR = "memory_root"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="MEMORYD_",
        env_nested_delimiter="__",
        extra="forbid",
    )

    #: host:port, or unix:/path/to.sock
    listen: str = "127.0.0.1:50051"
    data_dir: Path = Path("data")
    #: e5 (the default: e5-small-v2 int8, fetched at setup) | minilm (all-MiniLM-L6-v2
    #: from PyPI, no fetch; "local" is its former name) | multilingual | openai |
    #: hashing. Unset, a data directory whose vectors another model made keeps that
    #: model (app.py: the recorded one, with a warning saying how to move).
    embedder: EmbedderKind = DEFAULT_EMBEDDER
    #: Seconds in-flight calls get to finish on SIGTERM.
    shutdown_grace_s: float = Field(10.0, ge=0)
    #: Secret for signing page tokens; generated per data dir when unset.
    page_token_secret: SecretStr | None = None

    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    storage: StorageSettings = Field(default_factory=StorageSettings)
    limits: LimitsSettings = Field(default_factory=LimitsSettings)
    recall: RecallSettings = Field(default_factory=RecallSettings)
    dedup: DedupSettings = Field(default_factory=DedupSettings)
    contradictions: ContradictionSettings = Field(default_factory=ContradictionSettings)
    keys: KeysSettings = Field(default_factory=KeysSettings)
    sidecar: SidecarSettings = Field(default_factory=SidecarSettings)
    logging: LoggingSettings = Field(default_factory=LoggingSettings)
    metrics: MetricsSettings = Field(default_factory=MetricsSettings)
    tracing: TracingSettings = Field(default_factory=TracingSettings)
    mcp: McpSettings = Field(default_factory=McpSettings)
    #: Who callers are (sidecar | api_key | mtls) and TLS; see docs/security.md.
    auth: AuthSettings = Field(default_factory=AuthSettings)
    quotas: QuotaSettings = Field(default_factory=QuotaSettings)
    audit: AuditSettings = Field(default_factory=AuditSettings)
    masking: MaskingSettings = Field(default_factory=MaskingSettings)
    working_memory: WorkingMemorySettings = Field(default_factory=WorkingMemorySettings)
    profile: ProfileSettings = Field(default_factory=ProfileSettings)
    sessions: SessionSettings = Field(default_factory=SessionSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    snapshot: SnapshotSettings = Field(default_factory=SnapshotSettings)
    history: HistorySettings = Field(default_factory=HistorySettings)
    maintenance: MaintenanceSettings = Field(default_factory=MaintenanceSettings)
    durability: DurabilitySettings = Field(default_factory=DurabilitySettings)
    resilience: ResilienceSettings = Field(default_factory=ResilienceSettings)
    #: The model-dependent settings the configuration set itself ("section.field").
    _explicit: frozenset[str] = PrivateAttr(default=frozenset())

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        yaml_file = settings_cls.model_config.get("yaml_file")
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        if yaml_file:
            sources.append(YamlConfigSettingsSource(settings_cls))
        return tuple(sources)

    @classmethod
    def load(cls, config_file: Path | None = None, **overrides: Any) -> Settings:
        """Build the settings from an optional YAML file, the environment and overrides."""
        if config_file is None:
            return cls(**overrides)
        if not config_file.is_file():
            raise FileNotFoundError(f"config file not found: {config_file}")

        class FileSettings(cls):  # type: ignore[valid-type,misc]
            model_config = SettingsConfigDict(**{**cls.model_config, "yaml_file": config_file})

        settings: Settings = FileSettings(**overrides)
        return settings

    @field_validator("embedder", mode="after")
    @classmethod
    def _current_name(cls, kind: EmbedderKind) -> EmbedderKind:
        return "minilm" if kind == "local" else kind

    @model_validator(mode="after")
    def _embedder_is_configured(self) -> Settings:
        if self.embedder == "openai" and self.embedding.openai_dimension is None:
            raise ValueError(
                "embedding.openai_dimension (MEMORYD_EMBEDDING__OPENAI_DIMENSION) is required "
                "with the openai embedder: the store needs it before the first write"
            )
        self._explicit = frozenset(_explicit_fields(self))
        _apply_profile(self, profile_of(self.embedder), self._explicit)
        return self

    def with_embedder(self, kind: EmbedderKind) -> Settings:
        """These settings with another embedder, and that model's defaults in every
        setting the configuration left unset (model_catalog.Profile)."""
        copy = self.model_copy(deep=True)
        copy.embedder = canonical_kind(kind)  # type: ignore[assignment]
        _apply_profile(copy, profile_of(kind), self._explicit)
        return copy

    @model_validator(mode="after")
    def _shared_store_is_not_cached(self) -> Settings:
        if not (self.storage.backend == "qdrant" and self.storage.qdrant.is_shared):
            return self
        single = "(set storage.qdrant.shared=false for a single replica)"
        if self.storage.hot_cache.enabled:
            raise ValueError(
                "storage.hot_cache.enabled cannot be used with a shared Qdrant store: other "
                f"replicas' writes would not be in it {single}"
            )
        asked = self.keys.mirror and (
            "mirror" in self.keys.model_fields_set or self.keys.mirror_dir is not None
        )
        if asked:
            raise ValueError(
                "keys.mirror (the memory_root) cannot be used with a shared Qdrant store: "
                f"each replica's directory would hold only the keys it wrote {single}"
            )
        return self

    def memory_root(self) -> Path | None:
        """Where the live memory_root of keyed memory is written (keys.mirror_dir, else
        <data_dir>/memory_root); None when it is off (keys.mirror false, or a shared
        Qdrant store that did not ask for it)."""
        shared = self.storage.backend == "qdrant" and self.storage.qdrant.is_shared
        if not self.keys.mirror or shared:
            return None
        return self.keys.mirror_dir or self.data_dir / MEMORY_ROOT_DIR

    def masked(self) -> dict[str, Any]:
        """The effective config as plain data, secrets masked (for `memoryd config show`)."""
        return self.model_dump(mode="json")


#: The settings a model's profile supplies when unset: (section path, field, profile field).
_PROFILED = (
    (("recall",), "convex_min_spread", "convex_min_spread"),
    (("recall",), "hybrid_vector_weight", "vector_weight"),
    (("recall",), "hybrid_text_weight", "text_weight"),
    (("dedup",), "threshold", "dedup_threshold"),
    (("contradictions",), "min_similarity", "contradiction_similarity"),
    (("contradictions",), "value_similarity", "value_similarity"),
    (("maintenance", "consolidation"), "cluster_similarity", "cluster_similarity"),
)


def _section(settings: Settings, path: tuple[str, ...]) -> BaseModel:
    section: BaseModel = settings
    for name in path:
        section = getattr(section, name)
    return section


def _explicit_fields(settings: Settings) -> set[str]:
    return {
        ".".join((*path, name))
        for path, name, _ in _PROFILED
        if name in _section(settings, path).model_fields_set
    }


def _apply_profile(settings: Settings, profile: Profile, explicit: frozenset[str]) -> None:
    for path, name, source in _PROFILED:
        if ".".join((*path, name)) in explicit:
            continue
        value = getattr(profile, source)
        if path == ("recall",) and name in RRF_WEIGHTS and settings.recall.fusion == "rrf":
            value = RRF_WEIGHTS[name]
        # Not marked as set: with_embedder applies another model's profile over it.
        object.__setattr__(_section(settings, path), name, value)


def _env_names(model: type[BaseModel], prefix: str) -> set[str]:
    """Every environment variable name that sets a field of ``model`` (or a section)."""
    names: set[str] = set()
    for name, info in model.model_fields.items():
        env = f"{prefix}{name.upper()}"
        names.add(env)
        section = info.annotation
        if isinstance(section, type) and issubclass(section, BaseModel):
            names |= _env_names(section, f"{env}__")
    return names


def unknown_env_vars(environ: Mapping[str, str]) -> list[str]:
    """``MEMORYD_*`` variables that set nothing: pydantic-settings ignores them
    silently, so a typo (MEMORYD_STORAGE__BACKEN=qdrant) would go unnoticed."""
    prefix = str(Settings.model_config.get("env_prefix", ""))
    known = _env_names(Settings, prefix)
    return sorted(k for k in environ if k.upper().startswith(prefix) and k.upper() not in known)
