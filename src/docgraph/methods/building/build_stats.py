"""What the graph methods' build reports and ``docgraph graph stats`` share.

``OFFLINE_FALLBACK`` is the strategy a page (KG4VD) or chunk (HVM) is marked with when the
model's replies for it stayed unusable after the repair and re-asks and the method's
``on_model_error = "offline"`` setting built it with the offline strategy instead.
``stage_usage`` sums a method's model stages from the store; ``table`` and ``usage_lines``
render the stats as text.
"""

from __future__ import annotations

from typing import Any

from ...store.base import Store
from ...types import Usage

OFFLINE_FALLBACK = "offline-fallback"


def stage_usage(store: Store, prefix: str) -> tuple[dict[str, Usage], Usage]:
    """The stored usage of the stages starting with ``prefix`` (``"kg4vd."``), and their total."""
    stages = {stage: u for stage, u in sorted(store.usage().items()) if stage.startswith(prefix)}
    total = Usage()
    for u in stages.values():
        total = total.add(u)
    return stages, total


def table(title: str, counts: dict[str, Any]) -> list[str]:
    """``title:`` and one aligned ``key  value`` line per entry (``title: none`` when empty)."""
    if not counts:
        return [f"{title}: none"]
    width = max(len(str(k)) for k in counts)
    return [f"{title}:"] + [f"  {str(k):<{width}}  {v:>7}" for k, v in counts.items()]


def usage_lines(usage: dict[str, dict[str, Any]]) -> list[str]:
    """The model usage per stage (``Usage.model_dump()`` values) as text."""
    if not usage:
        return ["model usage: none (offline build)"]
    return ["model usage:"] + [
        f"  {stage:<16} calls {u['calls']:>6}  cached {u['cache_hits']:>6}  in {u['input_tokens']:>9}  "
        f"out {u['output_tokens']:>8}  images {u['images']:>5}"
        for stage, u in usage.items()
    ]
