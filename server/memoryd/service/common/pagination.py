"""Opaque page tokens: signed, and bound to the caller (principal and partition) and the query.

A token is base64url(JSON payload) + "." + base64url(HMAC-SHA256). The payload holds
the keyset cursor and a fingerprint of (partition, query); a token replayed for
another partition or another query is rejected like a forged one.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memoryd.domain.errors import InvalidArgument
from memoryd.domain.models import PageCursor, Partition
from memoryd.domain.principal import CallScope

_FIELD = "page_token"
INVALID_TOKEN = "is not a page token issued for this query and caller"
#: Pages in key order (ListKeys, KeyHistory) read this many records per store call
#: while filling a page, twice as many each further call up to the most (records a
#: page does not show, above the caller's clearance, are skipped: it may take several).
KEY_FETCH_MIN, KEY_FETCH_MAX = 64, 1000
#: The time of a key-order cursor: its position is the key alone.
_KEY_ORDER_TIME = datetime(1970, 1, 1, tzinfo=UTC)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def fingerprint(owner: CallScope | Partition, query: Any) -> str:
    """Stable digest of who asks and what; ``query`` must be JSON-serialisable.

    Pass the CallScope: the token is then bound to the principal as well as the
    partition (a Partition alone binds only the partition)."""
    if isinstance(owner, CallScope):
        who = [owner.partition.tenant_id, owner.partition.agent_id, owner.principal.name]
    else:
        who = [owner.tenant_id, owner.agent_id]
    body = json.dumps([*who, query], sort_keys=True, default=str).encode()
    return hashlib.sha256(body).hexdigest()[:32]


class PageTokenCodec:
    def __init__(self, secret: bytes) -> None:
        if len(secret) < 16:
            raise ValueError("page token secret must be at least 16 bytes")
        self._secret = secret

    @classmethod
    def from_data_dir(cls, data_dir: Path) -> PageTokenCodec:
        """Use (or create, mode 0600) the data dir's secret so tokens survive restarts."""
        path = data_dir / "page_token.key"
        if not path.exists():
            data_dir.mkdir(parents=True, exist_ok=True)
            path.write_bytes(secrets.token_bytes(32))
            path.chmod(0o600)
        return cls(path.read_bytes())

    def key_for(self, purpose: str) -> bytes:
        """A key of its own for ``purpose`` (another kind of token), derived from the
        secret: a token of one kind never verifies as another."""
        return hmac.new(self._secret, b"memoryd-key:" + purpose.encode(), hashlib.sha256).digest()

    def _sign(self, payload: bytes) -> bytes:
        return hmac.new(self._secret, payload, hashlib.sha256).digest()

    def encode(self, cursor: PageCursor, query_fingerprint: str) -> str:
        payload = json.dumps(
            {"t": cursor.created_at.isoformat(), "i": cursor.id, "q": query_fingerprint},
            separators=(",", ":"),
        ).encode()
        return f"{_b64(payload)}.{_b64(self._sign(payload))}"

    def encode_key(self, key: str, query_fingerprint: str) -> str:
        """The token of the page after ``key``, of a listing in key order."""
        return self.encode(PageCursor(_KEY_ORDER_TIME, key), query_fingerprint)

    def decode_key(self, token: str, query_fingerprint: str) -> str:
        """The key an ``encode_key`` token's page follows."""
        return self.decode(token, query_fingerprint).id

    def decode(self, token: str, query_fingerprint: str) -> PageCursor:
        try:
            body, signature = token.split(".", 1)
            payload = _unb64(body)
            valid = hmac.compare_digest(_unb64(signature), self._sign(payload))
        except ValueError:
            valid = False
        # One message for forged, foreign and mismatched tokens: a token leaked from
        # another caller must be indistinguishable from garbage.
        if not valid:
            raise InvalidArgument.field(_FIELD, INVALID_TOKEN)
        data = json.loads(payload)
        if data.get("q") != query_fingerprint:
            raise InvalidArgument.field(_FIELD, INVALID_TOKEN)
        return PageCursor(created_at=datetime.fromisoformat(data["t"]), id=str(data["i"]))
