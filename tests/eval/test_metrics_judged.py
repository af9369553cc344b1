"""FineSurE oracle normalisation and order-consistent pairwise win rates, hand-computed."""

from __future__ import annotations

import math

import pytest

from docgraph.eval.metrics_judged import (
    FineSurEJudgement,
    PairJudgement,
    finesure_report,
    order_consistent_winner,
    win_rates,
)


def test_finesure_fractions_and_alignment():
    j = FineSurEJudgement.from_alignment([True, False, True, True], n_facts=5, alignment={0: [0], 2: [0, 3], 4: []})
    assert j.sentence_aligned == [True, False, False, True]
    assert j.fact_covered == [True, False, True, False, False]
    assert j.scores() == {"faithfulness": 0.75, "completeness": 0.4, "conciseness": 0.5}
    empty = FineSurEJudgement([], [], [True]).scores()
    assert empty["faithfulness"] == 0.0 and empty["conciseness"] == 0.0 and empty["completeness"] == 1.0
    assert math.isnan(FineSurEJudgement([True], [True], []).scores()["completeness"])
    with pytest.raises(ValueError):
        FineSurEJudgement.from_alignment([True], n_facts=1, alignment={0: [3]})


def test_finesure_report_normalises_per_judge_then_averages():
    # judge g1: method means F=0.5, C=0.5, Co=0.25; oracle means F=1.0, C=1.0, Co=0.5
    # judge g2: method means F=0.6, C=0.2, Co=0.4;  oracle means F=0.8, C=0.6, Co=0.8
    m1 = [
        FineSurEJudgement([True, False], [True, False], [True, False]),
        FineSurEJudgement([True, False], [False, False], [True, False]),
    ]
    o1 = [FineSurEJudgement([True], [True], [True]), FineSurEJudgement([True, True], [False, False], [True])]
    m2 = [
        FineSurEJudgement(
            [True, True, False, False, True], [True, True, False, False, False], [True, False, False, False, False]
        )
    ] * 2
    o2 = [
        FineSurEJudgement(
            [True, True, True, True, False], [True, True, True, True, False], [True, True, True, False, False]
        )
    ] * 2
    report = finesure_report({"g1": m1, "g2": m2}, {"g1": o1, "g2": o2})
    assert report.raw["g1"] == {"faithfulness": 0.5, "completeness": 0.5, "conciseness": 0.25}
    assert report.oracle["g2"]["completeness"] == pytest.approx(0.6)
    # normalised: g1 = (0.5, 0.5, 0.5), g2 = (0.75, 1/3, 0.5) → mean (0.625, 5/12, 0.5)
    assert report.normalized["faithfulness"] == pytest.approx(0.625)
    assert report.normalized["completeness"] == pytest.approx(5 / 12)
    assert report.normalized["conciseness"] == pytest.approx(0.5)
    assert report.normalized["overall"] == pytest.approx((0.625 + 5 / 12 + 0.5) / 3)
    assert report.n_questions == 2


def test_finesure_report_rejects_bad_inputs():
    one = [FineSurEJudgement([True], [True], [True])]
    with pytest.raises(ValueError):
        finesure_report({"g1": one}, {"g2": one})
    with pytest.raises(ValueError):
        finesure_report({"g1": one}, {"g1": [FineSurEJudgement([False], [True], [True])]})  # oracle 0


@pytest.mark.parametrize(
    "first,second,expected",
    [
        (1, 2, "a"),
        (2, 1, "b"),
        (1, 1, "tie"),
        (2, 2, "tie"),
        ("tie", 2, "tie"),
        ("Answer 1", "answer 2", "a"),
        ("2", "1", "b"),
        (None, None, "tie"),
    ],
)
def test_order_consistent_winner(first, second, expected):
    assert order_consistent_winner(first, second) == expected


def test_win_rates_per_judge_then_averaged():
    crit = ("comprehensiveness", "overall")

    def pj(judge, a, b):
        return PairJudgement(judge, dict(zip(crit, a)), dict(zip(crit, b)))

    judgements = [
        pj("g1", (1, 1), (2, 2)),  # A wins both criteria
        pj("g1", (1, 2), (1, 1)),  # comp: inconsistent → tie; overall: B wins
        pj("g1", (2, 1), (1, 2)),  # comp: B wins; overall: A wins
        pj("g1", (1, 1), (2, 2)),  # A wins both
        pj("g2", (1, 1), (2, 1)),  # comp: A; overall: tie
        pj("g2", (1, 1), (2, 2)),  # A both
        pj("g2", (2, 2), (1, 1)),  # B both
        pj("g2", ("tie", 1), ("tie", 2)),  # comp: tie; overall: A
    ]
    rates = win_rates(judgements, criteria=crit)
    comp = rates["comprehensiveness"]
    # g1 comp: A 2/4, B 1/4, tie 1/4; g2 comp: A 2/4, B 1/4, tie 1/4
    assert (comp.win, comp.loss, comp.tie) == pytest.approx((0.5, 0.25, 0.25))
    overall = rates["overall"]
    # g1 overall: A 3/4, B 1/4, tie 0; g2 overall: A 2/4, B 1/4, tie 1/4 → mean (0.625, 0.25, 0.125)
    assert (overall.win, overall.loss, overall.tie) == pytest.approx((0.625, 0.25, 0.125))
    assert overall.delta == pytest.approx(0.375) and overall.n_pairs == 4
    assert overall.per_judge["g1"] == pytest.approx((0.75, 0.25, 0.0))


def test_win_rates_validation():
    with pytest.raises(ValueError):
        win_rates([PairJudgement("g", {"overall": 1}, {})], criteria=("overall",))
    with pytest.raises(ValueError):
        win_rates(
            [
                PairJudgement("g1", {"overall": 1}, {"overall": 2}),
                PairJudgement("g2", {"overall": 1}, {"overall": 2}),
                PairJudgement("g2", {"overall": 1}, {"overall": 2}),
            ],
            criteria=("overall",),
        )
    with pytest.raises(ValueError):
        order_consistent_winner("maybe", 1)
