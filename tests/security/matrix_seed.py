"""The operation matrix's world: six principals, personal data seeded by an admin into
every kind of record of an agent, and how a response is checked for it.

Every seeded text carries an email, a phone number and the marker ``Zebracorn``:
memory content, metadata, tags and source locator, a keyed content_json under a key
path holding the email, working memory, the profile, session messages and the fixed
zone, saved state, and a file of the memory tool. What the cases write themselves
carries a second email and phone (and the marker ``Okapi``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf import text_format, timestamp_pb2
from google.protobuf.message import Message

from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import snapshot_service_pb2 as spb
from tests.security.support import KeySpec, Rpc, all_rpcs, invoke

EMAIL, PHONE, MARK = "alice@example.com", "+1 415-555-0100", "Zebracorn"
EMAIL2, PHONE2, MARK2 = "bob@example.org", "+44 20 7946 0958", "Okapi"
#: What a masked text must not show (the phone rule masks the whole number).
RAW = (EMAIL, "415-555-0100", EMAIL2, "7946 0958")
PLACEHOLDERS = ("[email]", "[phone]")

_RO, _RW, _ALL = ("read",), ("read", "write"), ("read", "write", "admin")
ADMIN = KeySpec("mx-admin-" + "a" * 22, "admin", "acme", "*", "restricted", _ALL)
WRITER = KeySpec("mx-writer-" + "w" * 21, "writer", "acme", "*", "restricted", _RW)
READER = KeySpec("mx-reader-" + "r" * 21, "reader", "acme", "*", "restricted", _RO)
#: Below masking.unmasked_clearance (confidential): reads masked.
LOW_READER = KeySpec("mx-lowread-" + "l" * 20, "low-reader", "acme", "*", "internal", _RO)
#: Masked too, and allowed everything: every operation's outcome is checked masked.
LOW_ADMIN = KeySpec("mx-lowadmin-" + "m" * 19, "low-admin", "acme", "*", "internal", _ALL)
OTHER = KeySpec("mx-other-" + "o" * 22, "other", "globex", "*", "restricted", _ALL)
PRINCIPALS = (ADMIN, WRITER, READER, LOW_READER, LOW_ADMIN, OTHER)
MASKED = (LOW_READER, LOW_ADMIN)

SEED_KEY = f"/people/{EMAIL}/contact"
SEED_FILE = "/memories/notes.md"
SESSION, THREAD, COMPONENT = "s1", "t1", "planner"
#: The seq of the seeded session's offloaded tool result.
ATTACHMENT_SEQ = 3
SEED_MEMORIES = (
    f"{MARK} one: reach Alice at {EMAIL} or {PHONE} about the lease",
    f"{MARK} two: the plumber booked for Tuesday calls {PHONE} first",
    f"{MARK} three: invoices for the garden go to {EMAIL} monthly",
)
#: Seeded text no case writes itself: another tenant must never see any of it (nor a
#: seeded memory's id) but what it sent itself. Every seeded memory and key carries
#: the first (its source's name).
EVIDENCE = (
    f"directory page of {EMAIL}",
    SEED_KEY,
    f"{MARK} notes",
    f"{MARK} call {PHONE} v",
    f"Owner: {EMAIL}",
    "Noted. I will call",
    f"mail from {EMAIL}",
    "before noon",
    f"write to {EMAIL}",
)
RPCS: dict[str, Rpc] = {rpc.label: rpc for rpc in all_rpcs()}


def config() -> dict[str, Any]:
    """The daemon's config (besides auth): masking on below confidential, MCP on."""
    return {
        "masking": {"enabled": True, "unmasked_clearance": "confidential"},
        "mcp": {"listen": "127.0.0.1:0", "default_agent": "shared"},
        "maintenance": {"enabled": False},
    }


def now() -> timestamp_pb2.Timestamp:
    stamp = timestamp_pb2.Timestamp()
    stamp.GetCurrentTime()
    return stamp


