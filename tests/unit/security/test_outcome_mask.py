"""The outcome mask: every string and JSON value of an outcome masked, wherever it sits,
except the fields declared as identifiers; paths stay paths, JSON stays JSON (its
spelling kept), ids stay usable, and nothing stored is changed."""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import json
import sys
import types
import typing
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest

from memoryd.domain.agent_state import (
    SessionMessage,
    SessionWindow,
    ToolCall,
    WorkingMemory,
    WorkingScope,
)
from memoryd.domain.keyed import KeyEntry, KeyListing
from memoryd.domain.lifecycle import ExportedKeyEvent, Progress
from memoryd.domain.models import Memory, Provenance, ProvenanceKind
from memoryd.domain.relations import DERIVED_FROM_KEY, RELATIONS_KEY, SUPERSEDED_BY_KEY
from memoryd.domain.requests import Degradation, RecallOutcome, ScoreComponents, ScoredMemory
from memoryd.domain.snapshot import StateComponent
from memoryd.operations import OPERATIONS
from memoryd.security.masked_fields import FIELD_KINDS, Kind
from memoryd.security.masking import Masker, OutcomeMask, mask_json_text, mask_path
from memoryd.security.settings import CustomMaskingRule, MaskingSettings

NOW = datetime(2026, 1, 3, 23, 30, tzinfo=UTC)
EMAIL, PHONE = "alice@example.com", "+1 415-555-0100"
PII = f"mail {EMAIL} or call {PHONE}"
#: An id the phone rule would eat if ids were masked.
PHONE_LIKE_ID = "4155550100-2025-0101"


@pytest.fixture
def masker() -> Masker:
    return Masker(MaskingSettings(enabled=True))


@pytest.fixture
def mask(masker: Masker) -> OutcomeMask:
    return OutcomeMask(masker.mask, FIELD_KINDS)


def raw_in(value: object) -> bool:
    text = repr(value)
    return EMAIL in text or "415-555-0100" in text


def memory(**extra: object) -> Memory:
    fields: dict[str, object] = {
        "id": PHONE_LIKE_ID,
        "tenant_id": "t1",
        "agent_id": "a1",
        "content": PII,
        "created_at": NOW,
        "updated_at": NOW,
        "namespace": f"ns {EMAIL}",
        "tags": (EMAIL, "plain"),
        "source": Provenance(ProvenanceKind.WEB, f"page of {EMAIL}", NOW, f"mailto:{EMAIL}"),
        "key": f"/people/{EMAIL}/phone {PHONE}",
        "supersedes": PHONE_LIKE_ID,
        "metadata": {
            "contact": EMAIL,
            EMAIL: {"phones": [PHONE, 4155550100]},
            "price": 1.5,
            DERIVED_FROM_KEY: [PHONE_LIKE_ID],
            SUPERSEDED_BY_KEY: PHONE_LIKE_ID,
            RELATIONS_KEY: [{"kind": "supersedes", "memory_id": PHONE_LIKE_ID, "reason": PII}],
            "memoryd:dedup": {"count": 2, "previous_content": PII},
        },
    }
    fields.update(extra)
    return Memory(**fields)  # type: ignore[arg-type]


def test_every_declared_field_exists() -> None:
    for cls, kinds in FIELD_KINDS.items():
        names = {f.name for f in dataclasses.fields(cls)}
        assert set(kinds) <= names, (cls.__name__, set(kinds) - names)


def test_a_memory_is_masked_everywhere_but_its_ids(mask: OutcomeMask) -> None:
    stored = memory()
    stored.metadata_json = json.dumps(stored.metadata).replace("1.5", "1.50")
    shown = mask(stored)
    assert stored.content == PII and stored.metadata["contact"] == EMAIL  # untouched
    assert not raw_in(dataclasses.replace(shown, vector=None)), shown
    assert shown.content == "mail [email] or call [phone]"
    assert shown.tags == ("[email]", "plain") and shown.namespace == "ns [email]"
    assert shown.source is not None and shown.source.locator == "mailto:[email]"
    assert shown.key == "/people/[email]/phone [phone]"
    assert (shown.id, shown.supersedes) == (PHONE_LIKE_ID, PHONE_LIKE_ID)
    meta = shown.metadata
    assert meta[DERIVED_FROM_KEY] == [PHONE_LIKE_ID] and meta[SUPERSEDED_BY_KEY] == PHONE_LIKE_ID
    relation = meta[RELATIONS_KEY][0]
    assert (
        relation["memory_id"] == PHONE_LIKE_ID
        and relation["reason"] == "mail [email] or call [phone]"
    )
    assert meta["memoryd:dedup"] == {"count": 2, "previous_content": "mail [email] or call [phone]"}
    assert meta["[email]"] == {"phones": ["[phone]", 4155550100]}  # numbers are not text
    # The JSON text stays JSON, spelled as written where nothing was masked.
    text = shown.metadata_text()
    assert json.loads(text) == meta and '"price":1.50' in text.replace(" ", "")


