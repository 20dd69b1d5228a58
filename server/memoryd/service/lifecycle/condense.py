"""Condensing a group of memories without an LLM: fewer, shorter memories that keep
every distinct fact.

1. The statements (sentences) of the group, oldest memory first.
2. A statement superseded by a later one (a changed value of the same subject's slot,
   memoryd.service.memories.slots: "the deadline is Friday" / "... moved to Monday")
   goes: the newest value wins, as the layered-memory design asks of conflicts.
3. Near-identical statements become one: the same content words (memoryd.text.tokenize:
   stop words dropped, stemmed; Chinese as character pairs) or one's words all in the
   other's; the one with more words stays (the first when level).
4. What is left is split by subject (the first content word) into at most
   ``max_parts`` parts, whole subjects together, the largest first into the smallest
   part; statements sharing their first three words (Chinese: characters) are folded
   into one: "The user likes hiking" + "The user likes cooking" -> "The user likes
   hiking, cooking".

Each original memory belongs to the part holding its first statement (or the one that
replaced it), so every derived memory lists the originals it stands for.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from memoryd.domain.models import Memory
from memoryd.service.memories.slots import changed_value
from memoryd.text import tokenize
from memoryd.text.facts import sentences

#: Token-set overlap (Jaccard) at which two statements are one.
NEAR_IDENTICAL = 0.8
#: Leading words (Chinese: characters) statements must share to be folded together.
FOLD_PREFIX = 3
#: A folded statement's own part (after the shared words) is at most this many words.
FOLD_TAIL_WORDS = 6
_CJK = re.compile("[\u3400-\u4dbf\u4e00-\u9fff]")
_END = ".!?;\u3002\uff01\uff1f\uff1b"
_NUMBERS = re.compile(r"\d+(?:[.,:]\d+)?")


@dataclass(slots=True)
class _Statement:
    text: str
    member: int
    words: frozenset[str]
    #: The statement standing for this one (itself while kept).
    rep: int = -1


@dataclass(slots=True)
class Part:
    """One condensed memory: its text and the originals it stands for."""

    text: str
    members: list[Memory] = field(default_factory=list)


def condense(memories: Sequence[Memory], max_parts: int) -> list[Part]:
    """``memories`` (oldest first) condensed into at most ``max_parts`` parts."""
    statements = [
        _Statement(s.strip(), i, frozenset(tokenize(s)))
        for i, m in enumerate(memories)
        for s in sentences(m.content)
        if s.strip()
    ]
    for i, s in enumerate(statements):
        s.rep = i
    _drop_stale(statements)
    _merge_near_identical(statements)
    kept = [i for i, s in enumerate(statements) if s.rep == i]
    groups = _split_by_subject([statements[i] for i in kept], kept, max_parts)
    part_of = {index: n for n, group in enumerate(groups) for index in group}
    parts = [Part(_fold([statements[i].text for i in group])) for group in groups]
    first: dict[int, int] = {}
    for i, s in enumerate(statements):
        first.setdefault(s.member, _root(statements, i))
    for member, index in sorted(first.items()):
        parts[part_of[index]].members.append(memories[member])
    return _absorb_memberless(parts)


def _root(statements: list[_Statement], i: int) -> int:
    while statements[i].rep != i:
        i = statements[i].rep
    return i


def _drop_stale(statements: list[_Statement]) -> None:
    for later in range(len(statements)):
        for earlier in range(later):
            s, newer = statements[earlier], statements[later]
            if (
                s.rep == earlier
                and s.member != newer.member
                and changed_value(newer.text, s.text) is not None
            ):
                s.rep = later


def _merge_near_identical(statements: list[_Statement]) -> None:
    live = [i for i, s in enumerate(statements) if s.rep == i]
    for n, a in enumerate(live):
        if statements[a].rep != a:
            continue
        for b in live[n + 1 :]:
            if statements[b].rep != b or not _near_identical(statements[a], statements[b]):
                continue
            # The one with more words stays; when level, the first (in its place).
            keep, drop = (b, a) if len(statements[b].words) > len(statements[a].words) else (a, b)
            statements[drop].rep = keep
            if drop == a:
                break


def _near_identical(a: _Statement, b: _Statement) -> bool:
    if not a.words or not b.words:
        return a.text.casefold() == b.text.casefold()
    if _NUMBERS.findall(a.text) != _NUMBERS.findall(b.text) and not (
        a.words <= b.words or b.words <= a.words
    ):
        return False  # "room 12" is not "room 14", however alike the rest
    shared = len(a.words & b.words)
    smaller = min(len(a.words), len(b.words))
    return shared / len(a.words | b.words) >= NEAR_IDENTICAL or (shared == smaller and smaller >= 2)


def _subject(s: _Statement) -> str:
    ordered = tokenize(s.text)
    return ordered[0] if ordered else s.text[:2]


def _split_by_subject(
    kept: list[_Statement], indexes: list[int], max_parts: int
) -> list[list[int]]:
    """The kept statements' indexes in at most ``max_parts`` parts, by subject."""
    subjects: dict[str, list[int]] = {}
    for s, index in zip(kept, indexes, strict=True):
        subjects.setdefault(_subject(s), []).append(index)
    count = max(1, min(max_parts, len(subjects)))
    parts: list[list[int]] = [[] for _ in range(count)]
    for group in sorted(subjects.values(), key=lambda g: (-len(g), g[0])):
        min(parts, key=len).extend(group)
    return [sorted(p) for p in parts if p]


def _fold(texts: list[str]) -> str:
    """The statements as one text, one per line; those sharing their first words
    folded into one line (in the place of the first of them)."""
    groups: dict[str, list[str]] = {}
    for text in texts:
        groups.setdefault(_head(text.rstrip(_END).strip()), []).append(text)
    return "\n".join(_folded(group) for group in groups.values())


def _head(body: str) -> str:
    """What statements folded together share; unique when too short to share."""
    if _CJK.match(body):
        return body[:FOLD_PREFIX] if len(body) > FOLD_PREFIX else "\0" + body
    words = body.split()
    return " ".join(words[:FOLD_PREFIX]).casefold() if len(words) > FOLD_PREFIX else "\0" + body


def _folded(texts: list[str]) -> str:
    """One statement as written, or several folded: the shared words once, then each
    one's own part (ending as the first one ends)."""
    if len(texts) == 1:
        return texts[0]
    bodies = [t.rstrip(_END).strip() for t in texts]
    end = texts[0][len(texts[0].rstrip(_END)) :]
    cjk = bool(_CJK.match(bodies[0]))
    units = [list(b) if cjk else b.split() for b in bodies]
    shared = 0
    while all(len(u) > shared for u in units) and (
        len({(u[shared] if cjk else u[shared].casefold()) for u in units}) == 1
    ):
        shared += 1
    tails = [u[shared:] for u in units]
    if not all(tails) or (not cjk and any(len(t) > FOLD_TAIL_WORDS for t in tails)):
        return "\n".join(texts)
    if cjk:
        return "".join(units[0][:shared]) + "\u3001".join("".join(t) for t in tails) + end
    return " ".join(units[0][:shared]) + " " + ", ".join(" ".join(t) for t in tails) + end


def _absorb_memberless(parts: list[Part]) -> list[Part]:
    """A part no original starts in joins the part before it (or after it)."""
    out: list[Part] = []
    for part in parts:
        if not part.members and out:
            out[-1].text += "\n" + part.text
        elif out and not out[-1].members:
            part.text = out[-1].text + "\n" + part.text
            out[-1] = part
        else:
            out.append(part)
    return out
