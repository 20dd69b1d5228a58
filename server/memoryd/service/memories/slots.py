"""Changed values, read with rules: "the deadline is Friday" then "the deadline moved
to Monday" (截止日期是周五 / 截止日期改到周一) say one subject's value changed.

A statement fills a slot when it has the shape "<subject> is / moved to / changed to
/ was rescheduled for ... <value>" (Chinese: 是 / 在 / 定在 / 改到 / 改成 / 推迟到 / 提前到
...) and its value is of a known kind: a weekday, a date, a time of day, a number, or
a place or name (a subject that says so: "location", "venue", "name", 地点, 名字 ...;
in English also a capitalised value: "Berlin", "Alice"). A newer statement supersedes
an older one when both fill the slot of the same subject (the words before the verb,
articles and possessives aside: "Project Alpha's deadline" is not "Project Beta's
deadline") with values of one kind that differ.

Deliberately narrow, as memoryd.service.memories.claims is: the candidates are already
the stored memories closest to the new one (contradictions.min_similarity), the
subject must be the same words, a pronoun alone ("it", "this", 这个) is no subject, and
a long value (a whole clause) fills no slot. A memory archived wrongly is worse than
two kept.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

_CHANGE_EN = (
    r"(?:moved|changed|pushed|postponed|rescheduled|shifted|brought\s+forward|"
    r"updated|set|delayed|bumped)(?:\s+back)?\s+(?:to|for|until|till)"
)
_EN = re.compile(
    r"^(?P<subject>[a-z0-9][a-z0-9' &/-]{0,60}?)\s+(?:"
    rf"(?:is|are|was|were|will\s+be|has\s+been|have\s+been|got)\s+(?:now\s+|still\s+|actually\s+)?"
    rf"(?:{_CHANGE_EN}\s+)?|(?:has\s+|have\s+)?{_CHANGE_EN}\s+|(?:now\s+)?falls\s+on\s+)"
    r"(?:now\s+)?(?:on|at|in)?\s*(?P<value>[^,;]+?)\s*(?:now|instead)?$"
)
_CHANGE_ZH = "改到|改成|改为|改在|推迟到|推到|延期到|延后到|延迟到|提前到|挪到|换到|换成|调到|调整到|调整为|变成|变为|定在|定于|是|在|为"
_ZH = re.compile(
    rf"^(?P<subject>[^,;\u3002]{{1,20}}?)(?:已经|已|现在|又|还是|也)?(?:{_CHANGE_ZH})"
    r"(?P<value>[^,;\u3002]{1,16}?)[了啦吧呢啊]*$"
)
_WEEKDAY_EN = re.compile(r"\b(mon|tues|wednes|thurs|fri|satur|sun)day\b")
_MONTH = r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
_DATE_EN = re.compile(
    rf"\b(?:{_MONTH})\b\s*\d{{0,2}}|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTH})\b|"
    r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b"
)
_TIME_EN = re.compile(
    r"\b\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)|\b\d{1,2}:\d{2}\b|\bnoon\b|\bmidnight\b"
)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
_WEEKDAY_ZH = re.compile(r"(?:周|星期|礼拜)[一二三四五六日天1-7]")
_DATE_ZH = re.compile(
    r"[\d一二三四五六七八九十]+月[\d一二三四五六七八九十]+[日号]|\d{4}-\d{2}-\d{2}"
)
_TIME_ZH = re.compile(r"(?:上午|下午|晚上|早上|中午)?[\d一二三四五六七八九十]+(?:点|:\d{2})半?")
_PLACE_WORDS = re.compile(
    r"\b(?:location|venue|place|city|address|office|room|hotel|restaurant|destination|"
    r"name|owner|manager|lead|contact|host|speaker|organizer|organiser)\b|"
    r"地点|地址|城市|地方|场地|会议室|酒店|餐厅|目的地|名字|名称|负责人|联系人|主持人"
)
_DROP = frozenset(
    [
        "the",
        "a",
        "an",
        "my",
        "our",
        "your",
        "his",
        "her",
        "their",
        "its",
        "this",
        "that",
        "these",
        "those",
    ]
)
_PRONOUNS = frozenset(["it", "this", "that", "they", "he", "she", "we", "i", "you", "there"]) | {
    "这个",
    "那个",
    "它",
    "这",
    "那",
}
_ZH_OWNER = re.compile(r"^(?:我们的|我的|用户的|你的)")
#: A value of more words than this is a clause, not a slot's value.
MAX_VALUE_WORDS = 5


@dataclass(frozen=True, slots=True)
class Slot:
    subject: str
    kind: str
    value: str


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold().replace("\u2019", "'").strip()


def _value_kind(value: str, original: str, subject: str) -> str | None:
    for kind, pattern in (
        ("weekday", _WEEKDAY_EN),
        ("weekday", _WEEKDAY_ZH),
        ("date", _DATE_EN),
        ("date", _DATE_ZH),
        ("time", _TIME_EN),
        ("time", _TIME_ZH),
    ):
        if pattern.search(value):
            return kind
    words = value.split()
    if words and _NUMBER.fullmatch(words[0].lstrip("$\u20ac\u00a3\u00a5")):
        # A number of a unit ("5000 dollars", "5 feet tall"): another unit is another
        # kind of value ("The user is 30" / "The user is 5 feet tall" both stay).
        return "number " + words[1] if len(words) > 1 else "number"
    if _PLACE_WORDS.search(subject):
        return "place or name"
    written = original.split()
    if written and all(w[:1].isupper() for w in written):
        return "place or name"
    return None


def _english(text: str, original: str) -> Slot | None:
    match = _EN.match(text)
    if match is None:
        return None
    subject = " ".join(w for w in match["subject"].split() if w not in _DROP)
    value = match["value"].strip(" .!")
    if not subject or subject in _PRONOUNS or len(value.split()) > MAX_VALUE_WORDS:
        return None
    start = original.casefold().rfind(value)
    kind = _value_kind(value, original[start : start + len(value)] if start >= 0 else "", subject)
    return None if kind is None else Slot(subject, kind, value)


def _chinese(text: str) -> Slot | None:
    match = _ZH.match(text)
    if match is None:
        return None
    subject = _ZH_OWNER.sub("", match["subject"]).rstrip("的")
    value = match["value"]
    if not subject or subject in _PRONOUNS:
        return None
    kind = _value_kind(value, "", subject)
    return None if kind is None else Slot(subject, kind, value)


@functools.lru_cache(maxsize=8192)
def slot_of(content: str) -> Slot | None:
    """The slot ``content`` fills, when it is one short statement of that shape."""
    original = content.strip().rstrip(".!\u3002\uff01")
    text = _fold(original)  # NFKC: full-width commas, colons, ! and ? are ASCII from here on
    if not text or re.search(r"[.!?;\u3002\n]", text):
        return None  # one statement only
    return _english(text, original) or _chinese(text)


def changed_value(new: str, old: str) -> str | None:
    """Why ``new`` supersedes ``old`` (the reason recorded), or None: both fill the same
    subject's slot with values of one kind that differ."""
    a, b = slot_of(new), slot_of(old)
    if a is None or b is None or a.subject != b.subject or a.kind != b.kind:
        return None
    if a.value == b.value:
        return None
    return f"rule: new {a.kind} for {a.subject}"
