"""Tenant and agent ids: matched in full, never only dots, in requests and config."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from memoryd.config import SidecarSettings
from memoryd.domain.limits import id_problem
from memoryd.security.settings import Grant


@pytest.mark.parametrize("value", ["planner", "a.b", "user@example.com", "x:1", "代理", "_"])
def test_valid_ids(value: str) -> None:
    assert id_problem(value) is None


@pytest.mark.parametrize(
    "value", ["", ".", "..", "....", "planner\n", "a/b", "a b", "a\x00", "x" * 129]
)
def test_invalid_ids(value: str) -> None:
    assert id_problem(value) is not None


@pytest.mark.parametrize("tenant", ["..", "acme\n", "a/b"])
def test_config_refuses_tenant_ids_a_request_could_not_name(tenant: str) -> None:
    with pytest.raises(ValidationError):
        Grant(name="k", tenant_id=tenant)
    with pytest.raises(ValidationError):
        SidecarSettings(tenant_id=tenant)
    with pytest.raises(ValidationError):
        Grant(name="k", tenant_id="acme", agents=["planner", tenant])
