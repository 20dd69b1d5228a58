"""Sentences, and which of them state a fact about the user (no model needed).

Used where no LLM decides what matters: the extractive session summary keeps every
fact sentence a user said before anything else, EndSession extraction remembers
each one, and consolidation's deterministic merge keeps every distinct sentence.

A user sentence states a fact when it is not a bare question or acknowledgement and
it carries at least one of: a first-person statement ("I", "my", "we", 我), a
preference or standing condition ("prefer", "allergic", "always", 喜欢, 过敏), a
number, a name (a capitalised word after the first), or a date (month or weekday
names, "tomorrow", 年/月/日, 星期). The rules err on the side of keeping: a sentence
kept that did not matter costs a few tokens, a fact dropped is lost.
"""

from __future__ import annotations

import re
import unicodedata

#: After . ! ? plus whitespace, right after the ideographic full stop and the
#: full-width ! ? and semicolon, or at line breaks.
_SENTENCE_END = re.compile(
    r"(?<=[.!?;\u3002\uff01\uff1f\uff1b])\s+|(?<=[\u3002\uff01\uff1f\uff1b])|\n+"
)
#: A piece ending in one of these did not end a sentence.
_ABBREVIATION = re.compile(
    r"(?:^|\s)(?:dr|mr|mrs|ms|prof|st|sr|jr|vs|etc|e\.g|i\.e|no|approx|[a-z])\.$",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(
    r"\b(?:i|i'm|im|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|our|ours|us)\b|我",
    re.IGNORECASE,
)
_STANDING = re.compile(
    r"\b(?:prefer\w*|like[sd]?|love[sd]?|hate[sd]?|dislike[sd]?|favou?rite\w*|want\w*|"
    r"need\w*|allerg\w*|intoleran\w*|always|never|usually|avoid\w*|vegetarian|vegan|"
    r"remember|birthday|anniversary|address|email|phone|live[sd]?|work(?:s|ed)?|"
    r"name[sd]?|called|born|married|speak\w*)\b|"
    r"喜欢|偏好|讨厌|最爱|爱吃|过敏|总是|从不|不吃|住在|工作|名字|叫|生日|电话|地址",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"\d|[一二三四五六七八九十百千万两]+[个岁年月日号点]")
_DATE = re.compile(
    r"\b(?:january|february|march|april|may|june|july|august|september|october|"
    r"november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|monday|"
    r"tuesday|wednesday|thursday|friday|saturday|sunday|today|tomorrow|yesterday|"
    r"tonight|weekend|morning|evening)\b|[年月日号]|星期|周[一二三四五六日天末]|今天|明天|昨天|后天",
    re.IGNORECASE,
)
#: A capitalised word that is not the sentence's first (a name, a place, a brand).
_NAME = re.compile(r"(?<=[\w,;:] )[A-Z][\w'-]+")
_QUESTION_END = re.compile(r"[?\uff1f]\s*$|吗[?\uff1f]?\s*$")
_WORD = re.compile(r"[^\W\d_]+|\d+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_FILLER_TEXT = (
    "ok okay sure yes yeah yep no nope thanks thank you please hi hello hey bye great "
    "cool fine good nice alright right got it perfect"
)
_FILLER = frozenset(_FILLER_TEXT.split())


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` in order, whitespace collapsed, empty ones dropped; a
    full stop after an abbreviation ("Dr.", "e.g.") or an initial ("J.") ends none."""
    out: list[str] = []
    for raw in _SENTENCE_END.split(text):
        sentence = " ".join(raw.split())
        if not sentence:
            continue
        if out and _ABBREVIATION.search(out[-1]):
            out[-1] = f"{out[-1]} {sentence}"
        else:
            out.append(sentence)
    return out


def _substantive(sentence: str) -> bool:
    """More than a greeting or an acknowledgement."""
    words = [w.lower() for w in _WORD.findall(sentence)]
    cjk = len(_CJK.findall(sentence))
    if cjk >= 3:
        return True
    return len([w for w in words if w not in _FILLER]) >= 2


def is_fact_sentence(sentence: str) -> bool:
    """Whether a sentence a user said states something worth keeping (see the module
    docstring for the rules)."""
    text = unicodedata.normalize("NFKC", sentence).strip()
    if not _substantive(text):
        return False
    first_person = bool(_FIRST_PERSON.search(text))
    if _QUESTION_END.search(text) and not first_person:
        return False
    return bool(
        first_person
        or _STANDING.search(text)
        or _NUMBER.search(text)
        or _DATE.search(text)
        or _NAME.search(text)
    )


def is_preference(sentence: str) -> bool:
    """A fact sentence that states a preference (the memory type it is kept as)."""
    return bool(
        re.search(
            r"\b(?:prefer\w*|like[sd]?|love[sd]?|hate[sd]?|dislike[sd]?|favou?rite\w*)\b|"
            r"喜欢|偏好|讨厌|最爱",
            sentence,
            re.IGNORECASE,
        )
    )
