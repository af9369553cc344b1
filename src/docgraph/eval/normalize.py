"""Answer normalisation 𝒩ℒ(·) for EM, token F1 and containment accuracy.

HVM-GraphRAG Appendix B.3 ("Evaluation Metrics", following BookRAG) defines, over N
questions, with ŷ the extracted answer (B.3.1: ŷᵢ = LLM_extract(yᵢ^raw, ρ_ext)):

- Acc = 1/N Σ 𝕀(𝒩ℒ(y^gold) ⊆ 𝒩ℒ(y^raw))      (B.3.2, on the *raw* response)
- EM  = 1/N Σ 𝕀(𝒩ℒ(ŷ) = 𝒩ℒ(y^gold))          (B.3.3, on the extracted answer)
- F1 from P = |T_ŷ ∩ T_gold| / |T_ŷ|, R = |T_ŷ ∩ T_gold| / |T_gold|   (B.3.4)

The paper's rendering keeps only these equations; the prose defining 𝒩ℒ was lost, and it
says it follows "the standard evaluation setting". We therefore use the standard
(SQuAD-style) normaliser, plus number normalisation so that "1,000" = "1000" and
"50.10" = "50.1"; in order:

1. Unicode NFKC, lowercase;
2. numbers: thousands separators removed ("1,234" → "1234"), trailing decimal zeros
   removed ("50.190" → "50.19", "3.0" → "3");
3. punctuation and symbols (Unicode categories P* and S*) removed, except that dashes,
   slashes, commas, colons and semicolons separate words, and a decimal point between
   digits is kept;
4. the articles "a", "an", "the" removed;
5. whitespace collapsed.

Tokens T are the words of the normalised text. "⊆" is read as: the normalised gold
occurs in the normalised response as a whole-token substring ("5" is not inside "15").
"""

from __future__ import annotations

import re
import unicodedata

ARTICLES = frozenset({"a", "an", "the"})

_THOUSANDS = re.compile(r"(?<![\d,])\d{1,3}(?:,\d{3})+(?![\d,])")
_DECIMAL = re.compile(r"\b(\d+)\.(\d+)\b")
_DECIMAL_POINT = re.compile(r"(?<=\d)\.(?=\d)")
_SEPARATORS = re.compile(r"[\-\u2010-\u2015\u2212/\\,;:]")
_KEEP = "\u0000"  # placeholder for a decimal point while punctuation is removed

_PREFIXES = re.compile(
    r"^\s*(?:(?:so|thus|therefore|hence)\s*,?\s*)?(?:the\s+)?(?:final\s+|short\s+)?answer\s*(?:is\s*:?|:)\s*",
    re.IGNORECASE,
)


def _normalize_numbers(text: str) -> str:
    text = _THOUSANDS.sub(lambda m: m.group(0).replace(",", ""), text)

    def trim(match: re.Match[str]) -> str:
        whole, frac = match.group(1), match.group(2).rstrip("0")
        return f"{whole}.{frac}" if frac else whole

    return _DECIMAL.sub(trim, text)


def _strip_punctuation(text: str) -> str:
    text = _DECIMAL_POINT.sub(_KEEP, text)
    text = _SEPARATORS.sub(" ", text)
    text = "".join(ch for ch in text if ch == _KEEP or unicodedata.category(ch)[0] not in "PS")
    return text.replace(_KEEP, ".")


def normalize_answer(text: str | None) -> str:
    """𝒩ℒ(text): the normalised answer string (see the module docstring for the steps)."""
    if not text:
        return ""
    text = unicodedata.normalize("NFKC", str(text)).lower()
    text = _normalize_numbers(text)
    text = _strip_punctuation(text)
    return " ".join(tok for tok in text.split() if tok not in ARTICLES)


def answer_tokens(text: str | None) -> list[str]:
    """T(text): the tokens of the normalised answer."""
    return normalize_answer(text).split()


def strip_answer_prefix(raw: str) -> str:
    """A model-free stand-in for B.3.1's LLM extraction: drops lead-ins such as
    "The answer is", "Answer:", "So, the final answer is" and a trailing full stop.
    The model-based extraction, when configured, replaces this."""
    text = _PREFIXES.sub("", raw.strip(), count=1).strip()
    return text[:-1].rstrip() if text.endswith(".") else text
