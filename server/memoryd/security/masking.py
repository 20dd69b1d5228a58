"""Data masking: personal data and secrets replaced in what low-clearance callers read.

Rules (``masking.rules``): ``email``, ``phone``, ``national_id`` (US SSN, Chinese
resident id, UK NI number), ``card`` (13-19 digit card numbers), ``secret`` (API keys
and tokens of common providers, JWTs, ``password=...``-style assignments), plus
``masking.custom`` patterns. Every pattern runs on RE2 (google-re2), linear in the
text whatever the pattern, so a custom rule cannot stall the daemon.

Output is masked for principals whose clearance is below ``masking.unmasked_clearance``
(recall, GetMemory, ListMemories, BuildSnapshot, DefaultRead, Export); what is stored
is never changed. An admin's Export is never masked: a backup must restore exactly
what was stored.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import re2

from memoryd.domain.principal import CallScope, Role
from memoryd.security.settings import MaskingSettings

Mask = Callable[[str], str]

#: Applied in this order: card numbers before the looser phone pattern.
BUILTIN_RULES: dict[str, tuple[str, str]] = {
    "secret": (
        r"(?i)\b(?:api[_-]?key|secret|token|password|passwd|pwd)\s*[:=]\s*\S+"
        r"|\b(?:sk|pk|rk)[-_](?:live|test|proj)[-_][A-Za-z0-9_-]{8,}"
        r"|\bsk-[A-Za-z0-9_-]{16,}|\bAKIA[0-9A-Z]{16}\b|\bgh[pousr]_[A-Za-z0-9]{30,}"
        r"|\bxox[abprs]-[A-Za-z0-9-]{10,}|\beyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]{8,}",
        "[secret]",
    ),
    "email": (r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}", "[email]"),
    "national_id": (
        r"\b\d{3}-\d{2}-\d{4}\b|\b\d{17}[\dXx]\b|\b[A-Za-z]{2}\s?\d{2}\s?\d{2}\s?\d{2}\s?[A-Da-d]\b",
        "[national id]",
    ),
    "card": (r"\b\d{4}(?:[ -]?\d{4}){2}[ -]?\d{1,7}\b", "[card]"),
    "phone": (
        r"(?:\+\d{1,3}[\s.-]?)?(?:\(\d{1,4}\)[\s.-]?)?\d{3,4}[\s.-]?\d{3,4}(?:[\s.-]?\d{2,4})?\b",
        "[phone]",
    ),
}


@dataclass(frozen=True, slots=True)
class _Rule:
    name: str
    pattern: Any
    replacement: str


class Masker:
    """Compiled masking rules; :meth:`for_scope` says whether a caller gets them."""

    def __init__(self, settings: MaskingSettings) -> None:
        self.settings = settings
        rules = [
            _Rule(name, re2.compile(pattern), replacement)
            for name, (pattern, replacement) in BUILTIN_RULES.items()
            if name in settings.rules
        ]
        for custom in settings.custom:
            rules.append(_Rule(custom.name, re2.compile(custom.pattern), custom.replacement))
        self._rules = rules

    def mask(self, text: str) -> str:
        for rule in self._rules:
            text = rule.pattern.sub(rule.replacement, text)
        return text

    def for_scope(self, scope: CallScope, *, export: bool = False) -> Mask | None:
        """The mask for this caller's output, or None when it reads unmasked."""
        s = self.settings
        if not s.enabled or not self._rules or scope.clearance >= s.unmasked_clearance:
            return None
        if export and Role.ADMIN in scope.principal.roles:
            return None
        return self.mask


def mask_json(value: Any, mask: Mask) -> Any:
    """``value`` with every string in it masked (keys kept)."""
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, dict):
        return {k: mask_json(v, mask) for k, v in value.items()}
    if isinstance(value, list):
        return [mask_json(v, mask) for v in value]
    return value
