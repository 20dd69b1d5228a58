"""Degraded-mode bookkeeping: which components are impaired, and per-call reasons.

``ComponentStates`` is the daemon's one view of its dependencies (store, embedder,
write-ahead log): each is ok or impaired with a reason. Listeners (gRPC health,
metrics) hear every change. A *critical* component (the log) makes the daemon
NOT_SERVING while impaired; the others only degrade responses.

``collecting()`` opens a per-call collector (a contextvar, so it follows the call's
task); code on the call's path ``report``s what it fell back on and the API layer
puts the reasons into the response's ``degraded`` list.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from memoryd.context_vars import bound
from memoryd.domain.requests import Degradation

_collector: ContextVar[list[Degradation] | None] = ContextVar("degradations", default=None)


@contextmanager
def collecting() -> Iterator[list[Degradation]]:
    """Reasons reported on this call's path while the block runs (in report order)."""
    found: list[Degradation] = []
    with bound(_collector, found):
        yield found


def report(component: str, reason: str) -> None:
    """Tell the current call it was served degraded (no-op outside a call)."""
    found = _collector.get()
    if found is None:
        return
    item = Degradation(component=component, reason=reason)
    if item not in found:
        found.append(item)


@dataclass(frozen=True, slots=True)
class ComponentState:
    name: str
    ok: bool
    reason: str = ""
    critical: bool = False


Listener = Callable[[ComponentState], None]


class ComponentStates:
    """Health of each dependency. Not thread-safe: used from the event loop."""

    def __init__(self) -> None:
        self._states: dict[str, ComponentState] = {}
        self._listeners: list[Listener] = []

    def listen(self, listener: Listener) -> None:
        self._listeners.append(listener)
        for state in self._states.values():
            listener(state)

    def set(self, name: str, *, ok: bool, reason: str = "", critical: bool = False) -> None:
        new = ComponentState(name, ok, "" if ok else reason, critical)
        if self._states.get(name) == new:
            return
        self._states[name] = new
        for listener in self._listeners:
            listener(new)

    def get(self, name: str) -> ComponentState | None:
        return self._states.get(name)

    def all(self) -> list[ComponentState]:
        return list(self._states.values())

    def report_if_impaired(self, name: str) -> None:
        """Tell the current call it was served degraded (:func:`report`) while the
        component ``name`` is impaired."""
        state = self._states.get(name)
        if state is not None and not state.ok:
            report(name, state.reason)

    @property
    def serving(self) -> bool:
        """False while a critical component is impaired."""
        return all(s.ok or not s.critical for s in self._states.values())

    def impaired(self, *names: str) -> list[Degradation]:
        """Degradations of the named (or all) impaired components."""
        return [
            Degradation(component=s.name, reason=s.reason)
            for s in self._states.values()
            if not s.ok and (not names or s.name in names)
        ]
