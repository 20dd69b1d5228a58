"""Importing lancedb without building its REST client.

``import lancedb`` imports ``lance_namespace``, which imports the generated REST client
``lance_namespace_urllib3_client``; that package's ``__init__`` imports its API
classes, and pydantic builds a validator for each of their several hundred methods
(``validate_call``) on import: the largest single part of the daemon's start-up (see
the README's footprint figures). memoryd opens local directories and never uses that
client; lancedb and lance_namespace only use its ``models`` subpackage. So the
package is registered without running its ``__init__``: each submodule (models, or
the API classes should anyone ask) still imports normally from the package's
directory.
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
import typing
from collections.abc import Callable
from types import ModuleType
from typing import Any

REST_CLIENT = "lance_namespace_urllib3_client"
OVERRIDES = "overrides"


def defer_rest_client_init() -> None:
    """Register the REST client package without executing its ``__init__`` (once,
    before anything imports lancedb; a no-op when it is imported already or absent)."""
    if REST_CLIENT in sys.modules:
        return
    spec = importlib.util.find_spec(REST_CLIENT)
    if spec is None or spec.submodule_search_locations is None:
        return
    sys.modules[REST_CLIENT] = importlib.util.module_from_spec(spec)


def _override(method: Callable[..., Any]) -> Callable[..., Any]:
    """What ``typing.override`` does at run time (3.12+): mark the method, check nothing."""
    with contextlib.suppress(AttributeError, TypeError):  # as typing.override tolerates
        method.__override__ = True  # type: ignore[attr-defined]
    return method


class _EnforceOverrides:
    """lancedb's own stand-in for ``overrides.EnforceOverrides`` on Python 3.12+."""


def skip_override_checks() -> None:
    """Give lancedb the ``override`` it uses on Python 3.12+ on older Pythons too.

    Below 3.12 lancedb imports ``override`` and ``EnforceOverrides`` from the
    ``overrides`` package, whose decorator disassembles every decorated method's
    bytecode at import to check it really overrides something (a development-time
    check, 18 % of ``import lancedb``'s CPU, measured); on 3.12+ lancedb uses
    ``typing.override``, which only marks the method, and an empty ``EnforceOverrides``.
    This registers exactly that in ``overrides``' place (once, before anything imports
    lancedb; a no-op when the package is imported already). lancedb is its only user
    in the daemon.
    """
    if OVERRIDES in sys.modules:
        return
    stand_in = ModuleType(OVERRIDES, "typing.override in place of the overrides package")
    stand_in.override = _override  # type: ignore[attr-defined]
    stand_in.overrides = _override  # type: ignore[attr-defined]
    stand_in.final = typing.final  # type: ignore[attr-defined]
    stand_in.EnforceOverrides = _EnforceOverrides  # type: ignore[attr-defined]
    sys.modules[OVERRIDES] = stand_in
