"""The holistic view's pure logic: grouping by key, bounding, I_fac bookkeeping, applying resolutions."""

from __future__ import annotations

from docgraph.methods.hvm.extraction import ExtractedEntity, ExtractedFact, Extraction, Fact, entity_key, relation_name
from docgraph.methods.hvm.holistic import (
    ConfirmedGroup,
    Decision,
    HolisticView,
    Resolution,
    apply_resolution,
    bounded,
    candidate_groups,
    group_entities,
    group_support,
    merge_duplicates,
    register_extraction,
)


def fact(fid: str, h: str, r: str, t: str, chunk: str = "d:1:P1", **kw) -> Fact:
    return Fact(id=fid, head=h, relation=r, tail=t, chunks=[chunk], **kw)


def view_of(*facts: Fact) -> HolisticView:
    view = HolisticView(facts)
    view.take_diff()
    return view


def test_names_normalise():
    assert entity_key("  The  Ottoman Empire. ") == "ottoman empire"
    assert entity_key("ACCIONA") == entity_key("acciona")
    assert relation_name("Is located in") == "is_located_in"
    assert relation_name("  !!") == "related_to"


def test_groups_by_head_relation_head_tail_and_head():
    view = view_of(
        fact("m1", "acciona", "tax_paid", "1000"),
        fact("m2", "acciona", "based_in", "spain"),
        fact("m3", "iberdrola", "tax_paid", "900"),
    )
    new = [fact("n1", "acciona", "tax_paid", "1200", chunk="d:2:P1")]
    groups = {g.kind: g for g in candidate_groups(view, new)}
    assert set(groups) == {"hr", "h"}  # (head, tail) = (acciona, 1200) has no partner
    assert set(groups["hr"].fact_ids) == {"n1", "m1"}
    assert set(groups["h"].fact_ids) == {"n1", "m1", "m2"}
    assert groups["h"].fact_ids[0] == "n1"  # new facts first
    assert groups["h"].fact_ids[1] == "m1"  # then the fact sharing the relation
    assert groups["hr"].new_ids == ("n1",)


def test_head_tail_group_and_identical_groups_are_deduplicated():
    view = view_of(fact("m1", "paris", "capital_of", "france"))
    new = [fact("n1", "paris", "largest_city_of", "france")]
    groups = candidate_groups(view, new)
    # g_ht and g_h hold the same two facts: one group, reported under the first key that found it
    assert [(g.kind, set(g.fact_ids)) for g in groups] == [("ht", {"n1", "m1"})]


def test_lone_fact_makes_no_group_and_new_facts_group_among_themselves():
    assert candidate_groups(view_of(), [fact("n1", "a", "r", "b")]) == []
    groups = candidate_groups(view_of(), [fact("n1", "a", "r", "b"), fact("n2", "a", "r", "c")])
    assert {g.kind for g in groups} == {"hr"}
    assert groups[0].new_ids == ("n1", "n2")


def test_bounded_keeps_the_most_related_facts():
    olds = [fact(f"m{i}", "acme", f"rel{i}", f"x{i}") for i in range(10)]
    olds.append(fact("m_same", "acme", "ceo", "bob"))
    view = view_of(*olds)
    group = next(g for g in candidate_groups(view, [fact("n1", "acme", "ceo", "alice")]) if g.kind == "h")
    assert len(group) == 12
    small = bounded(group, 4)
    assert small.fact_ids[:2] == ("n1", "m_same")
    assert len(small) == 4 and small.omitted == 8
    assert small.fact_ids[2:] == ("m9", "m8")  # then the most recent
    assert bounded(group, 1).fact_ids == ("n1", "m_same")  # never below two


def test_register_extraction_records_mentions_and_support():
    view = HolisticView()
    extraction = Extraction(
        entities=[
            ExtractedEntity(name="ACCIONA", concept="Organizations"),
            ExtractedEntity(name="Spain", concept="Country"),
        ],
        facts=[
            ExtractedFact(head="ACCIONA", relation="Pays tax in", tail="Spain"),
            ExtractedFact(head="ACCIONA", relation="pays_tax_in", tail="Spain"),
            ExtractedFact(head="ACCIONA", relation="total tax", tail="€1,200m", tail_concept="Amount"),
            ExtractedFact(head="ACCIONA", relation="is", tail="acciona"),
        ],
    )
    new = register_extraction(view, "d:1:T1", extraction)
    assert [(f.id, f.triple) for f in new] == [
        ("d:1:T1#f1", ("acciona", "pays_tax_in", "spain")),
        ("d:1:T1#f2", ("acciona", "total_tax", "€1,200m")),
    ]
    assert view.entities["acciona"].concept == "organization"
    assert view.entities["€1,200m"].concept == "amount"
    assert view.entities["€1,200m"].mentions == []  # a fact endpoint, not an extracted entity
    assert view.support("acciona") == ["d:1:T1"]
    assert view.support("€1,200m") == []  # not in M yet
    for f in new:
        view.add(f)
    assert view.support("€1,200m") == ["d:1:T1"]


def test_exact_duplicates_merge_provenance():
    view = view_of(fact("m1", "acciona", "based_in", "spain", chunk="d:1:P1"))
    fresh, merged = merge_duplicates(
        view,
        [
            fact("n1", "acciona", "based_in", "spain", chunk="d:3:P2"),
            fact("n2", "acciona", "based_in", "madrid", chunk="d:3:P2"),
        ],
    )
    assert [f.id for f in fresh] == ["n2"]
    assert merged == {"n1": "m1"}
    assert view.facts["m1"].chunks == ["d:1:P1", "d:3:P2"]
    assert set(view.take_diff().facts) == {"m1"}


