"""Backend failures become clean StoreErrors: a class of cause, never the backend's text."""

from __future__ import annotations

import errno

import pytest

from memoryd.domain.errors import InvalidArgument, StoreError
from memoryd.storage import failures
from memoryd.storage.failures import backend_failure, cause_of, public_reason

LANCE_NO_SPACE = (
    "lance error: LanceError(IO): Generic LocalFileSystem error: Unable to write "
    "/data/lancedb/memories.lance/data/0a1b.lance: No space left on device (os error 28), "
    "/rustc/2d8144b7880597b6e6d3dfd63a9a9efae3f533d3/library/core/src/ops/function.rs:250:5"
)
LANCE_TRUNCATED = (
    "lance error: LanceError(IO): Generic memory error: Invalid range 192..392 for object "
    "of size 0 bytes, /rustc/2d81/library/core/src/result.rs:1896:29"
)


@pytest.mark.parametrize(
    ("exc", "cause"),
    [
        (RuntimeError(LANCE_NO_SPACE), failures.NO_SPACE),
        (OSError(errno.ENOSPC, "No space left on device"), failures.NO_SPACE),
        (OSError(errno.EROFS, "Read-only file system"), failures.READ_ONLY),
        (OSError(errno.EIO, "Input/output error"), failures.IO_ERROR),
        (ConnectionRefusedError(), failures.UNREACHABLE),
        (
            RuntimeError("failed to connect to all addresses; last error: UNKNOWN"),
            failures.UNREACHABLE,
        ),
        (TimeoutError(), failures.TIMED_OUT),
        (RuntimeError(LANCE_TRUNCATED), failures.DAMAGED),
        (FileNotFoundError(errno.ENOENT, "missing"), failures.DAMAGED),
        (RuntimeError("something else entirely"), failures.FAILED),
    ],
)
def test_causes(exc: BaseException, cause: str) -> None:
    assert cause_of(exc) == cause


def test_the_cause_is_found_down_the_chain() -> None:
    try:
        try:
            raise OSError(errno.ENOSPC, "No space left on device")
        except OSError as inner:
            raise RuntimeError("wrapped") from inner
    except RuntimeError as outer:
        assert cause_of(outer) == failures.NO_SPACE


def test_a_backend_failure_carries_no_backend_text() -> None:
    error = backend_failure("lancedb", "upsert", RuntimeError(LANCE_NO_SPACE))
    assert error.message == "lancedb upsert failed: no space left on device"
    assert error.cause == failures.NO_SPACE and error.cause in failures.TRANSIENT
    assert error.status == "UNAVAILABLE"
    assert cause_of(error) == failures.NO_SPACE  # kept when wrapped again


def test_public_reasons() -> None:
    assert public_reason(StoreError("qdrant open failed: unreachable")) == (
        "qdrant open failed: unreachable"
    )
    assert public_reason(InvalidArgument.field("x", "bad")) == "invalid argument: x: bad"
    reason = public_reason(RuntimeError(LANCE_TRUNCATED))
    assert reason == "RuntimeError (damaged or missing files)" and "rustc" not in reason
