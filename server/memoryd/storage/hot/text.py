"""BM25 full-text search over one hot partition, in memory (used by HotPartition).

The postings live in a compressed-sparse-row *base*: for term id ``t`` the slots
holding it are ``slots[offsets[t]:offsets[t + 1]]`` with their term frequencies in
``tfs``, so a query term costs one slice, one gather of the filter mask and a few
vectorised operations over the documents that contain it. The base is built once, in a
worker thread, from every cached memory (:func:`build_text_base`, on the partition's
first text search) and is immutable afterwards except for ``base_live``: a memory
rewritten or removed since then only marks its slot stale there, and its new content
goes to a small *delta* of Python dicts. When the delta and the stale postings
outgrow a quarter of the base they are merged into a new base (vectorised, amortised
O(1) per posting), so writes stay cheap and queries stay array-bound.

Scores are Okapi BM25 (k1 = 1.2, b = 0.1: see storage.memory.BM25_B) with N, the document
frequencies and the average length all counted over exactly the memories that pass
the query's filter mask: a memory above the caller's clearance, archived or in
another namespace never influences a score, the semantics of InMemoryStore.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from memoryd.storage.bm25 import BM25_B, BM25_K1, TermStatistics
from memoryd.storage.hot.rows import grown
from memoryd.text import tokenize
from memoryd.text.informative import is_common

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]

#: Delta postings plus stale base postings that trigger a merge, at least (below
#: this a merge would cost more than it saves) and as a fraction of the base.
_MIN_MERGE = 4096
_MERGE_FRACTION = 4
#: Documents tokenised between checks of a build's keep_going callback.
_BUILD_CHECK_EVERY = 1024
#: Estimated bytes of one vocabulary entry besides its characters (str header, dict
#: slot, the int id) and of one delta posting (a dict entry with its int objects plus
#: the slot's term-id list); calibrated with tracemalloc on REALTALK.
_TERM_OVERHEAD = 130
_DELTA_POSTING = 150


@dataclass(slots=True)
class TextBase:
    """Immutable postings of every indexed slot (see the module docstring)."""

    vocab: dict[str, int]
    offsets: I64
    slots: I32
    tfs: F32
    #: Terms (with repeats) of each slot's content; indexed by slot.
    doclen: F64
    #: Distinct terms of each slot in this base: the postings it leaves stale.
    base_terms: I32
    #: Characters of all vocabulary terms (for nbytes).
    term_chars: int


def build_text_base(
    docs: Sequence[tuple[int, str]], keep_going: Callable[[], bool] = lambda: True
) -> TextBase | None:
    """The base of ``docs`` ((slot, content) pairs); runs in a worker thread (pure
    Python tokenising, so it shares the GIL with the event loop rather than blocking
    it). Returns None when ``keep_going`` turned false."""
    size = max((slot for slot, _ in docs), default=-1) + 1
    vocab: dict[str, int] = {}
    post_term: list[int] = []
    post_slot: list[int] = []
    post_tf: list[int] = []
    doclen = np.zeros(size, dtype=np.float64)
    for i, (slot, content) in enumerate(docs):
        if i % _BUILD_CHECK_EVERY == 0 and not keep_going():
            return None
        tokens = tokenize(content)
        doclen[slot] = len(tokens)
        for term, tf in Counter(tokens).items():
            post_term.append(vocab.setdefault(term, len(vocab)))
            post_slot.append(slot)
            post_tf.append(tf)
    terms = np.asarray(post_term, dtype=np.int32)
    # Stable: within a term, postings stay in slot order (reproducible float sums).
    order = np.argsort(terms, kind="stable")
    slots = np.asarray(post_slot, dtype=np.int32)[order]
    return TextBase(
        vocab=vocab,
        offsets=_offsets(np.bincount(terms, minlength=len(vocab))),
        slots=slots,
        tfs=np.asarray(post_tf, dtype=np.float32)[order],
        doclen=doclen,
        base_terms=np.bincount(slots, minlength=size).astype(np.int32),
        term_chars=sum(len(t) for t in vocab),
    )


def _offsets(counts: npt.NDArray[np.intp]) -> I64:
    out = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=out[1:])
    return out


class TextIndex:
    """The BM25 postings of one partition, kept coherent by :meth:`set`."""

    def __init__(self, base: TextBase) -> None:
        self.vocab = base.vocab
        self._term_chars = base.term_chars
        self._install(base.offsets, base.slots, base.tfs)
        self._capacity = max(64, len(base.doclen))
        self.doclen = np.zeros(self._capacity, dtype=np.float64)
        self.doclen[: len(base.doclen)] = base.doclen
        #: Whether each slot's postings in the base are current (else in the delta).
        self._base_live = np.ones(self._capacity, dtype=bool)
        self._base_terms = np.zeros(self._capacity, dtype=np.int32)
        self._base_terms[: len(base.base_terms)] = base.base_terms
        #: term id -> {slot: tf} for contents written since the base was built.
        self._delta: dict[int, dict[int, int]] = {}
        #: slot -> its term ids in ``_delta`` (to take them out again).
        self._delta_doc: dict[int, list[int]] = {}
        self._delta_postings = 0
        self._stale_postings = 0
        self.merges = 0

    def _install(self, offsets: I64, slots: I32, tfs: F32) -> None:
        self._offsets = offsets
        self._slots = slots
        self._tfs = tfs
        self._base_term_count = len(offsets) - 1

    def __len__(self) -> int:
        """Postings held (base, stale ones included, and delta)."""
        return len(self._slots) + self._delta_postings

    # -- writes -------------------------------------------------------------------

    def set(self, slot: int, content: str | None) -> None:
        """Index ``content`` at ``slot`` in place of whatever was there (None: the slot
        is now empty)."""
        if slot >= self._capacity:
            self._grow(max(2 * self._capacity, slot + 1))
        if self._base_live[slot]:
            self._base_live[slot] = False
            self._stale_postings += int(self._base_terms[slot])
            self._base_terms[slot] = 0
        else:
            for old in self._delta_doc.pop(slot, ()):
                holders = self._delta[old]
                del holders[slot]
                if not holders:
                    del self._delta[old]
                self._delta_postings -= 1
        if content is None:
            self.doclen[slot] = 0.0
            return
        tokens = tokenize(content)
        self.doclen[slot] = len(tokens)
        ids: list[int] = []
        for term, tf in Counter(tokens).items():
            term_id = self.vocab.get(term)
            if term_id is None:
                term_id = self.vocab[term] = len(self.vocab)
                self._term_chars += len(term)
            self._delta.setdefault(term_id, {})[slot] = tf
            ids.append(term_id)
        if ids:
            self._delta_doc[slot] = ids
            self._delta_postings += len(ids)
        if self._delta_postings + self._stale_postings > max(
            _MIN_MERGE, len(self._slots) // _MERGE_FRACTION
        ):
            self.merge()

    def _grow(self, capacity: int) -> None:
        self.doclen = grown(self.doclen, capacity, 0.0)
        # A slot never indexed has no base postings: "live" (nothing stale) is right.
        self._base_live = grown(self._base_live, capacity, True)
        self._base_terms = grown(self._base_terms, capacity, 0)
        self._capacity = capacity

    def merge(self) -> None:
        """Fold the delta into the base and drop the stale postings (and the terms
        no memory holds any more, when they are many)."""
        term_of = np.repeat(
            np.arange(self._base_term_count, dtype=np.int32), np.diff(self._offsets)
        )
        keep = self._base_live[self._slots]
        base_terms, base_slots, base_tfs = term_of[keep], self._slots[keep], self._tfs[keep]
        count = self._delta_postings
        new_terms = np.empty(count, dtype=np.int32)
        new_slots = np.empty(count, dtype=np.int32)
        new_tfs = np.empty(count, dtype=np.float32)
        i = 0
        for term_id in sorted(self._delta):
            holders = self._delta[term_id]
            j = i + len(holders)
            new_terms[i:j] = term_id
            new_slots[i:j] = list(holders)
            new_tfs[i:j] = list(holders.values())
            i = j
        # Both sides are sorted by term: inserting keeps the whole sorted, in O(n).
        at = np.searchsorted(base_terms, new_terms, side="right")
        terms = np.insert(base_terms, at, new_terms)
        slots = np.insert(base_slots, at, new_slots)
        tfs = np.insert(base_tfs, at, new_tfs)
        counts = np.bincount(terms, minlength=len(self.vocab))
        unused = len(counts) - int(np.count_nonzero(counts))
        if unused > _MIN_MERGE and unused * 2 > len(counts):
            counts = self._drop_unused_terms(counts)
        self._install(_offsets(counts), slots, tfs)
        self._base_live[:] = True
        self._base_terms[:] = np.bincount(slots, minlength=self._capacity)[: self._capacity]
        self._delta.clear()
        self._delta_doc.clear()
        self._delta_postings = 0
        self._stale_postings = 0
        self.merges += 1

    def _drop_unused_terms(self, counts: npt.NDArray[np.intp]) -> npt.NDArray[np.intp]:
        """Renumber the vocabulary without the terms of no posting (the postings'
        term order is unchanged, so only their counts move)."""
        used = counts > 0
        new_id = np.cumsum(used) - 1
        self.vocab = {t: int(new_id[i]) for t, i in self.vocab.items() if used[i]}
        self._term_chars = sum(len(t) for t in self.vocab)
        return counts[used]

    # -- reads --------------------------------------------------------------------

    def nbytes(self) -> int:
        per_slot = self._capacity * (8 + 1 + 4)
        base = self._offsets.nbytes + self._slots.nbytes + self._tfs.nbytes
        vocab = len(self.vocab) * _TERM_OVERHEAD + self._term_chars
        return per_slot + base + vocab + self._delta_postings * _DELTA_POSTING

    def candidates(self, terms: Sequence[str], mask: Mask, k: int) -> tuple[I64, F64, Mask]:
        """Slots and BM25 scores of the best ``k`` documents under ``mask`` (a filter
        over slots [0, len(mask)), which must cover every slot ever set), plus every
        other document tied with the k-th, so the caller can break ties by id;
        unordered. Only scores > 0. The third array says which of them match an
        informative term (memoryd.text.informative)."""
        n = len(mask)
        total = int(np.count_nonzero(mask))
        if total == 0 or k <= 0:
            empty = np.empty(0, dtype=np.int64)
            return empty, np.empty(0, dtype=np.float64), np.empty(0, dtype=bool)
        doclen = self.doclen[:n]
        avg_len = float(doclen[mask].sum()) / total or 1.0
        base_ok = mask & self._base_live[:n] if self._stale_postings else mask
        scores = np.zeros(n, dtype=np.float64)
        informative = np.zeros(n, dtype=bool)
        rare_terms = 0
        for term in terms:
            found = self._postings(term, mask, base_ok)
            if found is None:
                rare_terms += 1  # held by no memory here: rare
                continue
            slots, tfs = found
            df = len(slots)
            if not is_common(df, total):
                rare_terms += 1
                informative[slots] = True
            # As InMemoryStore's bm25 (math.log, not log1p: the same float).
            idf = math.log(1 + (total - df + 0.5) / (df + 0.5))
            norm = BM25_K1 * (1 - BM25_B + BM25_B * doclen[slots] / avg_len)
            scores[slots] += idf * tfs * (BM25_K1 + 1) / (tfs + norm)
        hits = np.flatnonzero(scores > 0)
        if len(hits) > k:
            kth = np.partition(scores[hits], len(hits) - k)[len(hits) - k]
            hits = hits[scores[hits] >= kth]
        if rare_terms == 0:  # common terms only: each of them counts
            return hits, scores[hits], np.ones(len(hits), dtype=bool)
        return hits, scores[hits], informative[hits]

    def statistics(self, terms: Sequence[str], mask: Mask) -> TermStatistics:
        """The statistics :meth:`candidates` scores ``terms`` with under ``mask``."""
        n = len(mask)
        base_ok = mask & self._base_live[:n] if self._stale_postings else mask
        frequencies = {}
        for term in terms:
            found = self._postings(term, mask, base_ok)
            frequencies[term] = 0 if found is None else len(found[0])
        total = int(self.doclen[:n][mask].sum())
        return TermStatistics(int(np.count_nonzero(mask)), total, frequencies)

    def _postings(self, term: str, mask: Mask, base_ok: Mask) -> tuple[I64, F64] | None:
        """The slots under the filter holding ``term``, with their term frequencies."""
        term_id = self.vocab.get(term)
        if term_id is None:
            return None
        parts_slots: list[npt.NDArray[np.integer]] = []
        parts_tfs: list[npt.NDArray[np.floating]] = []
        if term_id < self._base_term_count:
            lo, hi = self._offsets[term_id], self._offsets[term_id + 1]
            slots = self._slots[lo:hi]
            keep = base_ok[slots]
            parts_slots.append(slots[keep])
            parts_tfs.append(self._tfs[lo:hi][keep])
        holders = self._delta.get(term_id)
        if holders:
            slots = np.fromiter(holders, dtype=np.int64, count=len(holders))
            tfs = np.fromiter(holders.values(), dtype=np.float64, count=len(holders))
            keep = mask[slots]
            parts_slots.append(slots[keep])
            parts_tfs.append(tfs[keep])
        if not parts_slots:
            return None  # a term whose last holder went since the last merge
        slots_all = np.concatenate(parts_slots).astype(np.int64, copy=False)
        if len(slots_all) == 0:
            return None
        return slots_all, np.concatenate(parts_tfs).astype(np.float64, copy=False)
