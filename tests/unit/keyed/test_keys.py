"""Key normalisation and the file mirror of keys: examples and properties."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path, PurePosixPath
from urllib.parse import unquote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memoryd.service.keyed.keys import (
    MAX_FILE_SEGMENT_BYTES,
    InvalidKey,
    KeyLimits,
    child_of,
    file_segment,
    key_file_path,
    needs_provenance,
    normalise_key,
    normalise_prefix,
)
from memoryd.service.keyed.tree import index_file


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("/user/calendar/2026-02-23_10-00_dentist", "/user/calendar/2026-02-23_10-00_dentist"),
        ("//user///prefs//style", "/user/prefs/style"),
        ("/a", "/a"),
        ("/漢字/🙂", "/漢字/🙂"),
        ("/e\u0301", "/\u00e9"),  # NFC: one spelling per key
        ("/a b/c%20d", "/a b/c%20d"),
        ("/.../x", "/.../x"),
        ("/a.b/..c/c..", "/a.b/..c/c.."),
    ],
)
def test_normalise_accepts(raw: str, expected: str) -> None:
    assert normalise_key(raw) == expected


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("", "must not be empty"),
        ("user/x", "must start with '/'"),
        ("/", "names a directory"),
        ("//", "names a directory"),
        ("/user/", "names a directory"),
        ("/a/../b", "'..'"),
        ("/a/./b", "'.'"),
        ("/..", "'..'"),
        ("/a/..", "'..'"),
        ("/a\x00b", "NUL"),
        ("/a\nb", "control characters"),
        ("/a\tb", "control characters"),
        ("/a\x7fb", "control characters"),
        ("/a\x85b", "control characters"),
        ("/" + "/".join(["a" * 200] * 3), "603 bytes"),
        ("/bad\udcff", "UTF-8"),
    ],
)
def test_normalise_rejects(raw: str, reason: str) -> None:
    with pytest.raises(InvalidKey, match=reason.replace("(", r"\(")):
        normalise_key(raw)


def test_limits_are_configurable() -> None:
    tight = KeyLimits(max_key_bytes=10)
    assert normalise_key("/abcd/ef", tight) == "/abcd/ef"
    with pytest.raises(InvalidKey, match="11 bytes"):
        normalise_key("/abcd/ef/gh", tight)
    # Bytes, not characters: "é" is two.
    assert normalise_key("/ééééé", KeyLimits(max_key_bytes=11)) == "/ééééé"
    with pytest.raises(InvalidKey, match="13 bytes"):
        normalise_key("/éééééé", KeyLimits(max_key_bytes=11))


def test_a_long_segment_within_the_key_limit_is_accepted_and_shortened_on_disk() -> None:
    """Issue 22: a 300-byte segment in a 512-byte key was rejected (segment limit
    255); the design shortens it in the file path instead."""
    key = "/notes/" + "a" * 300
    assert normalise_key(key) == key
    path = key_file_path(key)
    leaf = path.parts[-1]
    assert len(leaf.encode()) <= MAX_FILE_SEGMENT_BYTES + len(".json")
    assert "~" in leaf and leaf.startswith("a" * 40)
    other = key_file_path("/notes/" + "a" * 299 + "b").parts[-1]
    assert other != leaf


def test_prefixes_are_directories() -> None:
    assert normalise_prefix("") == "/"
    assert normalise_prefix("/") == "/"
    assert normalise_prefix("//user//calendar") == "/user/calendar/"
    assert normalise_prefix("/user/calendar/") == "/user/calendar/"
    for bad in ("user", "/a/../b/", "/a\x00/", "/./"):
        with pytest.raises(InvalidKey):
            normalise_prefix(bad)


def test_child_of() -> None:
    assert child_of("/a/b/c", "/a/") == ("/a/b/", True)
    assert child_of("/a/x", "/a/") == ("/a/x", False)
    assert child_of("/x", "/") == ("/x", False)
    assert child_of("/x/y", "/") == ("/x/", True)


def test_kb_keys_need_provenance() -> None:
    assert needs_provenance("/kb/papers/attention")
    assert not needs_provenance("/kbx/a")
    assert not needs_provenance("/user/kb/a")


@pytest.mark.parametrize(
    ("key", "path"),
    [
        ("/user/calendar/2026-02-23_10-00_dentist", "user/calendar/2026-02-23_10-00_dentist.json"),
        # Issue 33: names as written, UTF-8 kept (the design's own example key).
        (
            "/user/calendar/2026-02-23_10-00_牙科复诊",
            "user/calendar/2026-02-23_10-00_牙科复诊.json",
        ),
        ("/用户/偏好/风格", "用户/偏好/风格.json"),
        ("/notes/😀 👨\u200d👩\u200d👧 ok", "notes/😀 👨\u200d👩\u200d👧 ok.json"),
        ("/a b/c:d@e+f=g,h", "a b/c:d@e+f=g,h.json"),
        # Encoded: the escape and the hash marker, "\\", a leading ".", a directory's
        # ".json", line separators and bidirectional controls.
        ("/a%b/c~d", "a%25b/c%7Ed.json"),
        ("/a\\b/..\\..\\etc", "a%5Cb/%2E.%5C..%5Cetc.json"),
        ("/a.json/b", "a%2Ejson/b.json"),
        ("/a", "a.json"),
        ("/.hidden/..x/...", "%2Ehidden/%2E.x/%2E...json"),
        ("/x\u2028y\u2029z", "x%E2%80%A8y%E2%80%A9z.json"),
        ("/txt.\u202egnp", "txt.%E2%80%AEgnp.json"),
    ],
)
def test_file_paths(key: str, path: str) -> None:
    assert key_file_path(key) == PurePosixPath(path)


@pytest.mark.parametrize(
    ("segment", "name"),
    [
        ("a\x00b", "a%00b"),
        ("line\nbreak\r", "line%0Abreak%0D"),
        ("tab\there\x7f", "tab%09here%7F"),
        ("/", "%2F"),
        ("..", "%2E."),
        (".", "%2E"),
        ("\\", "%5C"),
        ("牙科", "牙科"),
    ],
)
def test_ids_and_segments_keys_refuse_are_still_encoded(segment: str, name: str) -> None:
    """file_segment also names tenant and agent directories: NUL, control characters
    and "/" never reach a file name, and no name is "." or ".."."""
    assert file_segment(segment, leaf=False) == name


@given(st.text(min_size=1, max_size=60))
def test_a_name_decodes_back_to_its_segment(segment: str) -> None:
    name = file_segment(segment, leaf=False)
    assert "/" not in name and "\x00" not in name and name not in (".", "..")
    assert not any(unicodedata.category(ch) in ("Cc", "Zl", "Zp") for ch in name)
    if "~" not in name:  # not shortened: reversible
        assert unquote(name, errors="surrogatepass") == segment


def test_long_segments_are_cut_with_a_hash() -> None:
    a = "x" * 300
    b = "x" * 299 + "y"
    pa, pb = file_segment(a, leaf=True), file_segment(b, leaf=True)
    assert pa != pb
    assert len(pa.encode()) <= MAX_FILE_SEGMENT_BYTES + len(".json")
    assert pa.startswith("x" * 50) and "~" in pa and pa.endswith(".json")
    # Cut on a character boundary, never inside a %XX escape.
    cut = file_segment("牙" * 100, leaf=False)
    head = cut.split("~")[0]
    assert "~" in cut and head == "牙" * len(head) and len(cut.encode()) <= 200
    escaped = file_segment("%" * 100, leaf=False).split("~")[0]
    assert len(escaped) % 3 == 0 and escaped == "%25" * (len(escaped) // 3)


def test_key_file_path_refuses_unnormalised_keys() -> None:
    for bad in ("a/b", "/a/../b", "/a//b", "/a/", "/."):
        with pytest.raises(InvalidKey):
            key_file_path(bad)


# ---------------------------------------------------------------- properties

#: Pieces that exercise the rules ("/", dots, combining marks, escapes) mixed with
#: arbitrary characters.
raw_keys = st.lists(
    st.one_of(
        st.sampled_from(
            ["/", "//", "/.", "/..", "a", "é", "e\u0301", "~", "%", "\\", " ", ".json"]
        ),
        st.characters(codec="utf-8"),
    ),
    max_size=30,
).map("".join)


@given(raw_keys)
def test_normalise_is_idempotent_and_clean(raw: str) -> None:
    try:
        key = normalise_key(raw)
    except InvalidKey:
        return
    assert normalise_key(key) == key
    assert key.startswith("/") and not key.endswith("/")
    assert "//" not in key
    segments = key[1:].split("/")
    assert all(s not in ("", ".", "..") for s in segments)
    assert not any(unicodedata.category(ch) == "Cc" for ch in key)
    assert unicodedata.normalize("NFC", key) == key


@given(raw_keys)
def test_prefix_normalisation_is_idempotent(raw: str) -> None:
    try:
        prefix = normalise_prefix(raw)
    except InvalidKey:
        return
    assert normalise_prefix(prefix) == prefix
    assert prefix.startswith("/") and prefix.endswith("/") and "//" not in prefix


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw_keys)
def test_file_path_never_escapes_the_root(tmp_path: Path, raw: str) -> None:
    try:
        key = normalise_key(raw)
    except InvalidKey:
        return
    rel = key_file_path(key)
    assert not rel.is_absolute()
    assert all(part not in ("", ".", "..") and not part.startswith(".") for part in rel.parts)
    assert all(len(part.encode()) <= MAX_FILE_SEGMENT_BYTES + 5 for part in rel.parts)
    root = tmp_path.resolve()
    target = (root / rel).resolve()
    assert target.is_relative_to(root)
    assert os.path.commonpath([root, target]) == str(root)


@given(st.sets(raw_keys, max_size=30))
def test_distinct_keys_get_distinct_files(raws: set[str]) -> None:
    keys = set()
    for raw in raws:
        try:
            keys.add(normalise_key(raw))
        except InvalidKey:
            continue
    paths = {key_file_path(k) for k in keys}
    assert len(paths) == len(keys)
    # No key's file is another key's directory.
    files = {str(p) for p in paths}
    dirs = {str(parent) for p in paths for parent in p.parents}
    assert not files & dirs


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw_keys)
def test_index_file_stays_in_the_index(tmp_path: Path, raw: str) -> None:
    """The mirror's own placement (tree.index_file) of any text: a file inside
    index/ (resolved on disk), or ValueError; a key that normalises always has one."""
    index_root = tmp_path / "index"
    for key in (raw, _normalised(raw)):
        try:
            target = index_file(index_root, key)
        except ValueError:
            assert key != _normalised(raw) or not key
            continue
        assert target.resolve().is_relative_to(index_root.resolve())


def _normalised(raw: str) -> str:
    try:
        return normalise_key(raw)
    except InvalidKey:
        return ""
