"""Watch cursors: sealed (encrypted and signed), bound to the log, the tenant and the
watch's agent ("" for a tenant-wide watch).

A cursor is ``base64url(nonce | ciphertext | tag)``: the payload (JSON) is XORed with
an HMAC-SHA256 keystream over the nonce and a counter, and the tag is HMAC-SHA256 of
nonce and ciphertext with another key, both keys derived from the page-token secret.
Encrypted because the payload holds the log's sequence number, which counts the
writes of every tenant of the daemon: a tenant must not read it. One message for a
forged, truncated, foreign (another tenant, agent or log) or future cursor: a cursor
leaked from another tenant is indistinguishable from garbage.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass

from memoryd.domain.errors import InvalidArgument
from memoryd.service.common.pagination import PageTokenCodec

FIELD = "cursor"
INVALID = "is not a cursor issued by this server for this tenant and watch"
_NONCE = 16
_TAG = 16


@dataclass(frozen=True, slots=True)
class Position:
    """Where a watch stands: after ``delivered`` changes of the entry ``seq`` (every
    change of it when ``delivered`` is None)."""

    seq: int
    delivered: int | None = None


@dataclass(frozen=True, slots=True)
class Binding:
    """What a cursor is valid for."""

    log_id: str
    tenant_id: str
    #: "" for a tenant-wide watch.
    agent_id: str


class CursorCodec:
    def __init__(self, codec: PageTokenCodec) -> None:
        self._cipher = codec.key_for("watch-cursor-cipher")
        self._signer = codec.key_for("watch-cursor-tag")

    def encode(self, position: Position, binding: Binding) -> str:
        payload = json.dumps(
            [binding.log_id, binding.tenant_id, binding.agent_id, position.seq, position.delivered],
            separators=(",", ":"),
        ).encode()
        nonce = secrets.token_bytes(_NONCE)
        sealed = nonce + _xor(payload, self._stream(nonce, len(payload)))
        tag = hmac.new(self._signer, sealed, hashlib.sha256).digest()[:_TAG]
        return base64.urlsafe_b64encode(sealed + tag).rstrip(b"=").decode("ascii")

    def decode(self, cursor: str, binding: Binding) -> Position:
        """The position ``cursor`` names; INVALID_ARGUMENT (field ``cursor``) unless it
        was issued for ``binding``."""
        try:
            raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        except (binascii.Error, ValueError):
            raise InvalidArgument.field(FIELD, INVALID) from None
        sealed, tag = raw[:-_TAG], raw[-_TAG:]
        expected = hmac.new(self._signer, sealed, hashlib.sha256).digest()[:_TAG]
        if len(sealed) <= _NONCE or not hmac.compare_digest(tag, expected):
            raise InvalidArgument.field(FIELD, INVALID)
        nonce, body = sealed[:_NONCE], sealed[_NONCE:]
        try:
            log_id, tenant, agent, seq, delivered = json.loads(
                _xor(body, self._stream(nonce, len(body)))
            )
        except (ValueError, TypeError):
            raise InvalidArgument.field(FIELD, INVALID) from None
        if [log_id, tenant, agent] != [binding.log_id, binding.tenant_id, binding.agent_id]:
            raise InvalidArgument.field(FIELD, INVALID)
        return Position(int(seq), None if delivered is None else int(delivered))

    def _stream(self, nonce: bytes, size: int) -> bytes:
        blocks = (size + 31) // 32
        return b"".join(
            hmac.new(self._cipher, nonce + i.to_bytes(4, "big"), hashlib.sha256).digest()
            for i in range(blocks)
        )[:size]


def _xor(data: bytes, stream: bytes) -> bytes:
    return bytes(a ^ b for a, b in zip(data, stream, strict=True))
