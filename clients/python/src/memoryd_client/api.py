"""The helper table both clients inherit: every helper is defined once, in ``ops``.

``Method`` returns the result on :class:`~memoryd_client.MemorydClient` and an
awaitable on :class:`~memoryd_client.AsyncMemorydClient`; ``StreamMethod`` an iterator
or an async iterator. See each ``ops`` function for arguments and retry safety.
"""

from __future__ import annotations

from grpc_health.v1 import health_pb2

from memoryd_client import prompt
from memoryd_client.core import Method, StreamMethod, Unary
from memoryd_client.ops import agent_state, changes, keys, lifecycle, memories, snapshot


def health(service: str = "") -> Unary[str]:
    """grpc.health.v1 status: ``"SERVING"``, ``"NOT_SERVING"``, ... (``service=""``: the
    whole daemon; ``"memoryd.v1.MemoryService"``: one service)."""
    return Unary(
        "health",
        "Check",
        health_pb2.HealthCheckRequest(service=service),
        lambda r: health_pb2.HealthCheckResponse.ServingStatus.Name(r.status),
        idempotent=True,
    )


class Api:
    # long-term memory
    remember = Method(memories.remember)
    remember_batch = Method(memories.remember_batch)
    recall = Method(memories.recall)
    get = Method(memories.get)
    list = Method(memories.list_memories)
    update = Method(memories.update)
    forget = Method(memories.forget)
    # keyed memory
    set_memory = Method(keys.set_memory)
    get_key = Method(keys.get_key)
    list_keys = Method(keys.list_keys)
    key_history = Method(keys.key_history)
    # the change feed
    watch = StreamMethod(changes.watch)
    # working memory
    set_working_memory = Method(agent_state.set_working_memory)
    get_working_memory = Method(agent_state.get_working_memory)
    delete_working_memory = Method(agent_state.delete_working_memory)
    list_working_memory_scopes = Method(agent_state.list_working_memory_scopes)
    # profile
    get_profile = Method(agent_state.get_profile)
    set_profile = Method(agent_state.set_profile)
    # sessions
    append_messages = Method(agent_state.append_messages)
    get_session_window = Method(agent_state.get_session_window)
    inject_instruction = Method(agent_state.inject_instruction)
    end_session = Method(agent_state.end_session)
    get_session_messages = Method(agent_state.get_session_messages)
    delete_messages = Method(agent_state.delete_messages)
    clear_session = Method(agent_state.clear_session)
    get_session_attachment = Method(agent_state.get_session_attachment)
    # snapshots and state
    build_snapshot = Method(snapshot.build_snapshot)
    default_read = Method(snapshot.default_read)
    save_state = Method(snapshot.save_state)
    load_state = Method(snapshot.load_state)
    memory_context = Method(prompt.memory_context)
    with_memory = Method(prompt.with_memory)
    # lifecycle
    get_stats = Method(lifecycle.get_stats)
    archive = Method(lifecycle.archive)
    restore = Method(lifecycle.restore)
    prune = Method(lifecycle.prune)
    reset = Method(lifecycle.reset)
    erase = Method(lifecycle.erase)
    verify_erasure = Method(lifecycle.verify_erasure)
    compact = Method(lifecycle.compact)
    run_maintenance = Method(lifecycle.run_maintenance)
    consolidate = Method(lifecycle.consolidate)
    undo_consolidation = Method(lifecycle.undo_consolidation)
    reembed = Method(lifecycle.reembed)
    export = StreamMethod(lifecycle.export)
    import_records = Method(lifecycle.import_records)
    # the daemon
    health = Method(health)