def test_nothing_to_mask_returns_the_value_itself(mask: OutcomeMask) -> None:
    plain = memory(content="tea", namespace="", tags=(), source=None, key="", metadata={})
    assert mask(plain) is plain
    outcome = RecallOutcome([ScoredMemory(plain, 0.5, ScoreComponents())], "model-1234567")
    assert mask(outcome) is outcome


def test_key_entries_stay_json_and_paths_stay_paths(mask: OutcomeMask) -> None:
    text = f'{{"email": "{EMAIL}", "n": 12345678901234567, "x": 1.50}}'
    entry = KeyEntry(
        f"/p/{EMAIL}",
        json.loads(text),
        True,
        3,
        NOW,
        memory_id=PHONE_LIKE_ID,
        content_json=text.replace(" ", ""),
    )
    shown = mask(entry)
    assert shown.key == "/p/[email]" and shown.memory_id == PHONE_LIKE_ID
    assert shown.content == {"email": "[email]", "n": 12345678901234567, "x": 1.5}
    assert shown.content_json == '{"email":"[email]","n":12345678901234567,"x":1.50}'
    listing = mask(KeyListing([entry], [f"/p/{EMAIL}/"], "token-5550100"))
    assert listing.directories == ["/p/[email]/"] and listing.next_page_token == "token-5550100"
    assert mask(ExportedKeyEvent("a1", entry, True)).entry == shown


def test_working_memory_sessions_state_and_bare_strings(mask: OutcomeMask) -> None:
    wm = WorkingMemory(WorkingScope("t-5550100", "r1"), {"contact": EMAIL}, 1, NOW)
    shown_wm = mask(wm)
    assert shown_wm.scope == wm.scope and shown_wm.content_json == '{"contact":"[email]"}'
    message = SessionMessage(
        role="user",  # type: ignore[arg-type]
        content=PII,
        seq=1,
        created_at=NOW,
        tool_call_id="call-5550100",
        tool_calls=(ToolCall("call-5550100", "dial", {"number": PHONE}),),
    )
    window = SessionWindow([], PII, [message], 10, "extractive", "tok")
    shown = mask(window)
    assert not raw_in(shown) and shown.recent[0].tool_calls[0].id == "call-5550100"
    state = mask(StateComponent("planner", {"to": EMAIL}, 1, NOW))
    assert state.name == "planner" and state.state_json == '{"to":"[email]"}'
    assert mask([PHONE, "x"]) == ["[phone]", "x"]
    assert mask([PHONE_LIKE_ID], Kind.KEEP) == [PHONE_LIKE_ID]
    progress = mask(Progress("merge-5550100", 1, 2, f"tag {EMAIL!r}"))
    assert progress.phase == "merge-5550100" and progress.message == "tag '[email]'"
    assert mask((Degradation("llm", PII),)) == (Degradation("llm", "mail [email] or call [phone]"),)


def test_masking_twice_is_masking_once(masker: Masker) -> None:
    samples = [PII, "token: abc123", "sk-proj-AbCdEfGhIjKlMnOp1234", "4111 1111 1111 1111"]
    for text in samples:
        once = masker.mask(text)
        assert masker.mask(once) == once
    with pytest.raises(ValueError, match="masked again"):
        MaskingSettings(
            enabled=True,
            custom=[CustomMaskingRule(name="x", pattern=r"\[\w+\]", replacement="[x1]")],
        )