def web_source(email: str, phone: str) -> pb.Provenance:
    return pb.Provenance(
        kind=pb.PROVENANCE_KIND_WEB,
        name=f"directory page of {email}",
        retrieved_at=now(),
        locator=f"https://example.com/find?mail={email}&tel={phone.replace(' ', '%20')}",
    )


def user_source() -> pb.Provenance:
    return pb.Provenance(kind=pb.PROVENANCE_KIND_USER)


@dataclass
class Seeded:
    """An agent seeded with personal data in every kind of record."""

    agent: str
    memory_ids: list[str] = field(default_factory=list)


def call(
    channel: grpc.Channel, label: str, request: Message | Sequence[Message], key: KeySpec
) -> list[Message]:
    """One RPC that must succeed; its responses."""
    out = invoke(channel, RPCS[label], request, key.metadata)
    assert out.ok, (label, out.code, out.message)
    return out.responses


#: What an agent can be seeded with: memories, keys (and the memory tool's file), and
#: agent state (working memory, profile, a session with its fixed zone and state).
MEMORIES, KEYS, STATE = "memories", "keys", "state"
EVERYTHING = frozenset({MEMORIES, KEYS, STATE})


def seed(channel: grpc.Channel, agent: str, parts: frozenset[str] = EVERYTHING) -> Seeded:
    """Personal data in every kind of record of ``agent`` (of ``parts``), written by
    the admin."""
    ids: list[str] = []
    if MEMORIES in parts:
        ids = _memories(channel, agent)
    writes = [*(_keys(agent) if KEYS in parts else []), *(_state(agent) if STATE in parts else [])]
    for label, request in writes:
        call(channel, label, request, ADMIN)
    return Seeded(agent, ids)


def _memories(channel: grpc.Channel, agent: str) -> list[str]:
    metadata = {"contact": EMAIL, "phone": PHONE, EMAIL: {"note": MARK}, "price": 1.50}
    items = [
        mpb.RememberRequest(
            content=text,
            tags=[EMAIL, "pii"],
            metadata_json=json.dumps(metadata).replace("1.5", "1.50"),
            source=web_source(EMAIL, PHONE),
        )
        for text in SEED_MEMORIES
    ]
    batch = mpb.RememberBatchRequest(agent_id=agent, items=items)
    [stored] = call(channel, "MemoryService.RememberBatch", batch, ADMIN)
    ids = [r.memory.id for r in stored.results]  # type: ignore[attr-defined]
    assert len(set(ids)) == len(SEED_MEMORIES), "seed memories were deduplicated"
    return ids


def _keys(agent: str) -> list[tuple[str, Message]]:
    """A key whose path holds the email, written twice (a history), and a file."""
    writes = [
        mpb.SetMemoryRequest(
            agent_id=agent,
            key=SEED_KEY,
            content_json=json.dumps(
                {"summary": f"{MARK} call {PHONE} v{v}", "email": EMAIL, "n": 12345678901234567}
            ),
            source=web_source(EMAIL, PHONE),
        )
        for v in (1, 2)
    ]
    writes.append(
        mpb.SetMemoryRequest(
            agent_id=agent,
            key=SEED_FILE,
            content_json=json.dumps(f"# {MARK} notes\nmail {EMAIL}\ncall {PHONE}\n"),
            source=user_source(),
        )
    )
    return [("MemoryService.SetMemory", w) for w in writes]


