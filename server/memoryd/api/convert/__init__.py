"""Protobuf <-> domain conversion: the only code that knows both.

One module per area of the contract; everything is re-exported here so servicers
write ``convert.<name>``.
"""

from memoryd.api.convert.memories import (
    batch_drafts_from,
    degraded_to_proto,
    draft_from,
    list_query_from,
    list_response,
    memory_to_proto,
    patch_from,
    recall_query_from,
    recall_response,
    remember_batch_response,
    remember_response,
)

__all__ = [
    "batch_drafts_from",
    "degraded_to_proto",
    "draft_from",
    "list_query_from",
    "list_response",
    "memory_to_proto",
    "patch_from",
    "recall_query_from",
    "recall_response",
    "remember_batch_response",
    "remember_response",
]
