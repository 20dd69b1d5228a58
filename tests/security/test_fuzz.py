"""Property-based fuzzing of every RPC over the live daemon (see fuzzing.py)."""

from __future__ import annotations

from tests.security.conftest import SecurityDaemon
from tests.security.fuzzing import FuzzReport
from tests.security.support import all_rpcs


def test_every_rpc_was_fuzzed(fuzz_report: FuzzReport) -> None:
    assert {rpc.label for rpc in all_rpcs()} <= set(fuzz_report.requests)
    assert fuzz_report.total >= 1000


def test_no_internal_errors(fuzz_report: FuzzReport) -> None:
    assert fuzz_report.internal == []


def test_every_invalid_argument_names_fields(fuzz_report: FuzzReport) -> None:
    assert fuzz_report.missing_violations == []


def test_rejected_writes_store_nothing(fuzz_report: FuzzReport) -> None:
    assert fuzz_report.partial_writes == []


def test_import_streams_with_extreme_values(fuzz_report: FuzzReport) -> None:
    # Every stream answered OK, its extreme records rejected, only the valid ones stored.
    assert fuzz_report.requests["LifecycleService.Import(extreme)"] >= 20
    assert fuzz_report.import_failures == []


def test_daemon_survived(fuzz_report: FuzzReport, security_daemon: SecurityDaemon) -> None:
    process = security_daemon.daemon.process
    assert process is not None and process.poll() is None
