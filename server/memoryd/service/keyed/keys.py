"""Key paths of keyed memory: normalisation, and their mirror as a file path.

Pure functions. A normalised key is NFC Unicode, starts with "/", has no empty,
"." or ".." segment, no control character (NUL included), no trailing "/" (that
names a directory), and fits the key's byte limit. A segment may be as long as the
key: the file mirror percent-encodes every segment and shortens a long one to its
first bytes plus a short hash, so a key never names anything outside the mirror's
root and every key has a file name.
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
#: Characters kept as they are in file names besides letters, digits and "_.-".
#: "~" is always encoded (quote keeps it): it marks shortened segments instead.
PATH_SAFE = "-_.@+=,"
#: Encoded segments longer than this many bytes are cut and get a hash suffix.
MAX_FILE_SEGMENT_BYTES = 100
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


def _encode_segment(segment: str) -> str:
    return quote(segment, safe=PATH_SAFE, encoding="utf-8").replace("~", "%7E")


def _shorten(encoded: str, original: str, room: int) -> str:
    """Cut ``encoded`` to ``room`` bytes (never inside a %XX escape) plus "~<hash>"."""
    digest = hashlib.sha256(original.encode("utf-8")).hexdigest()[:_HASH_CHARS]
    keep = room - len(digest) - 1
    cut = encoded[:keep]
    escape = cut.rfind("%")
    if escape != -1 and escape > len(cut) - 3:
        cut = cut[:escape]
    return f"{cut}~{digest}"


def file_segment(segment: str, *, leaf: bool) -> str:
    """One key segment as a file name (a leaf gets ".json").

    Encoded names use only letters, digits, "%" and PATH_SAFE, so a shortened name
    (the only kind containing "~") never equals an encoded one; a directory name
    never ends in ".json" (its last "." is encoded), so "/a" (a.json) and "/a.json/b"
    (a%2Ejson/b.json) cannot collide; no name starts with "." (hidden, or "..").
    """
    encoded = _encode_segment(segment)
    if encoded.startswith("."):  # no hidden files: `ls` shows every key
        encoded = "%2E" + encoded[1:]
    if not leaf and encoded.endswith(FILE_SUFFIX):
        encoded = encoded[: -len(FILE_SUFFIX)] + "%2Ejson"
    if len(encoded) > MAX_FILE_SEGMENT_BYTES:
        encoded = _shorten(encoded, segment, MAX_FILE_SEGMENT_BYTES)
    return encoded + FILE_SUFFIX if leaf else encoded


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