def _state(agent: str) -> list[tuple[str, Message]]:
    """Working memory, the profile, a session (messages, fixed zone) and its state."""
    working = {"contact": EMAIL, "note": f"{MARK} {PHONE}", EMAIL: True}
    messages = [
        mpb.SessionMessage(role=mpb.MESSAGE_ROLE_USER, content=f"{MARK} my email is {EMAIL}"),
        mpb.SessionMessage(
            role=mpb.MESSAGE_ROLE_ASSISTANT, content=f"Noted. I will call {PHONE} tomorrow."
        ),
        # Over compression.offload_bytes (5 KiB): offloaded to attachment ATTACHMENT_SEQ.
        mpb.SessionMessage(
            role=mpb.MESSAGE_ROLE_TOOL,
            content=f"{MARK} directory lookup: {EMAIL} {PHONE}\n" + "row of results\n" * 400,
        ),
    ]
    zone = (
        (mpb.FIXED_ZONE_KIND_TRIGGER, f"{MARK} mail from {EMAIL}"),
        (mpb.FIXED_ZONE_KIND_INSTRUCTION, f"Call {PHONE} before noon"),
    )
    state = {"next": f"{MARK} write to {EMAIL}", "tel": PHONE}
    return [
        (
            "MemoryService.SetWorkingMemory",
            mpb.SetWorkingMemoryRequest(
                agent_id=agent,
                scope=pb.WorkingMemoryScope(thread_id=THREAD),
                content_json=json.dumps(working),
            ),
        ),
        (
            "MemoryService.SetProfile",
            mpb.SetProfileRequest(agent_id=agent, content=f"# {MARK}\nOwner: {EMAIL}, {PHONE}\n"),
        ),
        (
            "MemoryService.AppendMessages",
            mpb.AppendMessagesRequest(agent_id=agent, session_id=SESSION, messages=messages),
        ),
        *(
            (
                "MemoryService.InjectInstruction",
                mpb.InjectInstructionRequest(
                    agent_id=agent, session_id=SESSION, kind=kind, content=text
                ),
            )
            for kind, text in zone
        ),
        (
            "SnapshotService.SaveState",
            spb.SaveStateRequest(
                agent_id=agent,
                session_id=SESSION,
                components=[spb.StateComponent(name=COMPONENT, state_json=json.dumps(state))],
            ),
        ),
    ]


#: A restricted key the admin writes and deletes on the shared agent: above the masked
#: callers' clearance, so nothing of it (nor of the memories deleted with it) may ever
#: reach them, not even that it was deleted (the change feed logs deletions).
HIDDEN_KEY = "/vault/Quokkaroo-ledger"


def seed_deleted_above(channel: grpc.Channel, agent: str) -> tuple[str, ...]:
    """A restricted memory and a restricted key (with its mirror memory), written and
    deleted by the admin; what must never reach a caller below restricted: their ids
    and the key's path."""
    restricted = pb.SECURITY_LEVEL_RESTRICTED
    remember = mpb.RememberRequest(
        agent_id=agent, content="Quokkaroo vault combination", security_level=restricted
    )
    [stored] = call(channel, "MemoryService.Remember", remember, ADMIN)
    memory_id = stored.memory.id  # type: ignore[attr-defined]
    forget = mpb.ForgetMemoriesRequest(agent_id=agent, ids=[memory_id])
    call(channel, "MemoryService.ForgetMemories", forget, ADMIN)
    setting = mpb.SetMemoryRequest(
        agent_id=agent, key=HIDDEN_KEY, security_level=restricted, source=user_source()
    )
    setting.content_json = json.dumps("Quokkaroo ledger text")
    [written] = call(channel, "MemoryService.SetMemory", setting, ADMIN)
    mirror_id = written.entry.memory_id  # type: ignore[attr-defined]
    setting.content_json = "null"  # a tombstone: its mirror is deleted in the same entry
    call(channel, "MemoryService.SetMemory", setting, ADMIN)
    assert memory_id and mirror_id
    return (memory_id, mirror_id, "Quokkaroo")


def rendered(messages: Sequence[Message]) -> str:
    """Responses as text, for the checks."""
    return "\n".join(text_format.MessageToString(m, as_utf8=True) for m in messages)


def shows_raw(text: str) -> bool:
    return any(raw in text for raw in RAW)


def shows_masked(text: str) -> bool:
    return any(p in text for p in PLACEHOLDERS)
