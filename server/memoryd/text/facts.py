"""Sentences, and which of them state a fact about the user (no model needed).

Used where no LLM decides what matters: the extractive session summary keeps every
fact sentence a user said before anything else, EndSession extraction remembers
each one, and consolidation's deterministic merge keeps every distinct sentence.

A user sentence states a fact when it says something about the user or their world
that holds beyond the conversation: a first-person statement ("I", "my", "we", 我)
or a preference or standing condition ("prefer", "allergic", "always", 喜欢, 过敏).
Not a fact, whatever else it holds: a bare question, an acknowledgement, a request
to the agent ("can you", "please", "let's", an imperative), or talk about the
conversation itself ("we discussed", "turn 3 about", 我们聊了) unless it also states
a standing condition ("as I said, I'm allergic to peanuts"). A number, a date or a
name alone no longer makes a fact: "turn 7 about booking a table" is filler (issue
32: fifteen such turns became fifteen FACT memories). The standing words keep the
rules on the side of keeping what matters about a person.
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
    r"\b(?:prefer\w*|love[sd]?|hate[sd]?|dislike[sd]?|favou?rite\w*|allerg\w*|"
    r"intoleran\w*|always|never|usually|avoid\w*|vegetarian|vegan|birthday|anniversary|"
    r"my (?:address|email|phone)|name[sd]? is|called|born|married)\b|"
    r"喜欢|偏好|讨厌|最爱|爱吃|过敏|总是|从不|不吃|住在|名字|生日|电话|地址",
    re.IGNORECASE,
)
#: Weaker signs of a standing fact, enough in a statement but not in a request
#: ("I'd like to book a table") or in talk about the conversation.
_LEANING = re.compile(
    r"\b(?:like[sd]?|enjoy\w*|want\w*|need\w*|live[sd]?|works? (?:at|for|as)|speak\w*)\b|"
    r"工作|叫",
    re.IGNORECASE,
)
#: Talk about the conversation itself rather than about the world.
_META = re.compile(
    r"\b(?:discuss\w*|talk(?:ed|ing)?|chatt?\w*|mention\w*|covered|went over|"
    r"spoke|recap\w*|(?:this|the|our|previous|last|next) (?:conversation|chat|turn|session))\b|"
    r"\bturn \d+\b|讨论|聊了|刚才说",
    re.IGNORECASE,
)
#: A request or instruction to the agent.
_REQUEST = re.compile(
    r"^(?:please|pls|can you|could you|would you|will you|let's|let us|go ahead|"
    r"book|find|show|give|send|check|remind|look up|search|add|make|set|schedule|"
    r"cancel|call|tell me|write|draft|summari[sz]e|translate|help|i'd like to|"
    r"i would like to)\b|^(?:请|帮我|麻烦)",
    re.IGNORECASE,
)
_QUESTION_END = re.compile(r"[?\uff1f]\s*$|吗[?\uff1f]?\s*$")
_WORD = re.compile(r"[^\W\d_]+|\d+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_FILLER_TEXT = (
    "ok okay sure yes yeah yep no nope thanks thank you please hi hello hey bye great "
    "cool fine good nice alright right got it perfect"
)
_FILLER = frozenset(_FILLER_TEXT.split())
#: Words that say nothing about the world on their own ("I think so", "I will be there").
_LIGHT_TEXT = (
    "i im i'm me my mine myself we we're our us you it its it's that this there so too "
    "am is are was were be been being do did does done have has had will would can could "
    "should shall may might must think see guess know mean agree suppose hope bet get got "
    "a an the to of and or but just really very also then now here not don't didn't "
    "one sure well oh ah um"
)
_LIGHT = frozenset(_LIGHT_TEXT.split())


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
    if not _substantive(text) or _QUESTION_END.search(text):
        return False
    standing = bool(_STANDING.search(text))
    if _META.search(text) or _REQUEST.search(text):
        return standing
    if standing or _LEANING.search(text):
        return True
    return bool(_FIRST_PERSON.search(text)) and _says_something(text)


def _says_something(text: str) -> bool:
    """At least one word beyond pronouns, auxiliaries and fillers (or CJK text)."""
    if len(_CJK.findall(text)) >= 3:
        return True
    words = (w.lower() for w in _WORD.findall(text.replace("'", "")))
    return any(w not in _LIGHT and w not in _FILLER for w in words)


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
