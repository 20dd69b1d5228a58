"""Every RPC of every service, tried across tenant, agent and clearance boundaries by
several principals: zero leaks, zero INTERNAL, nothing of another's changed."""

from __future__ import annotations

from tests.security import adversary
from tests.security.support import all_rpcs


def test_every_rpc_was_attacked(adversarial_report: adversary.Report) -> None:
    labels = {rpc.label for rpc in all_rpcs()}
    assert labels <= set(adversarial_report.attempts), labels - set(adversarial_report.attempts)
    assert adversarial_report.total >= 1000


def test_no_leaks(adversarial_report: adversary.Report) -> None:
    assert adversarial_report.leaks == []


def test_another_principals_things_look_missing(adversarial_report: adversary.Report) -> None:
    assert adversarial_report.mismatches == []


def test_no_internal_errors(adversarial_report: adversary.Report) -> None:
    assert adversarial_report.internal == []


def test_nothing_of_another_changed(adversarial_report: adversary.Report) -> None:
    assert adversarial_report.integrity == []
