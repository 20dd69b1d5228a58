"""Property-based fuzzing of every RPC's request message over a live daemon.

Requests are drawn from the descriptors (hypothesis): random values for every field,
huge strings, unicode, negative and out-of-range numbers, unknown enum values,
NaN/infinite floats, out-of-range timestamps, and raw invalid UTF-8 in string fields.
Properties: never INTERNAL/UNKNOWN, the daemon stays up, every INVALID_ARGUMENT carries
google.rpc.BadRequest field violations, and a rejected write stores nothing.

Import streams (import_fuzzing.py) mix valid memories with records of every kind
carrying one extreme value each (versions, TTLs, timestamps, counts): every extreme
record is reported in ``rejected``, only the valid ones are stored.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf import message_factory, struct_pb2
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memoryd.api.roles import METHOD_ROLES
from memoryd.domain.limits import id_problem
from memoryd.domain.principal import Role
from memoryd_proto.v1 import lifecycle_service_pb2 as lpb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from tests.security.import_fuzzing import fuzz_imports
from tests.security.support import KeySpec, Outcome, Rpc, all_rpcs, invoke, invoke_raw

EXAMPLES_PER_RPC = 60
FUZZ_AGENTS = ("fz1", "fz2")
NEVER = {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN, grpc.StatusCode.DATA_LOSS}
F = FieldDescriptor

SPECIAL_STRINGS = [
    "",
    " ",
    "\x00",
    "a\x00b",
    "../../etc/passwd",
    "/",
    "//a//b/",
    "/kb/x",
    "..",
    "\u202e",
    "ä漢字🙂",
    "\ud7ff",
    "DROP TABLE memories;",
    "' OR 1=1 --",
    "tenant_id = 'other'",
    "*",
    "%s%n",
    "\n\r\t",
]
plain = st.text(alphabet="abcdefghijklmnopqrstuvwxyz /-_", min_size=1, max_size=30)
strings = st.one_of(
    plain,
    plain,
    st.text(max_size=40),
    st.sampled_from(SPECIAL_STRINGS),
    st.integers(0, 300_000).map(lambda n: "x" * n),
)


@dataclass
class FuzzReport:
    requests: Counter[str] = field(default_factory=Counter)
    codes: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    internal: list[str] = field(default_factory=list)
    missing_violations: list[str] = field(default_factory=list)
    partial_writes: list[str] = field(default_factory=list)
    #: Import streams whose answer or stored result broke a property.
    import_failures: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.requests.values())

    def render(self) -> str:
        lines = ["fuzzing: requests per RPC [codes]"]
        for label in sorted(self.requests):
            codes = ", ".join(f"{c}={n}" for c, n in self.codes[label].most_common())
            lines.append(f"  {label:<40} {self.requests[label]:>5}  [{codes}]")
        lines.append(
            f"  TOTAL fuzzed requests: {self.total}; INTERNAL: {len(self.internal)}; "
            f"INVALID_ARGUMENT without field violations: {len(self.missing_violations)}; "
            f"partial writes: {len(self.partial_writes)}; "
            f"import streams that broke a property: {len(self.import_failures)}"
        )
        for title, rows in (
            ("INTERNAL", self.internal),
            ("NO VIOLATIONS", self.missing_violations),
            ("PARTIAL", self.partial_writes),
            ("IMPORT", self.import_failures),
        ):
            lines += [f"  {title}: {row}" for row in rows[:20]]
        return "\n".join(lines)


def json_values(depth: int) -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        st.none(), st.booleans(), st.floats(allow_nan=False, allow_infinity=False), strings
    )
    if depth <= 0:
        return scalars
    return st.one_of(
        scalars,
        st.lists(json_values(depth - 1), max_size=3),
        st.dictionaries(st.text(max_size=8), json_values(depth - 1), max_size=3),
    )


def scalar(fd: FieldDescriptor) -> st.SearchStrategy[Any]:
    t = fd.type
    if t == F.TYPE_STRING:
        if fd.name in ("agent_id", "target_agent_id"):
            agents = st.sampled_from(FUZZ_AGENTS)
            return st.one_of(agents, agents, agents, strings)
        return strings
    if t == F.TYPE_BYTES:
        return st.binary(max_size=64)
    if t == F.TYPE_BOOL:
        return st.booleans()
    if t in (F.TYPE_INT32, F.TYPE_SINT32, F.TYPE_SFIXED32):
        return st.integers(-(2**31), 2**31 - 1)
    if t in (F.TYPE_INT64, F.TYPE_SINT64, F.TYPE_SFIXED64):
        return st.integers(-(2**63), 2**63 - 1)
    if t in (F.TYPE_UINT32, F.TYPE_FIXED32):
        return st.integers(0, 2**32 - 1)
    if t in (F.TYPE_UINT64, F.TYPE_FIXED64):
        return st.integers(0, 2**64 - 1)
    if t == F.TYPE_DOUBLE:
        return st.floats()
    if t == F.TYPE_FLOAT:
        return st.floats(width=32)
    if t == F.TYPE_ENUM:
        return st.integers(-3, 12)  # includes unknown values
    raise AssertionError(f"unhandled field type {t}")


@st.composite
def message(
    draw: st.DrawFn, descriptor: Descriptor, depth: int = 0, density: float | None = None
) -> Message:
    """A random message; ``density`` is the chance each field is set (sparse messages get
    past validation more often and reach deeper code)."""
    if density is None:
        density = draw(st.sampled_from([0.1, 0.25, 0.5]))

    msg = message_factory.GetMessageClass(descriptor)()
    full = descriptor.full_name
    if full == "google.protobuf.Struct":
        msg.update(
            draw(st.dictionaries(st.text(max_size=8), json_values(2 - min(depth, 2)), max_size=4))
        )  # type: ignore[attr-defined]
        return msg
    if full == "google.protobuf.Value":
        value = draw(json_values(1))
        holder = struct_pb2.Struct()
        holder.update({"v": value})
        msg.CopyFrom(holder.fields["v"])
        return msg
    if full in ("google.protobuf.Timestamp", "google.protobuf.Duration"):
        msg.seconds = draw(st.one_of(st.integers(-(2**40), 2**40), st.integers(0, 2_000_000_000)))  # type: ignore[attr-defined]
        msg.nanos = draw(st.integers(-(2**31), 2**31 - 1))  # type: ignore[attr-defined]
        return msg
    for fd in descriptor.fields:
        if fd.name in ("agent_id", "content", "query") and depth == 0:
            pass  # nearly every request names these; always set them
        elif draw(st.floats(0, 1)) >= density:
            continue
        repeated = fd.is_repeated
        if fd.type == F.TYPE_MESSAGE:
            if fd.message_type.GetOptions().map_entry or depth >= 3:
                continue
            if repeated:
                for child in draw(
                    st.lists(message(fd.message_type, depth + 1, density), max_size=3)
                ):
                    getattr(msg, fd.name).add().CopyFrom(child)
            else:
                getattr(msg, fd.name).CopyFrom(draw(message(fd.message_type, depth + 1, density)))
        elif repeated:
            size = 400 if fd.type == F.TYPE_FLOAT and draw(st.booleans()) else 4
            values = draw(st.lists(scalar(fd), max_size=size))
            getattr(msg, fd.name).extend(values)
        else:
            setattr(msg, fd.name, draw(scalar(fd)))
    return msg


def invalid_utf8(request: Message, draw_bytes: bytes) -> bytes | None:
    """The request with a string field overwritten by invalid UTF-8 on the wire."""
    fields = [fd for fd in request.DESCRIPTOR.fields if fd.type == F.TYPE_STRING]
    if not fields:
        return None
    fd = fields[len(draw_bytes) % len(fields)]
    payload = b"\xff\xfe" + draw_bytes + b"\xc3\x28"
    return (
        request.SerializeToString()
        + _varint((fd.number << 3) | 2)
        + _varint(len(payload))
        + payload
    )


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


class Fuzzer:
    def __init__(self, channel: grpc.Channel, key: KeySpec) -> None:
        self.channel = channel
        self.key = key
        self.report = FuzzReport()
        self.rpcs = {r.name: r for r in all_rpcs()}
        self.stats_live = True

    def stored(self, agent: str) -> tuple[int, ...] | None:
        """Everything stored for the fuzzer in one partition (None if not countable)."""
        if id_problem(agent) is not None:
            return None
        if self.stats_live:
            out = invoke(
                self.channel,
                self.rpcs["GetStats"],
                lpb.GetStatsRequest(agent_id=agent),
                self.key.metadata,
            )
            if out.ok:
                s = out.responses[0]
                return (s.memories, s.archived, s.keys, s.sessions, s.working_scopes)
            self.stats_live = False
        total, token = 0, ""
        while True:
            out = invoke(
                self.channel,
                self.rpcs["ListMemories"],
                mpb.ListMemoriesRequest(
                    agent_id=agent, page_size=500, include_archived=True, page_token=token
                ),
                self.key.metadata,
            )
            if not out.ok:
                return None
            total += len(out.responses[0].memories)
            token = out.responses[0].next_page_token
            if not token:
                return (total,)

    def check(self, rpc: Rpc, request: Message, raw: bytes | None = None) -> None:
        is_write = METHOD_ROLES.get(rpc.path) is not Role.READ
        agent = str(getattr(request, "agent_id", "") or getattr(request, "target_agent_id", ""))
        before = self.stored(agent) if is_write else None
        if raw is not None:
            outcome = invoke_raw(self.channel, rpc, raw, self.key.metadata)
        else:
            outcome = invoke(
                self.channel, rpc, [request] if rpc.client_streaming else request, self.key.metadata
            )
        self.record(rpc, request, outcome)
        if before is not None and not outcome.ok and outcome.code != grpc.StatusCode.UNIMPLEMENTED:
            after = self.stored(agent)
            if after is not None and after != before:
                self.report.partial_writes.append(
                    f"{rpc.label} {outcome.code.name}: {before} -> {after}"
                )

    def record(self, rpc: Rpc, request: Message, outcome: Outcome) -> None:
        self.report.requests[rpc.label] += 1
        self.report.codes[rpc.label][outcome.code.name] += 1
        shown = str(request)[:300].replace("\n", " ")
        if outcome.code in NEVER:
            self.report.internal.append(
                f"{rpc.label}: {outcome.code.name} {outcome.message[:200]} <- {shown}"
            )
        if outcome.code == grpc.StatusCode.INVALID_ARGUMENT and not outcome.violations:
            self.report.missing_violations.append(
                f"{rpc.label}: {outcome.message[:200]} <- {shown}"
            )


#: A valid expiry closer than this is moved out to it: something that expires between
#: the counts before and after a rejected write would look like that write's doing.
EXPIRY_FLOOR_S = 86_400


def _nothing_expires_soon(msg: Message, now_s: float) -> None:
    """Every valid TTL (a Duration in (0, 1 day)) and expiry instant (an ``expires_at``
    Timestamp in (now, now + 1 day]) of ``msg``, nested ones too, is pushed out to a
    day; invalid values (negative, out of range, in the past) are left to be tested."""
    for fd, value in msg.ListFields():
        if fd.type != F.TYPE_MESSAGE:
            continue
        items = value if fd.is_repeated else [value]
        if fd.message_type.GetOptions().map_entry:
            items = [v for v in value.values() if isinstance(v, Message)]
        for item in items:
            name = item.DESCRIPTOR.full_name
            if name == "google.protobuf.Duration":
                if 0 < item.seconds + item.nanos / 1e9 < EXPIRY_FLOOR_S:
                    item.seconds, item.nanos = EXPIRY_FLOOR_S, 0
            elif name == "google.protobuf.Timestamp":
                if fd.name == "expires_at" and now_s < item.seconds <= now_s + EXPIRY_FLOOR_S:
                    item.seconds, item.nanos = int(now_s) + EXPIRY_FLOOR_S + 1, 0
            else:
                _nothing_expires_soon(item, now_s)


def _fuzz_rpc(fuzzer: Fuzzer, rpc: Rpc, examples: int) -> None:
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(
        request=message(rpc.request_class.DESCRIPTOR),
        corrupt=st.one_of(*[st.none()] * 7, st.binary(max_size=16)),
    )
    def fuzz_one(request: Message, corrupt: bytes | None) -> None:
        _nothing_expires_soon(request, time.time())
        raw = None
        if corrupt is not None and not rpc.client_streaming:
            raw = invalid_utf8(request, corrupt)
        fuzzer.check(rpc, request, raw)

    fuzz_one()


def run_fuzz(channel: grpc.Channel, key: KeySpec, examples: int = EXAMPLES_PER_RPC) -> FuzzReport:
    fuzzer = Fuzzer(channel, key)
    for rpc in all_rpcs():
        _fuzz_rpc(fuzzer, rpc, examples)
    fuzz_imports(fuzzer)
    return fuzzer.report