def test_json_text_and_paths(masker: Masker) -> None:
    m = masker.mask
    assert mask_json_text('{"a" : "x"}', m) == '{"a" : "x"}'  # unchanged: as written
    assert json.loads(mask_json_text(f'{{"{EMAIL}":1,"b":"{EMAIL}"}}', m)) == {
        "[email]": 1,
        "b": "[email]",
    }
    both = json.loads(mask_json_text('{"a@example.com":1,"b@example.com":2}', m))
    assert both == {"[email]": 1, "[email]~2": 2}  # two names masked alike both stay
    assert mask_json_text(f"not json {EMAIL}", m) == "not json [email]"
    assert mask_path("/", m) == "/" and mask_path(f"/{EMAIL}/", m) == "/[email]/"


# ---------------------------------------------------------------- every outcome


def sample(hint: Any) -> Any:
    """An instance of ``hint`` with personal data in every string (and JSON value)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any or hint is object:
        return {"any": PII}
    if origin in (types.UnionType, typing.Union):
        return sample(next(a for a in args if a is not type(None)))
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return next(iter(hint))
    if hint is str:
        return PII
    if hint in (int, float, bool, datetime, timedelta):
        return {int: 7, float: 0.5, bool: True, datetime: NOW, timedelta: timedelta(1)}[hint]
    if origin is np.ndarray:
        return np.zeros(2, dtype=np.float32)
    if origin in (list, tuple, collections.abc.Sequence):
        item = sample(args[0])
        return (item,) if origin is tuple else [item]
    if origin is dict:
        return {PII: sample(args[1])}
    if dataclasses.is_dataclass(hint):
        hints = typing.get_type_hints(hint)
        fields = dataclasses.fields(hint)
        return hint(**{f.name: sample(hints[f.name]) for f in fields if f.init})
    raise AssertionError(f"no sample for {hint!r}")


def outcome_types(hint: Any) -> list[Any]:
    """The types an operation's result (or stream items) can have."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (types.UnionType, typing.Union):
        return [t for a in args for t in outcome_types(a)]
    if origin is collections.abc.AsyncIterator:
        return outcome_types(args[0])
    return [hint]


def declared_outcome(op: Any) -> Any:
    """The result type an operation is declared with (``NAME: Operation[I, O]`` in its
    module under memoryd.operations): its ``run`` is often a lambda, which carries no
    annotations."""
    for module_name, module in list(sys.modules.items()):
        if not module_name.startswith("memoryd.operations."):
            continue
        for name, value in vars(module).items():
            if value is op and name.isupper():
                declared = typing.get_type_hints(module).get(name)
                assert declared is not None, f"annotate {name}: Operation[<input>, <outcome>]"
                return typing.get_args(declared)[1]
    raise AssertionError(f"{op.name} is not bound to a name in an operations module")


def raw_strings(value: Any, path: str = "") -> list[str]:
    """Where ``value`` still holds the sample's personal data."""
    if isinstance(value, str):
        return [path] if EMAIL in value or "415-555-0100" in value else []
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [
            p
            for f in dataclasses.fields(value)
            for p in raw_strings(getattr(value, f.name), f"{type(value).__name__}.{f.name}")
        ]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in raw_strings(k, path) + raw_strings(v, path)]
    if isinstance(value, list | tuple | frozenset):
        return [p for item in value for p in raw_strings(item, path)]
    return []


@pytest.mark.parametrize("op", OPERATIONS, ids=lambda op: op.name)
def test_every_outcome_of_every_operation_is_masked_but_its_identifiers(
    op: Any, mask: OutcomeMask
) -> None:
    """Built from the operations' own result types, so a field or an outcome added
    later is checked without anyone listing it."""
    keep = {
        f"{cls.__name__}.{name}"
        for cls, kinds in FIELD_KINDS.items()
        for name, kind in kinds.items()
        if kind is Kind.KEEP
    }
    for hint in outcome_types(declared_outcome(op)):
        value = sample(hint)
        shown = mask(value, op.outcome_kind)
        left = raw_strings(shown)
        if op.outcome_kind is Kind.KEEP and not dataclasses.is_dataclass(value):
            assert shown == value
            continue
        assert set(left) <= keep, (op.name, hint, sorted(set(left) - keep))
