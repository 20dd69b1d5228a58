"""Fitting snapshot candidates into a token budget.

1. De-duplicate in priority order: an item whose memory id or normalised text an
   earlier item already has is left out ("duplicate").
2. Fill whole items in priority order; an item that does not fit is left out
   ("budget") and the next ones are still tried (a smaller one may fit).
3. If room is left, the first item left out for budget is truncated into it (the
   only truncated item; its text ends in an ellipsis).
4. The whole rendered text is counted; while it is over the budget (a counter that
   is not additive over lines could make it so) the last item added goes. So
   ``tokens_used`` is the count of exactly the returned text, never above the budget.

Costs are the counted pieces: each item's line, each used section's wrapper (header
or tags) and the document's wrapper. Both built-in counters are additive over
newline-joined pieces, so step 4 is a safety net that does not normally remove
anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from memoryd.domain.snapshot import (
    OmittedItem,
    SectionUsage,
    SnapshotFormat,
    SnapshotItem,
    SnapshotSection,
)
from memoryd.service.common.tokens import TokenCounter, truncate_to_tokens
from memoryd.service.snapshot.render import (
    ELLIPSIS,
    Candidate,
    block_key,
    block_order,
    document_wrapper,
    item_line,
    render_document,
    render_section,
    section_wrapper,
)

#: A truncated item must keep at least this many tokens of its own text to be worth it.
MIN_TRUNCATED_TOKENS = 4
BUDGET = "budget"
DUPLICATE = "duplicate"


@dataclass(slots=True)
class _Chosen:
    candidate: Candidate
    text: str
    line: str
    tokens: int
    truncated: bool = False


@dataclass(slots=True)
class Packed:
    text: str
    items: list[SnapshotItem]
    usage: list[SectionUsage]
    tokens_used: int
    omitted: list[OmittedItem] = field(default_factory=list)


class Packer:
    def __init__(self, counter: TokenCounter, fmt: SnapshotFormat, budget: int) -> None:
        self._counter = counter
        self._fmt = fmt
        self._budget = budget

    def _cost(self, pieces: Sequence[str]) -> int:
        return sum(self._counter.count(p) for p in pieces)

    def pack(self, candidates: Sequence[Candidate], order: Sequence[SnapshotSection]) -> Packed:
        """``candidates`` in priority order; ``order`` is the sections' render order."""
        fmt = self._fmt
        omitted: dict[int, OmittedItem] = {}
        unique: list[tuple[int, Candidate]] = []
        seen_ids: set[str] = set()
        seen_texts: set[str] = set()
        for i, c in enumerate(candidates):
            if (c.memory_id and c.memory_id in seen_ids) or (
                c.dedup_key and c.dedup_key in seen_texts
            ):
                omitted[i] = OmittedItem(c.section, c.id, DUPLICATE)
                continue
            if c.memory_id:
                seen_ids.add(c.memory_id)
            if c.dedup_key:
                seen_texts.add(c.dedup_key)
            unique.append((i, c))

        doc_cost = self._cost(document_wrapper(fmt))
        section_cost = {k: self._cost(section_wrapper(fmt, k)) for k in block_order(fmt, order)}
        chosen: dict[int, _Chosen] = {}
        opened: set[str] = set()
        used = 0
        first_left_out: tuple[int, Candidate] | None = None
        for i, c in unique:
            line = item_line(fmt, c, c.text)
            tokens = self._counter.count(line)
            key = block_key(fmt, c)
            needed = tokens + self._overhead(key, opened, doc_cost, section_cost)
            if used + needed <= self._budget:
                chosen[i] = _Chosen(c, c.text, line, tokens)
                opened.add(key)
                used += needed
            else:
                omitted[i] = OmittedItem(c.section, c.id, BUDGET)
                if first_left_out is None:
                    first_left_out = (i, c)

        if first_left_out is not None:
            i, c = first_left_out
            room = self._budget - used
            room -= self._overhead(block_key(fmt, c), opened, doc_cost, section_cost)
            if room >= MIN_TRUNCATED_TOKENS:
                cut = self._truncate(c, room)
                if cut is not None:
                    chosen[i] = cut
                    del omitted[i]

        return self._assemble(chosen, omitted, order)

    @staticmethod
    def _overhead(key: str, opened: set[str], doc_cost: int, section_cost: dict[str, int]) -> int:
        """Wrapper tokens an item of block ``key`` adds besides its own line."""
        extra = 0 if key in opened else section_cost[key]
        return extra if opened else extra + doc_cost

    def _truncate(self, c: Candidate, room: int) -> _Chosen | None:
        fmt = self._fmt
        text = truncate_to_tokens(
            self._counter, c.text, room, lambda t: item_line(fmt, c, t + ELLIPSIS)
        )
        if not text.strip() or self._counter.count(text) < MIN_TRUNCATED_TOKENS:
            return None
        shown = text + ELLIPSIS
        line = item_line(fmt, c, shown)
        return _Chosen(c, shown, line, self._counter.count(line), truncated=True)

    def _render(
        self, chosen: dict[int, _Chosen], order: Sequence[SnapshotSection]
    ) -> tuple[str, list[tuple[str, str, list[_Chosen]]]]:
        by_block: dict[str, list[_Chosen]] = {}
        for i in sorted(chosen):
            by_block.setdefault(block_key(self._fmt, chosen[i].candidate), []).append(chosen[i])
        blocks = []
        for key in block_order(self._fmt, order):
            items = by_block.get(key)
            if not items:
                continue
            # A user_memory type block holds items of several sections: by section
            # (their render order), then by each one's own order.
            rank = {s: n for n, s in enumerate(order)}
            items.sort(key=lambda ch: (rank[ch.candidate.section], ch.candidate.order))
            block = render_section(self._fmt, key, [ch.line for ch in items])
            blocks.append((key, block, items))
        return render_document(self._fmt, [b for _, b, _ in blocks]), blocks

    def _usage(self, blocks: list[tuple[str, str, list[_Chosen]]]) -> list[SectionUsage]:
        """Tokens and items per section: a section's block, or (a block of several
        sections' items) its items' lines and the header of a block it starts."""
        tokens: dict[SnapshotSection, int] = {}
        items: dict[SnapshotSection, int] = {}
        for key, block, chs in blocks:
            sections = {ch.candidate.section for ch in chs}
            if len(sections) == 1 and key == chs[0].candidate.section.value:
                section = chs[0].candidate.section
                tokens[section] = tokens.get(section, 0) + self._counter.count(block)
            else:
                first = chs[0].candidate.section
                header = self._cost(section_wrapper(self._fmt, key))
                tokens[first] = tokens.get(first, 0) + header
                for ch in chs:
                    section = ch.candidate.section
                    tokens[section] = tokens.get(section, 0) + ch.tokens
            for ch in chs:
                items[ch.candidate.section] = items.get(ch.candidate.section, 0) + 1
        return [SectionUsage(section=s, tokens=t, items=items[s]) for s, t in tokens.items()]

    def _assemble(
        self,
        chosen: dict[int, _Chosen],
        omitted: dict[int, OmittedItem],
        order: Sequence[SnapshotSection],
    ) -> Packed:
        text, blocks = self._render(chosen, order)
        tokens = self._counter.count(text)
        while tokens > self._budget and chosen:
            last = max(chosen)
            gone = chosen.pop(last).candidate
            omitted[last] = OmittedItem(gone.section, gone.id, BUDGET)
            text, blocks = self._render(chosen, order)
            tokens = self._counter.count(text)
        items = [
            SnapshotItem(
                section=ch.candidate.section,
                id=ch.candidate.id,
                text=ch.text,
                tokens=ch.tokens,
                truncated=ch.truncated,
                source=ch.candidate.source,
            )
            for _, _, chs in blocks
            for ch in chs
        ]
        return Packed(
            text=text,
            items=items,
            usage=self._usage(blocks),
            tokens_used=tokens,
            omitted=[omitted[i] for i in sorted(omitted)],
        )