def test_group_support_is_union_of_entity_support():
    view = HolisticView()
    view.mention("acciona", "ACCIONA", "organization", "d:1:P1")
    view.mention("acciona", "ACCIONA", "organization", "d:2:P1")
    view.mention("spain", "Spain", "country", "d:5:P1")
    old = fact("m1", "acciona", "based_in", "spain", chunk="d:2:P1")
    view.add(old)
    new = fact("n1", "acciona", "based_in", "chile", chunk="d:7:P1")
    group = candidate_groups(view, [new])[0]
    facts = {**view.facts, "n1": new}
    assert group_entities(group, facts) == ["acciona", "chile", "spain"]
    assert group_support(view, group, facts) == ["d:7:P1", "d:2:P1", "d:1:P1", "d:5:P1"]


def _setup_conflict():
    old = fact("m1", "acciona", "total_tax", "1000", chunk="d:1:T1")
    other = fact("m2", "acciona", "based_in", "spain", chunk="d:1:P1")
    view = view_of(old, other)
    new = [fact("n1", "acciona", "total_tax", "1200", chunk="d:2:P3"), fact("n2", "spain", "in", "europe", "d:2:P3")]
    group = next(g for g in candidate_groups(view, new) if g.kind == "hr")
    return view, new, ConfirmedGroup(group=group, type="mutual", pairs=(("n1", "m1"),))


def test_resolution_discard_keeps_the_supported_fact_and_adds_facts_outside_groups():
    view, new, conf = _setup_conflict()
    report = apply_resolution(
        view, new, [conf], Resolution([Decision("n1", "discard", reason="table says 1000"), Decision("m1", "keep")])
    )
    assert set(view.facts) == {"m1", "m2", "n2"}
    assert view.facts["m1"].conflict == "mutual"
    assert (report.discarded, report.kept, report.added) == (1, 1, 1)
    diff = view.take_diff()
    assert set(diff.facts) == {"m1", "n2"} and diff.deleted_facts == set()
    assert "1200" in diff.deleted_entities or "1200" not in view.entities


def test_resolution_discarding_an_existing_fact_removes_it_and_its_only_entity():
    view, new, conf = _setup_conflict()
    view.mention("1000", "1000", "amount", None)
    apply_resolution(view, new, [conf], Resolution([Decision("m1", "discard")]))
    assert "m1" not in view.facts and "n1" in view.facts
    diff = view.take_diff()
    assert "m1" in diff.deleted_facts
    assert "1000" in diff.deleted_entities  # no mention and no fact left: gone from V_ent


def test_resolution_modify_scopes_both_facts_by_time():
    view, new, conf = _setup_conflict()
    apply_resolution(
        view,
        new,
        [conf],
        Resolution(
            [
                Decision("m1", "modify", relation="total tax in 2019", qualifier="2019"),
                Decision("n1", "modify", qualifier="2020"),
            ]
        ),
    )
    assert view.facts["m1"].relation == "total_tax_in_2019" and view.facts["m1"].qualifier == "2019"
    assert view.facts["n1"].relation == "total_tax" and view.facts["n1"].qualifier == "2020"
    assert {f.status for f in view.facts.values()} == {"accepted"}


def test_resolution_merge_moves_provenance_and_merge_into_discarded_discards():
    view, new, conf = _setup_conflict()
    apply_resolution(view, new, [conf], Resolution([Decision("n1", "merge", into="m1")]))
    assert "n1" not in view.facts and view.facts["m1"].chunks == ["d:1:T1", "d:2:P3"]

    view, new, conf = _setup_conflict()
    report = apply_resolution(
        view, new, [conf], Resolution([Decision("n1", "merge", into="m1"), Decision("m1", "discard")])
    )
    assert "n1" not in view.facts and "m1" not in view.facts and report.discarded == 2


def test_unresolved_groups_keep_both_sides_marked():
    view, new, conf = _setup_conflict()
    report = apply_resolution(view, new, [conf], Resolution(unresolved={0}))
    assert view.facts["m1"].status == view.facts["n1"].status == "unresolved"
    assert view.facts["m2"].status == "accepted"
    assert report.unresolved == 2


def test_invalid_decisions_are_ignored_and_reported():
    view, new, conf = _setup_conflict()
    report = apply_resolution(
        view,
        new,
        [conf],
        Resolution(
            [
                Decision("m2", "discard"),  # not in a confirmed group
                Decision("n1", "merge", into="m2"),  # target outside the group
                Decision("m1", "modify"),  # nothing to modify with
            ]
        ),
    )
    assert len(report.ignored) == 3
    assert {"m1", "m2", "n1", "n2"} <= set(view.facts)


def test_modified_fact_that_repeats_another_merges_into_it():
    view, new, conf = _setup_conflict()
    view.add(fact("m3", "acciona", "total_tax_2020", "1200", chunk="d:1:T2"))
    view.take_diff()
    apply_resolution(view, new, [conf], Resolution([Decision("n1", "modify", relation="total_tax_2020")]))
    assert "n1" not in view.facts
    assert view.facts["m3"].chunks == ["d:1:T2", "d:2:P3"]
