"""Turns between the parties a question compares.

"Which had higher net income in FY2022, CVS Health or American Express?" names two parties
(``routing.Route.parties``), and an answer needs a page of each. Scores alone hand every
slot to whichever filing words its statement closest to the question; ``take_turns`` gives
each party its best page first, then its second best, and so on, so the first slots hold
the best evidence of every party named.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...types import PageKey

Scored = tuple[PageKey, float]


def take_turns(ranked: Sequence[Scored], party_pages: Sequence[Sequence[Scored]], k: int) -> list[Scored]:
    """At most ``k`` pages: in round r each party (``party_pages``: per party, its pages best
    first) gives its r-th page, the round's pages by score; then ``ranked`` (the method's list,
    best first) fills what is left. A page appears once; a score is clamped to the one above
    it, so scores never increase down the list. ``ranked[:k]`` when fewer than two parties
    have pages."""
    queues = [list(dict.fromkeys(p for p, _ in pages)) for pages in party_pages]
    if sum(1 for q in queues if q) < 2:
        return list(ranked[:k])
    score = {p: s for pages in party_pages for p, s in pages} | dict(ranked)
    order: list[PageKey] = []
    for r in range(max(len(q) for q in queues)):
        order.extend(p for p in sorted((q[r] for q in queues if r < len(q)), key=lambda p: -score[p]) if p not in order)
        if len(order) >= k:
            break
    order.extend(p for p, _ in ranked if p not in order)
    out: list[Scored] = []
    for page in order[:k]:
        out.append((page, min(score[page], out[-1][1]) if out else score[page]))
    return out
