"""Reading and formatting the values of a bench run's results for its report."""

from __future__ import annotations

from typing import Any


def get(d: Any, *path: str) -> Any:
    """The value at ``path`` in nested dicts, None where any step is missing."""
    for key in path:
        if not isinstance(d, dict) or key not in d:
            return None
        d = d[key]
    return d


def fmt(v: Any, unit: str = "") -> str:
    """A number for a table cell (thousands separated, few decimals); "n/a" for None."""
    if v is None:
        return "n/a"
    if isinstance(v, float):
        v = f"{v:,.3f}".rstrip("0").rstrip(".") if abs(v) < 100 else f"{v:,.0f}"
    elif isinstance(v, int):
        v = f"{v:,}"
    return f"{v}{unit}"


def ratio_of(a: Any, b: Any) -> float | None:
    """a / b to two places; None unless both are numbers and b is not 0."""
    if not isinstance(a, int | float) or not isinstance(b, int | float) or not b:
        return None
    return round(a / b, 2)


def p50_p99(t: dict[str, Any], *path: str) -> str:
    """ "p50 / p99" of the percentiles at ``path`` in ``t``."""
    return f"{fmt(get(t, *path, 'p50'))} / {fmt(get(t, *path, 'p99'))}"
