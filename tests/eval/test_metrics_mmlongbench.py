"""MMLongBench-Doc's own scoring, branch by branch, on hand-computed cases."""

from __future__ import annotations

import pytest

from docgraph.eval.metrics import mmlongbench_acc_f1, mmlongbench_score
from docgraph.eval.metrics_mmlongbench import anls, clean_answer, levenshtein, must_match_exactly


@pytest.mark.parametrize(
    "raw, cleaned",
    [
        ("  Hello World ", "hello world"),
        ("$1,200", "1,200"),
        ("18.29%", "18.29"),
        ("'Less well-off'", "less well-off"),
        ('"quoted"', "quoted"),
        ("Paris (France)", "paris"),
        ("a (b) c (d)", "a c"),
        ("$$5%%", "5"),
    ],
)
def test_cleaning(raw, cleaned):
    assert clean_answer(raw) == cleaned


@pytest.mark.parametrize(
    "text, exact",
    [
        ("https://example.org/x", True),
        ("train.py", True),
        ("demo.ipynb", True),
        ("page 7", True),
        ("42", True),
        ("01983 873655", True),
        ("555-1234", True),
        ("10 a.m.", True),
        ("2019-03", True),
        ("2019-03-04", True),
        ("help@example.org", True),
        ("3.5", False),
        ("less well-off", False),
        ("12 34 56", False),
        ("march 2019", False),
    ],
)
def test_must_match_exactly(text, exact):
    assert must_match_exactly(text) is exact


def test_levenshtein_and_anls():
    assert levenshtein("kitten", "sitting") == 3
    assert levenshtein("", "abc") == 3 and levenshtein("abc", "abc") == 0
    assert anls("kitten", "sitting") == pytest.approx(1 - 3 / 7)
    assert anls("abcd", "abxy") == 0.0, "similarity exactly 0.5 is cut to 0"
    assert anls("", "") == 1.0


@pytest.mark.parametrize(
    "gold, pred, score",
    [
        ("8", "8", 1.0),
        ("8", "8.7", 1.0),
        ("8", "8.0", 1.0),
        ("8", "9", 0.0),
        ("8", "eight", 0.0),
        ("1000", "1,000", 0.0),
        ("8", "", 0.0),
        ("8.5", "8", 0.0),
    ],
)
def test_int(gold, pred, score):
    assert mmlongbench_score(gold, pred, "Int") == score


@pytest.mark.parametrize(
    "gold, pred, score",
    [
        ("18.29%", "18.29", 1.0),  # percent sign cleaned away
        ("18.29%", "0.1829", 1.0),  # gold / 100 accepted
        ("0.25", "25", 1.0),  # gold × 100 accepted
        ("100", "100.9", 1.0),  # within 1 %
        ("100", "102", 0.0),
        ("3.14159", "3.1", 0.0),  # 1.3 % off, and 3.10 ≠ 3.14 at two places
        ("0.001", "0.0014", 1.0),  # 40 % off, but equal rounded to min(decimals) = 3 places
        ("0.001", "0.0016", 0.0),
        ("2.5", "$2.5", 1.0),
        ("2.5", "about 2.5", 0.0),  # not a number after cleaning
        ("abc", "1.0", 0.0),  # unreadable gold
    ],
)
def test_float(gold, pred, score):
    assert mmlongbench_score(gold, pred, "Float") == score


def test_string_anls_and_exact():
    assert mmlongbench_score("Less well-off", "less well off", "Str") == pytest.approx(1 - 1 / 13)
    assert mmlongbench_score("Less well-off", "Poor", "Str") == 0.0
    assert mmlongbench_score("01983 873655", "01983 873656", "Str") == 0.0, "phone-like gold must match exactly"
    assert mmlongbench_score("01983 873655", "(tel) 01983 873655", "Str") == 1.0
    assert mmlongbench_score("Not answerable", "Not answerable", "None") == 1.0
    assert mmlongbench_score("Not answerable", "Some answer", "None") == 0.0


def test_list():
    gold = "['White', '10%']"
    assert mmlongbench_score(gold, "['10%', 'white']", "List") == 1.0, "order and case do not matter"
    assert mmlongbench_score(gold, "['White']", "List") == 0.0, "different lengths"
    assert mmlongbench_score(gold, "White, 10%", "List") == 0.0, "not a list: one item"
    assert mmlongbench_score("['Circle', 'Rectangle']", "['circle', 'rectangel']", "List") == pytest.approx(1 - 2 / 9)
    assert mmlongbench_score("['3', '5']", "['5', '3']", "List") == 1.0
    assert mmlongbench_score("['3', '5']", "['5', '4']", "List") == 0.0, "numbers must all match"
    assert mmlongbench_score("['Circle', 'Square']", "['Circle', 'Sq", "List") == 0.0, "unreadable list"
    assert mmlongbench_score("Circle", "Circle", "List") == 1.0, "a non-list gold is a one-item list"
    assert mmlongbench_score("[]", "[]", "List") == 0.0


def test_acc_and_f1():
    samples = [
        {"answer": "8", "pred": "8", "score": 1.0},
        {"answer": "x", "pred": "Not answerable", "score": 0.0},
        {"answer": "Not answerable", "pred": "Not answerable", "score": 1.0},
        {"answer": "Not answerable", "pred": "y", "score": 0.0},
        {"answer": "z", "pred": "z2"},  # not scored: left out
    ]
    acc, f1 = mmlongbench_acc_f1(samples)
    assert acc == pytest.approx(0.5)
    recall, precision = 1 / 2, 1 / 2  # answerable: 1 of 2; attempted (pred not "Not answerable"): 2
    assert f1 == pytest.approx(2 * recall * precision / (recall + precision))
    assert mmlongbench_acc_f1([]) == (0.0, 0.0)
    assert mmlongbench_acc_f1([{"answer": "Not answerable", "pred": "Not answerable", "score": 1.0}]) == (1.0, 0.0)
