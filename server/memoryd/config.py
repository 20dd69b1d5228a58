"""The one settings object: defaults < YAML file (--config) < MEMORYD_* environment.

Built once in main() and passed down; nothing reads settings at import time.
Nested values use a double underscore in the environment, for example
``MEMORYD_LIMITS__MAX_CONTENT_BYTES=16384`` or ``MEMORYD_EMBEDDING__OPENAI_URL=...``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, SecretStr, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)

from memoryd.domain.models import SecurityLevel

EmbedderKind = Literal["local", "openai", "hashing"]
StoreBackend = Literal["lancedb", "memory"]


class EmbeddingSettings(BaseModel):
    """Options of the embedders; which one is used is ``Settings.embedder``."""

    #: onnxruntime intra-op threads for the local model (bounded: the daemon shares cores).
    local_threads: int = Field(2, ge=1, le=64)
    #: Largest batch sent to the model in one call.
    max_batch_size: int = Field(64, ge=1, le=4096)
    #: Texts longer than this many tokens are truncated by the local model.
    local_max_tokens: int = Field(256, ge=8, le=512)
    openai_url: str = "http://127.0.0.1:8080/v1"
    openai_api_key: SecretStr | None = None
    openai_model: str = "text-embedding-3-small"
    #: Expected output dimension of the OpenAI-compatible endpoint (checked on first call).
    openai_dimension: int | None = None
    openai_timeout_s: float = Field(10.0, gt=0)
    hashing_dimension: int = Field(384, ge=16, le=8192)
    #: Entries in the content-hash embedding cache (0 disables it).
    cache_size: int = Field(10_000, ge=0)


class StorageSettings(BaseModel):
    backend: StoreBackend = "lancedb"
    #: Concurrent writes are coalesced into one store write of at most this many records.
    write_batch_max: int = Field(1024, ge=1)
    #: How often buffered access statistics are flushed to the store.
    access_flush_interval_s: float = Field(5.0, gt=0)
    access_flush_max_pending: int = Field(1000, ge=1)


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


class RecallSettings(BaseModel):
    default_limit: int = Field(10, ge=1)
    half_life_hours: float = Field(168.0, gt=0)
    similarity_weight: float = 0.6
    recency_weight: float = 0.2
    importance_weight: float = 0.2


class SidecarSettings(BaseModel):
    """The principal every caller of a sidecar listener acts as."""

    tenant_id: str = "default"
    #: Agents the sidecar may act for; ["*"] means any.
    agents: list[str] = Field(default_factory=lambda: ["*"])
    clearance: SecurityLevel = SecurityLevel.RESTRICTED


class LoggingSettings(BaseModel):
    level: Literal["debug", "info", "warning", "error"] = "info"
    #: "auto": JSON unless stderr is a terminal.
    format: Literal["auto", "json", "console"] = "auto"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="MEMORYD_",
        env_nested_delimiter="__",
        extra="forbid",
    )

    #: host:port, or unix:/path/to.sock
    listen: str = "127.0.0.1:50051"
    data_dir: Path = Path("data")
    embedder: EmbedderKind = "local"
    #: Seconds in-flight calls get to finish on SIGTERM.
    shutdown_grace_s: float = Field(10.0, ge=0)
    #: Secret for signing page tokens; generated per data dir when unset.
    page_token_secret: SecretStr | None = None

    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    storage: StorageSettings = Field(default_factory=StorageSettings)
    limits: LimitsSettings = Field(default_factory=LimitsSettings)
    recall: RecallSettings = Field(default_factory=RecallSettings)
    sidecar: SidecarSettings = Field(default_factory=SidecarSettings)
    logging: LoggingSettings = Field(default_factory=LoggingSettings)

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

    @model_validator(mode="after")
    def _embedder_is_configured(self) -> Settings:
        if self.embedder == "openai" and self.embedding.openai_dimension is None:
            raise ValueError(
                "embedding.openai_dimension (MEMORYD_EMBEDDING__OPENAI_DIMENSION) is required "
                "with the openai embedder: the store needs it before the first write"
            )
        return self

    def masked(self) -> dict[str, Any]:
        """The effective config as plain data, secrets masked (for `memoryd config show`)."""
        return self.model_dump(mode="json")
