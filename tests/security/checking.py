"""Judging the adversarial attempts: an attempt on another principal's thing and its
control on a fresh random thing must look alike once names are masked, and no secret
marker, id or identifier the caller may not see may appear anywhere (the Report)."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf import json_format
from google.protobuf.message import Message

from memoryd.api.roles import METHOD_ROLES
from memoryd.domain.principal import Role
from tests.security.support import Outcome, Rpc, invoke
from tests.security.world import (
    ATTACKER_PREFIX,
    IDENT_PREFIX,
    TOKEN_RE,
    Principal,
    World,
    fresh_uuid,
    marker,
)

UUID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")

ATTACKER_RE = re.compile(ATTACKER_PREFIX + r"[0-9a-f]{12}")

#: Response fields that legitimately differ between an attempt and its control.
VOLATILE = {
    "createdAt",
    "updatedAt",
    "accessedAt",
    "accessCount",
    "expiresAt",
    "exportedAt",
    "finishedAt",
    "lastMaintenanceAt",
    "retrievedAt",
    "etag",
    "storeBytes",
    "deduplicated",
    "seq",
}

NEVER = {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN, grpc.StatusCode.DATA_LOSS}


@dataclass
class Attempt:
    rpc: Rpc
    principal: Principal
    agent: str
    request: list[Message]
    #: reference value used -> its kind (memory, key, session, ...), for the control
    refs: dict[str, str]
    control: list[Message] | None = None
    control_refs: dict[str, str] = field(default_factory=dict)
    all_agents: bool = False


def fresh_value(kind: str) -> str:
    if kind == "memory":
        return fresh_uuid()
    if kind == "key":
        return f"/sec/{marker(IDENT_PREFIX)}"
    if kind == "page_token":
        return "eyJ0IjoiMjAyNS0wMS0wMVQwMDowMDowMCswMDowMCIsImkiOiJ4IiwicSI6IngifQ.c2lnbmF0dXJl"
    return marker(IDENT_PREFIX)


def control_of(
    requests: Sequence[Message], refs: dict[str, str]
) -> tuple[list[Message], dict[str, str]]:
    """The same requests with every reference replaced by a fresh one of the same shape."""
    mapping = {value: fresh_value(kind) for value, kind in refs.items()}
    for value, kind in refs.items():
        if kind == "page_token":
            # A forged token: valid shape, signature of another body.
            body, _, sig = value.partition(".")
            mapping[value] = f"{body}.{sig[::-1]}"
    out = []
    for request in requests:
        text = json_format.MessageToJson(request, preserving_proto_field_name=True)
        for old, new in mapping.items():
            text = text.replace(json.dumps(old)[1:-1], json.dumps(new)[1:-1])
        out.append(json_format.Parse(text, type(request)()))
    return out, {new: refs[old] for old, new in mapping.items()}


# ---------------------------------------------------------------------- checks


@dataclass
class Report:
    attempts: Counter[str] = field(default_factory=Counter)
    controls: Counter[str] = field(default_factory=Counter)
    codes: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    leaks: list[str] = field(default_factory=list)
    mismatches: list[str] = field(default_factory=list)
    internal: list[str] = field(default_factory=list)
    integrity: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    live_kinds: set[str] = field(default_factory=set)

    @property
    def total(self) -> int:
        return sum(self.attempts.values())

    def render(self) -> str:
        lines = ["adversarial suite: attempts per RPC (controls) [codes]"]
        for label in sorted(self.attempts):
            codes = ", ".join(f"{c}={n}" for c, n in self.codes[label].most_common())
            lines.append(
                f"  {label:<40} {self.attempts[label]:>5} ({self.controls[label]:>4})  [{codes}]"
            )
        lines.append(
            f"  TOTAL cross-boundary attempts: {self.total} (+{sum(self.controls.values())} controls); "
            f"leaks: {len(self.leaks)}; response mismatches: {len(self.mismatches)}; "
            f"INTERNAL: {len(self.internal)}; integrity failures: {len(self.integrity)}; "
            f"live record kinds: {sorted(self.live_kinds)}"
        )
        for title, rows in (
            ("LEAKS", self.leaks),
            ("MISMATCHES", self.mismatches),
            ("INTERNAL", self.internal),
            ("INTEGRITY", self.integrity),
            ("NOTES", self.notes),
        ):
            for row in rows[:20]:
                lines.append(f"  {title}: {row}")
        return "\n".join(lines)


def normalise(value: Any, refs: dict[str, str]) -> Any:
    if isinstance(value, dict):
        return {k: normalise(v, refs) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [normalise(v, refs) for v in value]
    if isinstance(value, str):
        for ref in sorted(refs, key=len, reverse=True):
            value = value.replace(ref, "<REF>")
        return ATTACKER_RE.sub("<A>", UUID_RE.sub("<UUID>", value))
    return value


VAR = "<VAR>"


def unstable(x: Any, y: Any) -> Any:
    """x with every place where y differs replaced by VAR."""
    if isinstance(x, dict) and isinstance(y, dict):
        return {k: unstable(x[k], y[k]) if k in y else VAR for k in x}
    if isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
        return [unstable(a, b) for a, b in zip(x, y, strict=True)]
    return x if x == y else VAR


def masked(x: Any, mask: Any) -> Any:
    if mask == VAR:
        return VAR
    if isinstance(x, dict) and isinstance(mask, dict):
        return {k: masked(v, mask.get(k)) for k, v in x.items()}
    if isinstance(x, list) and isinstance(mask, list) and len(x) == len(mask):
        return [masked(a, m) for a, m in zip(x, mask, strict=True)]
    return x


def signature(outcome: Outcome, refs: dict[str, str]) -> str:
    if not outcome.ok:
        return f"{outcome.code.name}: {normalise(outcome.message, refs)}"
    body = [json_format.MessageToDict(r) for r in outcome.responses]
    return json.dumps(normalise(body, refs), sort_keys=True)


class Checker:
    def __init__(self, world: World, report: Report) -> None:
        self.world = world
        self.report = report
        self.created: set[tuple[str, str, str]] = set()

    def scan(self, attempt: Attempt, outcome: Outcome, requests: Sequence[Message]) -> None:
        p = attempt.principal
        requested = p.own_agents() if attempt.all_agents else [attempt.agent]
        agents = [a for a in requested if p.may_act_for(a)]
        sent = set(TOKEN_RE.findall(" ".join(str(r) for r in requests)))
        text = outcome.message + " " + " ".join(str(r) for r in outcome.responses)
        for token in set(TOKEN_RE.findall(text)) - sent:
            artifact = self.world.owner.get(token)
            if artifact is None or (p.tenant, attempt.agent, token) in self.created:
                continue
            if not artifact.visible_to(p, agents):
                self.report.leaks.append(
                    f"{attempt.rpc.label} by {p.name} (tenant {p.tenant}, agents {agents}, clearance "
                    f"{p.clearance}) saw {artifact.kind} of {artifact.tenant}/{artifact.agent} level "
                    f"{artifact.level}: {outcome.code.name}"
                )

    def record_writes(
        self, attempt: Attempt, outcome: Outcome, requests: Sequence[Message]
    ) -> None:
        if outcome.ok and METHOD_ROLES.get(attempt.rpc.path) is not Role.READ:
            for token in TOKEN_RE.findall(" ".join(str(r) for r in requests)):
                self.created.add((attempt.principal.tenant, attempt.agent, token))

    def check(self, attempt: Attempt, channel: grpc.Channel) -> None:
        label, p = attempt.rpc.label, attempt.principal
        tainted = any(
            (p.tenant, attempt.agent, t) in self.created
            for r in attempt.refs
            for t in TOKEN_RE.findall(r)
        )
        outcome = invoke(
            channel,
            attempt.rpc,
            attempt.request if attempt.rpc.client_streaming else attempt.request[0],
            p.key.metadata,
        )
        self.report.attempts[label] += 1
        self.report.codes[label][outcome.code.name] += 1
        if outcome.code in NEVER:
            self.report.internal.append(
                f"{label} by {p.name}: {outcome.code.name} {outcome.message[:200]}"
            )
        self.scan(attempt, outcome, attempt.request)
        self.record_writes(attempt, outcome, attempt.request)
        if attempt.control is None:
            return
        control = invoke(
            channel,
            attempt.rpc,
            attempt.control if attempt.rpc.client_streaming else attempt.control[0],
            p.key.metadata,
        )
        self.report.controls[label] += 1
        if control.code in NEVER:
            self.report.internal.append(
                f"{label} control by {p.name}: {control.code.name} {control.message[:200]}"
            )
        self.scan(attempt, control, attempt.control)
        self.record_writes(attempt, control, attempt.control)
        if tainted:
            return
        a, b = signature(outcome, attempt.refs), signature(control, attempt.control_refs)
        if a != b and outcome.ok and control.ok:
            # Fields that differ between two controls (per-partition version counters,
            # say) carry no information about the other's thing: mask them.
            second, second_refs = control_of(attempt.request, attempt.refs)
            again = invoke(
                channel,
                attempt.rpc,
                second if attempt.rpc.client_streaming else second[0],
                p.key.metadata,
            )
            self.record_writes(attempt, again, second)
            mask = unstable(json.loads(b), json.loads(signature(again, second_refs)))
            a = json.dumps(masked(json.loads(a), mask), sort_keys=True)
            b = json.dumps(masked(json.loads(b), mask), sort_keys=True)
        if a != b:
            kinds = sorted(set(attempt.refs.values()))
            self.report.mismatches.append(
                f"{label} by {p.name} for agent {attempt.agent}, refs {kinds}: another's thing -> {a[:300]} | a missing thing -> {b[:300]}"
            )


# ---------------------------------------------------------------------- the run
