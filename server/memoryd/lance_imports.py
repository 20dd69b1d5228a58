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

import importlib.util
import sys

REST_CLIENT = "lance_namespace_urllib3_client"


def defer_rest_client_init() -> None:
    """Register the REST client package without executing its ``__init__`` (once,
    before anything imports lancedb; a no-op when it is imported already or absent)."""
    if REST_CLIENT in sys.modules:
        return
    spec = importlib.util.find_spec(REST_CLIENT)
    if spec is None or spec.submodule_search_locations is None:
        return
    sys.modules[REST_CLIENT] = importlib.util.module_from_spec(spec)
