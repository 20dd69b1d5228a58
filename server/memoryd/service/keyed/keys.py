"""Key paths of keyed memory: normalisation, and their mirror as a file path.

Pure functions. A normalised key is NFC Unicode, starts with "/", has no empty,
"." or ".." segment, no control character (NUL included), no trailing "/" (that
names a directory), and fits the key's byte limit. A segment may be as long as the
key: the file mirror (memory_root) keeps each segment readable as written, encodes
only what cannot or should not be in a file name (file_segment) and shortens a long
one to its first bytes plus a short hash, so a key never names anything outside the
mirror's root and every key has a file name.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import quote

SEP = "/"
#: Keys under this directory carry knowledge from elsewhere: provenance is required.
KB_PREFIX = "/kb/"
#: Always %XX in file names: the separator, a Windows one (never a path part on any
#: system), the escape character and the shortened-name marker.
_ALWAYS_ENCODED = frozenset("/\\%~")
#: Unicode categories encoded in file names: controls (NUL, newline, ...), surrogates,
#: line and paragraph separators.
_ENCODED_CATEGORIES = frozenset({"Cc", "Cs", "Zl", "Zp"})
#: Bidirectional controls: they would make `ls` show a name other than the file's.
_BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
#: UTF-8 bytes of an encoded segment past which it is cut and gets a hash suffix
#: (file systems allow 255, with ".json" and the temporary files' prefix to come).
MAX_FILE_SEGMENT_BYTES = 200
#: quoted_segment: what it keeps besides letters and digits, and its longest name.
_QUOTE_SAFE = "-_.@+=,"
_QUOTED_SEGMENT_BYTES = 100
_HASH_CHARS = 12
FILE_SUFFIX = ".json"
_SLASHES = re.compile("/+")


class InvalidKey(ValueError):
    """Why a key or prefix is not acceptable (the message completes "key ...")."""


@dataclass(frozen=True, slots=True)
class KeyLimits:
    max_key_bytes: int = 512


def _clean(raw: str, what: str) -> str:
    """Common checks of keys and prefixes; returns NFC text with "//" collapsed."""
    try:
        raw.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidKey("is not valid UTF-8") from None
    text = unicodedata.normalize("NFC", raw)
    if "\x00" in text:
        raise InvalidKey("must not contain NUL characters")
    if any(unicodedata.category(ch) == "Cc" for ch in text):
        raise InvalidKey("must not contain control characters")
    if not text.startswith(SEP):
        raise InvalidKey(f"must start with '/' (an absolute path like /user/{what})")
    return _SLASHES.sub(SEP, text)


def _check_segments(segments: list[str], text: str, limits: KeyLimits) -> None:
    for segment in segments:
        if segment in (".", ".."):
            raise InvalidKey("must not contain '.' or '..' segments")
    size = len(text.encode("utf-8"))
    if size > limits.max_key_bytes:
        raise InvalidKey(f"is {size} bytes; the limit is {limits.max_key_bytes}")


def normalise_key(raw: str, limits: KeyLimits = KeyLimits()) -> str:
    """The canonical form of a key, or InvalidKey saying what is wrong."""
    if not raw:
        raise InvalidKey("must not be empty")
    text = _clean(raw, "name")
    if text.endswith(SEP):
        raise InvalidKey("must not end with '/': that names a directory, not a key")
    _check_segments(text[1:].split(SEP), text, limits)
    return text


def normalise_prefix(raw: str, limits: KeyLimits = KeyLimits()) -> str:
    """A directory to list, always ending in "/"; "" means the root "/"."""
    if not raw:
        return SEP
    text = _clean(raw, "")
    if not text.endswith(SEP):
        text += SEP
    _check_segments([s for s in text[1:-1].split(SEP) if s], text, limits)
    return text


def needs_provenance(key: str) -> bool:
    return key.startswith(KB_PREFIX)


def child_of(key: str, directory: str) -> tuple[str, bool]:
    """The next path component of ``key`` below ``directory`` and whether it is a
    directory: ("/a/b/c", "/a/") -> ("/a/b/", True); ("/a/x", "/a/") -> ("/a/x", False)."""
    rest = key[len(directory) :]
    head, sep, _ = rest.partition(SEP)
    if sep:
        return directory + head + SEP, True
    return key, False


# ---------------------------------------------------------------- file mirror


def _hex(ch: str) -> str:
    return "".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))


def _readable(ch: str) -> bool:
    """Whether a character is written as it is in a file name (see file_segment)."""
    if ch in _ALWAYS_ENCODED or ch in _BIDI_CONTROLS:
        return False
    return unicodedata.category(ch) not in _ENCODED_CATEGORIES


def _encode_segment(segment: str) -> str:
    if all(map(_readable, segment)):
        return segment
    return "".join(ch if _readable(ch) else _hex(ch) for ch in segment)


def _shorten(encoded: str, original: str, room: int) -> str:
    """Cut ``encoded`` to ``room`` UTF-8 bytes (on a character boundary, never inside
    a %XX escape) plus "~<hash of the segment>"."""
    digest = hashlib.sha256(original.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_CHARS]
    keep = room - len(digest) - 1
    cut = encoded.encode("utf-8")[:keep].decode("utf-8", errors="ignore")
    escape = cut.rfind("%")
    if escape != -1 and escape > len(cut) - 3:
        cut = cut[:escape]
    return f"{cut}~{digest}"


def _file_name(encoded: str, segment: str, *, leaf: bool, limit: int) -> str:
    if encoded.startswith("."):  # no hidden files: `ls` shows every key
        encoded = "%2E" + encoded[1:]
    if not leaf and encoded.endswith(FILE_SUFFIX):
        encoded = encoded[: -len(FILE_SUFFIX)] + "%2Ejson"
    if len(encoded.encode("utf-8")) > limit:
        encoded = _shorten(encoded, segment, limit)
    return encoded + FILE_SUFFIX if leaf else encoded


def file_segment(segment: str, *, leaf: bool) -> str:
    """One key segment (or tenant / agent id) as a file name (a leaf gets ".json"),
    readable as written: ``牙科复诊`` stays ``牙科复诊``.

    Encoded as %XX (UTF-8 bytes) are only "/", "\\", "%" and "~" (so a name decodes
    back: "%" starts every escape, "~" marks a shortened name), control characters
    (NUL, newlines), line and paragraph separators and the bidirectional controls
    (a listing shows the name as it is); a leading "." (no hidden files, never "..");
    and a directory's trailing ".json" (so "/a" (a.json) and "/a.json/b"
    (a%2Ejson/b.json) cannot collide). A name past MAX_FILE_SEGMENT_BYTES is cut
    plus "~" and a hash of the segment.
    """
    return _file_name(_encode_segment(segment), segment, leaf=leaf, limit=MAX_FILE_SEGMENT_BYTES)


def quoted_segment(segment: str, *, leaf: bool) -> str:
    """The percent-encoding of every byte but letters, digits and "-_.@+=," (at most
    100 bytes): key-history archives' folder names, and the names a memory_root had
    before file_segment kept UTF-8 (mirror.py renames such a partition directory)."""
    encoded = quote(segment, safe=_QUOTE_SAFE, encoding="utf-8").replace("~", "%7E")
    return _file_name(encoded, segment, leaf=leaf, limit=_QUOTED_SEGMENT_BYTES)


def key_file_path(key: str) -> PurePosixPath:
    """The relative file path of a normalised key: "/user/a b" -> user/a%20b.json.

    Never absolute and never containing "." or ".." parts; callers writing files
    still resolve the result under their root and check it stays there.
    """
    segments = key.lstrip(SEP).split(SEP)
    if not key.startswith(SEP) or any(s in ("", ".", "..") for s in segments):
        raise InvalidKey("is not a normalised key")
    parts = [file_segment(s, leaf=False) for s in segments[:-1]]
    parts.append(file_segment(segments[-1], leaf=True))
    return PurePosixPath(*parts)
