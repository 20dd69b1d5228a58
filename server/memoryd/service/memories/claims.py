"""Claims a memory makes about a subject, read with rules (English and Chinese), and
the deterministic judgement of how a newer memory relates to an older one.

A claim is (subject, predicate class, value, qualifier, negated): "The user prefers
dark blue for slides" is (@user, preference, "dark blue", "for slides", no). First
person and "the user" are one subject, ``@user``. A clause without a known predicate
makes no claim, except a negated one ("no longer blue") or a replacement ("use green
instead", 改用绿色), which take the subject and predicate of the clause before them.

How a newer claim relates to an older one about the same subject and predicate:

- negated, sharing a value word (Chinese: a character pair) -> ``contradicts``;
- the same value -> ``supports``; the old value's words all in the new one, and more ->
  ``refines``;
- another value, when the predicate holds one value at a time (prefers, favourite ...
  is, name, lives in, works at, age, birthday, email, phone) or the claim is a
  replacement -> ``supersedes``. When the predicate names no category ("prefers X",
  with no "for ..." qualifier) the two values must also be of one kind, which the
  caller decides (:attr:`Judgement.compare_values`).

These rules are deliberately narrow: a memory archived wrongly is worse than two kept.
An LLM, when configured, judges instead (memoryd.service.memories.contradiction).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

from memoryd.domain.relations import RelationKind

USER = "@user"
_CJK_CLASS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_CJK = re.compile(f"[{_CJK_CLASS}]")
_TOKEN = re.compile(rf"[a-z0-9]+(?:'[a-z]+)?|[{_CJK_CLASS}]")
_CLAUSES = re.compile(
    r"[;,.!?:()\[\]\"\n\u3002\uff0c\uff1b\uff01\uff1f\uff1a\u3001]+|\bbut\b|但是|不过"
)


@dataclass(frozen=True, slots=True)
class _Predicate:
    pattern: re.Pattern[str]
    kind: str
    #: One value at a time (a new value replaces the old).
    exclusive: bool
    #: The predicate names the category of its value ("name is", "lives in").
    specific: bool


def _p(pattern: str, kind: str, *, exclusive: bool = False, specific: bool = False) -> _Predicate:
    return _Predicate(re.compile(pattern), kind, exclusive, specific)


# Ordered: the first that matches a clause wins (specific before general).
_PREDICATES = (
    _p(
        r"\bfavou?rite\s+(?P<noun>[a-z]+)\s+(?:is|are)\b",
        "preference",
        exclusive=True,
        specific=True,
    ),
    _p(r"\b(?:prefers?|preferred|preferring)\b", "preference", exclusive=True),
    _p(r"\b(?:likes?|liked|loves?|loved|enjoys?|enjoyed|wants?|wanted)\b", "preference"),
    _p(r"\b(?:name\s+is|called|named|goes\s+by)\b", "name", exclusive=True, specific=True),
    _p(
        r"\b(?:lives?|lived|living)\s+in\b|\bmoved\s+to\b|\bbased\s+in\b",
        "residence",
        exclusive=True,
        specific=True,
    ),
    _p(
        r"\b(?:works?|worked|working)\s+(?:at|for)\b|\bemployed\s+(?:at|by)\b",
        "employer",
        exclusive=True,
        specific=True,
    ),
    _p(r"\b(?:works?|worked|working)\s+as\b|\bjob\s+is\b", "job", exclusive=True, specific=True),
    _p(r"\bbirthday\s+is\b|\bborn\s+on\b", "birthday", exclusive=True, specific=True),
    _p(r"\bemail(?:\s+address)?\s+is\b", "email", exclusive=True, specific=True),
    _p(r"\bphone(?:\s+number)?\s+is\b", "phone", exclusive=True, specific=True),
    _p(r"\b(?:is|am|are)\s+(?P<value>\d+)\s+years?\s+old\b", "age", exclusive=True, specific=True),
    _p(r"\ballergic\s+to\b", "allergy"),
    _p(r"\b(?:uses?|used|using)\b", "use"),
    _p(r"最喜欢的(?P<noun>[^\s是]{1,4})是", "preference", exclusive=True, specific=True),
    _p(r"偏好|更喜欢|最喜欢|偏爱|首选", "preference", exclusive=True),
    _p(r"喜欢|喜爱|爱|想要", "preference"),
    _p(r"名字是|名叫|叫做|叫", "name", exclusive=True, specific=True),
    _p(r"住在|搬到|住", "residence", exclusive=True, specific=True),
    _p(r"在(?P<value>[^\s]{1,12}?)工作", "employer", exclusive=True, specific=True),
    _p(r"生日是", "birthday", exclusive=True, specific=True),
    _p(r"对(?P<value>[^\s]{1,12}?)过敏", "allergy"),
    _p(r"(?P<value>\d+|[一二三四五六七八九十]+)岁", "age", exclusive=True, specific=True),
    _p(r"使用|(?<!改)用(?!户)", "use"),
)
_NEGATION = re.compile(
    r"n't\b|\b(?:no\s+longer|not|never|stopped|no\s+more|anymore|any\s+more)\b|"
    r"不再|不想|不要|不用|不是|没有|不|没|别"
)
_REPLACEMENT = re.compile(
    r"^(?:please\s+)?(?:now\s+)?(?:use|switch(?:ed)?\s+to|change(?:d)?\s+(?:it\s+)?to|"
    r"go\s+with|pick)\b|\binstead\b|改用|换成|改成|改为|换用|而是"
)
_QUALIFIER = re.compile(r"\b(?:for|when|during|while|because|since|with|on|at|in)\b")
_USER_WORDS = frozenset(
    [
        "i",
        "i'm",
        "me",
        "my",
        "mine",
        "myself",
        "we",
        "we're",
        "our",
        "ours",
        "us",
        "user",
        "user's",
        "users",
    ]
)
_USER_CJK = re.compile(r"我们|我的|我|用户的|用户")
_FILLER_TEXT = (
    "the a an really also still now always usually just very much so please too instead "
    "anymore longer more then am is are was were be been being do does did have has had "
    "will would 's"
)
_FILLER = frozenset(_FILLER_TEXT.split())
_CJK_PARTICLES = "了的吧呢啊呀嘛哦"


@dataclass(frozen=True, slots=True)
class Claim:
    subject: tuple[str, ...]
    kind: str
    value: tuple[str, ...]
    qualifier: tuple[str, ...] = ()
    negated: bool = False
    exclusive: bool = False
    specific: bool = False
    #: "use green instead": replaces whatever the clause before it negated.
    replacement: bool = False


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold().replace("\u2019", "'")


def _tokens(text: str) -> tuple[str, ...]:
    return tuple(t for t in _TOKEN.findall(text) if t not in _FILLER)


def _subject(text: str) -> tuple[str, ...]:
    """The words before the predicate; the user ("I", "my", "the user", 我, 用户) is
    ``@user``, so "my sister" is (@user, sister) and "I" is (@user,)."""
    text = _NEGATION.sub(" ", _USER_CJK.sub(" user ", text))
    out: list[str] = []
    for word in _TOKEN.findall(text):
        if word in _FILLER:
            continue
        word = USER if word in _USER_WORDS else word
        if not (out and out[-1] == USER and word == USER):
            out.append(word)
    return tuple(out)


def _value_and_qualifier(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    text = _NEGATION.sub(" ", text).strip().rstrip(_CJK_PARTICLES)
    match = _QUALIFIER.search(text)
    if match is None:
        return _tokens(text), ()
    return _tokens(text[: match.start()]), _tokens(text[match.start() :])


def _clause_claim(clause: str, previous: Claim | None) -> Claim | None:
    negated = bool(_NEGATION.search(clause))
    replacement = bool(_REPLACEMENT.search(clause)) and not negated
    for predicate in _PREDICATES:
        match = predicate.pattern.search(clause)
        if match is None:
            continue
        groups = match.groupdict()
        kind = f"{predicate.kind}:{groups['noun']}" if groups.get("noun") else predicate.kind
        before, after = clause[: match.start()], clause[match.end() :]
        if groups.get("value"):
            value, qualifier = _tokens(groups["value"]), _value_and_qualifier(after)[1]
        else:
            value, qualifier = _value_and_qualifier(after)
        subject = _subject(_REPLACEMENT.sub(" ", before))
        if replacement and previous is not None and not subject:
            return Claim(
                previous.subject,
                previous.kind,
                value,
                previous.qualifier,
                False,
                True,
                previous.specific,
                True,
            )
        if not value:
            return None
        return Claim(
            subject,
            kind,
            value,
            qualifier,
            negated,
            predicate.exclusive,
            predicate.specific,
            replacement,
        )
    if previous is None or not (negated or replacement):
        return None
    # No predicate of its own: "no longer blue", "use green instead", 改用绿色.
    text = _REPLACEMENT.sub(" ", clause)
    value, _ = _value_and_qualifier(text)
    if not value:
        return None
    return Claim(
        previous.subject,
        previous.kind,
        value,
        previous.qualifier,
        negated,
        exclusive=True,
        specific=previous.specific,
        replacement=replacement,
    )


def claims(text: str) -> list[Claim]:
    """The claims of ``text``, clause by clause."""
    return list(_claims(text))


@functools.lru_cache(maxsize=8192)
def _claims(text: str) -> tuple[Claim, ...]:
    """Cached: a stored memory is judged again as a candidate of later Remembers."""
    out: list[Claim] = []
    previous: Claim | None = None
    for clause in _CLAUSES.split(_fold(text)):
        clause = clause.strip()
        if not clause:
            continue
        for part in re.split(r"\band\s+(?=i\b|i'm\b|my\b|we\b|the user\b)|并且|而且", clause):
            claim = _clause_claim(part.strip(), previous)
            if claim is not None:
                out.append(claim)
                previous = claim
    return tuple(out)


# ---------------------------------------------------------------- judgement


@dataclass(frozen=True, slots=True)
class Judgement:
    kind: RelationKind
    reason: str
    #: (old value, new value) that must be of one kind for ``kind`` to hold.
    compare_values: tuple[str, str] | None = None


def _content(value: tuple[str, ...]) -> set[str]:
    """Words of a value, and its Chinese as character pairs (single characters when a
    run is one character long)."""
    words = {t for t in value if not _CJK.fullmatch(t)}
    cjk = "".join(t for t in value if _CJK.fullmatch(t))
    pairs = {cjk[i : i + 2] for i in range(len(cjk) - 1)} or set(cjk)
    return words | pairs


def _same_subject(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    return a == b or not a or not b


def _text(value: tuple[str, ...]) -> str:
    return "".join(value) if all(_CJK.fullmatch(t) for t in value) else " ".join(value)


def same_kind_cjk(old: str, new: str) -> bool | None:
    """For two Chinese values, whether they name one kind of thing (their last
    character, the head noun, or their first, the verb, agree); None when either is
    not all Chinese."""
    if not (old and new and all(_CJK.fullmatch(c) for c in old + new)):
        return None
    return old[-1] == new[-1] or old[0] == new[0]


def _pair(new: Claim, old: Claim) -> Judgement | None:
    if not _same_subject(new.subject, old.subject) or old.negated:
        return None
    base_new, base_old = new.kind.split(":")[0], old.kind.split(":")[0]
    if new.negated:
        if base_new == base_old and _content(new.value) & _content(old.value):
            return Judgement(RelationKind.CONTRADICTS, f"rule: negated {base_new}")
        return None
    if new.kind != old.kind or new.qualifier != old.qualifier:
        return None
    if new.value == old.value:
        return Judgement(RelationKind.SUPPORTS, f"rule: same {base_new}")
    if set(old.value) < set(new.value):
        return Judgement(RelationKind.REFINES, f"rule: more specific {base_new}")
    if not (new.exclusive or new.replacement):
        return None
    reason = f"rule: new {base_new}"
    if new.specific or new.qualifier:
        return Judgement(RelationKind.SUPERSEDES, reason)
    return Judgement(RelationKind.SUPERSEDES, reason, (_text(old.value), _text(new.value)))


_STRENGTH = {
    RelationKind.CONTRADICTS: 3,
    RelationKind.SUPERSEDES: 3,
    RelationKind.REFINES: 2,
    RelationKind.SUPPORTS: 1,
}


def judge(new: list[Claim], old: list[Claim]) -> list[Judgement]:
    """Every way the newer claims relate to the older ones, strongest first."""
    found = [j for n in new for o in old if (j := _pair(n, o)) is not None]
    return sorted(found, key=lambda j: -_STRENGTH.get(j.kind, 0))
