"""The ranges every stored number and id must stay in, and checked arithmetic on them.

Stores hold versions and counters as int64 and timestamps as microseconds, but a value
is bounded far below that here: versions and counters stay exact in a double (the
TypeScript client and JSON readers see int64 as a JavaScript number), and an imported
version leaves room for more writes than any record will ever get. Ids that name a
tenant or an agent become path segments (key-history archives) and log fields, so they
are a plain alphabet, matched in full, and never only dots; they are kept in NFKC form
and letters of one script, so that no two ids look alike but name different agents.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import timedelta

from memoryd.domain.errors import FailedPrecondition

#: Highest version (and counter) a record may hold: 2^53 - 1.
MAX_VERSION = 2**53 - 1
#: Highest version an Import accepts: leaves 2^53 - 2^52 (> 4.5e15) writes of room.
MAX_IMPORTED_VERSION = 2**52
#: Highest value of a statistics counter (access counts, message counts).
MAX_COUNT = 2**53 - 1
#: protobuf Duration's valid range: +-10,000 years.
MAX_DURATION_SECONDS = 315_576_000_000
#: Longest TTL a record may carry (keeps expiry instants far from datetime's end).
MAX_TTL = timedelta(days=36_500)
#: Deepest nesting of arrays and objects in a stored JSON value (the top level is 1).
#: A value travels as ``google.protobuf.Value`` too, and every protobuf parser stops
#: at 100 nested messages: an object level costs three (Value, Struct, map entry), so
#: 32 levels is the most a ListKeys response can carry, and an export record wraps
#: a value in two messages more. 24 keeps every response and export line readable.
MAX_JSON_DEPTH = 24
#: UTF-8 bytes of a source's locator (a URL, a path, an id, or an object's JSON text):
#: it is stored with every write of its memory or key, and shown in every listing.
MAX_LOCATOR_BYTES = 4096
#: Highest session message seq (and message count): seqs are 12 digits in record keys.
MAX_SEQ = 10**12 - 1

#: Tenant and agent ids: 1..128 letters, digits, "_", ".", ":", "@" or "-".
ID_PATTERN = re.compile(r"[\w.:@-]{1,128}")
ID_RULE = "must be 1-128 characters of letters, digits, '.', ':', '@', '_' or '-', not only dots"
#: Scripts an id may mix (Unicode TS #39, "highly restrictive"): Japanese, Chinese
#: with Bopomofo, Korean, each with Latin. Any other mix is refused.
_SCRIPT_MIXES = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
)
#: Phonetic letters (IPA, phonetic extensions): look-alikes of plain Latin letters
#: (LATIN SMALL LETTER ALPHA for "a") that NFKC keeps.
_PHONETIC = ((0x0250, 0x02AF), (0x1D00, 0x1DBF))


def canonical_id(value: str) -> str:
    """The one form a tenant or agent id is kept in: NFKC, so compatibility forms
    (full-width letters, ligatures, circled or styled letters) name the same agent as
    their plain letters."""
    return unicodedata.normalize("NFKC", value)


def _script(ch: str) -> str | None:
    """The script of a letter or digit by its Unicode name; None for ASCII digits and
    punctuation (common to every script)."""
    if ch.isascii():
        return "LATIN" if ch.isalpha() else None
    word = unicodedata.name(ch, "UNKNOWN").split(" ", 1)[0].split("-", 1)[0]
    return "HAN" if word in ("CJK", "IDEOGRAPHIC") else word


def _mixed_scripts(value: str) -> str | None:
    """Why ``value`` is confusable: phonetic look-alike letters, or letters of more
    than one script (a Cyrillic small a in a Latin name); None when it is neither."""
    if any(low <= ord(ch) <= high for ch in value for low, high in _PHONETIC):
        return "must not contain phonetic letters (IPA look-alikes of plain letters)"
    scripts = {script for ch in value if (script := _script(ch)) is not None}
    if len(scripts) <= 1 or any(scripts <= mix for mix in _SCRIPT_MIXES):
        return None
    return (
        f"mixes the scripts {', '.join(sorted(scripts))}: letters of one script only "
        "(Latin may go with Chinese, Japanese or Korean), so that no id looks like another"
    )


def id_problem(value: str) -> str | None:
    """Why ``value`` (in its canonical form, see :func:`canonical_id`) is not a valid
    tenant or agent id (None when it is)."""
    if not value:
        return "must not be empty"
    if ID_PATTERN.fullmatch(value) is None or not value.strip("."):
        return ID_RULE
    if not value.isascii():
        return _mixed_scripts(value)
    return None


def next_version(current: int) -> int:
    """The version after ``current``; FAILED_PRECONDITION past MAX_VERSION (the record
    cannot be written again, rather than overflowing what the store holds)."""
    if current >= MAX_VERSION:
        raise FailedPrecondition(
            f"the record is at version {current}, the highest a record may reach "
            f"({MAX_VERSION}); it cannot be written again"
        )
    return max(current, 0) + 1
