"""Import streams with extreme values, over the live daemon (hypothesis).

Each stream holds valid memories with fresh ids and records of every kind, each with
exactly one value out of range: a version of 0, 2^52 + 1 or 2^63 - 1, a TTL beyond
protobuf Duration's range or of mixed signs, a timestamp outside 0001..9999, an
access or message count past 2^53. Properties: the Import answers OK (never INTERNAL,
never stopping part-way), ``rejected`` lists exactly the extreme records, ``imported``
counts exactly the valid ones, nothing of a rejected record is stored (stats, the
profile and the saved state of the stream's agent), and the daemon keeps serving.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import grpc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memoryd.domain.limits import MAX_COUNT, MAX_IMPORTED_VERSION
from memoryd_proto.v1 import lifecycle_service_pb2 as lpb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import snapshot_service_pb2 as spb
from tests.security import records as rec
from tests.security.support import invoke

if TYPE_CHECKING:
    from tests.security.fuzzing import Fuzzer

#: The agent every import stream writes to (no other fuzzing touches it).
AGENT = "fzimport"
STREAMS = 40

BAD_VERSIONS = [0, -1, MAX_IMPORTED_VERSION + 1, rec.POISON_VERSION, -(2**63)]
BAD_SECONDS = [-62_135_596_801, 253_402_300_800, 2**62, -(2**62)]  # not a Timestamp
Mutation = Callable[[lpb.ExportRecord], None]


def _set_version(record: lpb.ExportRecord, version: int) -> None:
    kind = record.WhichOneof("record")
    if kind == "memory":
        record.memory.memory.version = version
    elif kind == "key_event":
        record.key_event.entry.version = version
    elif kind == "working_memory":
        record.working_memory.working_memory.version = version
    elif kind == "profile":
        record.profile.version = version
    elif kind == "session":
        record.session.version = version
    elif kind == "state":
        record.state.component.version = version


def _set_time(record: lpb.ExportRecord, seconds: int) -> None:
    kind = record.WhichOneof("record")
    target = {
        "memory": lambda: record.memory.memory.updated_at,
        "key_event": lambda: record.key_event.entry.updated_at,
        "working_memory": lambda: record.working_memory.working_memory.updated_at,
        "profile": lambda: record.profile.profile.updated_at,
        "session": lambda: record.session.created_at,
        "state": lambda: record.state.component.updated_at,
    }[str(kind)]()
    target.seconds = seconds


def _set_ttl(record: lpb.ExportRecord, seconds: int, nanos: int) -> None:
    ttl = record.session.ttl if record.HasField("session") else record.working_memory.ttl
    ttl.seconds, ttl.nanos = seconds, nanos


@st.composite
def extreme_record(draw: st.DrawFn) -> lpb.ExportRecord:
    """A record of some kind with one value out of range."""
    kind = draw(st.sampled_from(sorted(rec.every_kind(AGENT))))
    record = rec.every_kind(AGENT)[kind]
    choices: list[st.SearchStrategy[Mutation]] = [
        st.sampled_from(BAD_VERSIONS).map(lambda v: lambda r: _set_version(r, v)),
        st.sampled_from(BAD_SECONDS).map(lambda s: lambda r: _set_time(r, s)),
    ]
    if kind in ("session", "working_memory"):
        ttls = [
            (rec.MAX_DURATION_S + 1, 0),
            (2**62, 0),
            (5, -1),  # mixed signs: not a Duration
            (-5, 0),  # negative
            (rec.MAX_DURATION_S, 0),  # a Duration, but past 100 years
        ]
        choices.append(st.sampled_from(ttls).map(lambda t: lambda r: _set_ttl(r, *t)))
    if kind == "memory":
        counts = [-1, MAX_COUNT + 1, 2**63 - 1]
        choices.append(
            st.sampled_from(counts).map(
                lambda n: lambda r: setattr(r.memory.memory, "access_count", n)
            )
        )
    if kind == "session":
        choices.append(
            st.sampled_from([-1, MAX_COUNT + 1, 2**63 - 1]).map(
                lambda n: lambda r: setattr(r.session, "message_count", n)
            )
        )
    draw(st.one_of(*choices))(record)
    return record


streams = st.lists(
    st.one_of(extreme_record(), st.builds(lambda: rec.memory(AGENT))), min_size=1, max_size=8
)


def _snapshot_of_agent(fuzzer: Fuzzer) -> tuple[object, ...] | None:
    """What is stored for AGENT: stats, whether it has a profile, its saved state."""
    stored = fuzzer.stored(AGENT)
    profile = invoke(
        fuzzer.channel,
        fuzzer.rpcs["GetProfile"],
        mpb.GetProfileRequest(agent_id=AGENT),
        fuzzer.key.metadata,
    )
    state = invoke(
        fuzzer.channel,
        fuzzer.rpcs["LoadState"],
        spb.LoadStateRequest(agent_id=AGENT, session_id=rec.SESSION),
        fuzzer.key.metadata,
    )
    if stored is None or not state.ok:
        return None
    components = len(state.responses[0].components)
    return (*stored, profile.code.name, components)


def check_stream(fuzzer: Fuzzer, stream: list[lpb.ExportRecord]) -> None:
    report = fuzzer.report
    label = "LifecycleService.Import(extreme)"
    bad = {i for i, r in enumerate(stream) if not _is_fresh_valid_memory(r)}
    before = _snapshot_of_agent(fuzzer)
    outcome = invoke(
        fuzzer.channel,
        fuzzer.rpcs["Import"],
        [lpb.ImportRequest(record=r) for r in stream],
        fuzzer.key.metadata,
    )
    report.requests[label] += 1
    report.codes[label][outcome.code.name] += 1
    if outcome.code != grpc.StatusCode.OK:
        report.import_failures.append(f"answered {outcome.code.name}: {outcome.message[:200]}")
        return
    answer = outcome.responses[0]
    rejected = {r.index for r in answer.rejected}
    if rejected != bad or answer.imported != len(stream) - len(bad):
        shown = [str(stream[i]).replace("\n", " ")[:160] for i in sorted(bad ^ rejected)]
        report.import_failures.append(
            f"rejected {sorted(rejected)} imported {answer.imported}, expected {sorted(bad)}: "
            f"{shown}"
        )
        return
    after = _snapshot_of_agent(fuzzer)
    valid = len(stream) - len(bad)
    if before is None or after is None:
        report.import_failures.append("the agent's stored data could not be read")
    elif after[0] != before[0] + valid or after[1:] != before[1:]:
        report.import_failures.append(f"stored {before} -> {after} for {valid} valid memories")


def _is_fresh_valid_memory(record: lpb.ExportRecord) -> bool:
    """The stream's valid records: memories as the builder made them."""
    if not record.HasField("memory"):
        return False
    m = record.memory.memory
    return m.version == 1 and m.access_count == 0 and 0 < m.updated_at.seconds < 253_402_300_800


def fuzz_imports(fuzzer: Fuzzer, examples: int = STREAMS) -> None:
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(stream=streams)
    def one(stream: list[lpb.ExportRecord]) -> None:
        check_stream(fuzzer, stream)

    one()
