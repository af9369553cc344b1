"""Detector and resolver: the offline rules, and how model replies map back to facts and groups."""

from __future__ import annotations

import re

from docgraph.methods.hvm.conflicts import (
    DetectionReply,
    ModelDetector,
    ModelResolver,
    OfflineDetector,
    OfflineResolver,
    ResolutionReply,
    SupportLimits,
    add_truncation,
)
from docgraph.methods.hvm.extraction import Fact
from docgraph.methods.hvm.holistic import HolisticView, apply_resolution, candidate_groups
from docgraph.models.base import ChatResult
from docgraph.types import Chunk


def fact(fid, h, r, t, chunk="d:1:P1"):
    return Fact(id=fid, head=h, relation=r, tail=t, chunks=[chunk])


def chunk(cid, page, text):
    return Chunk(id=cid, doc_id="d", page=page, component_ids=["P1"], text=text)


class FakeChat:
    model = "fake"

    def __init__(self, *replies):
        self.replies = list(replies)
        self.prompts: list[str] = []

    def complete(self, messages, *, stage, schema=None, **params):
        self.prompts.append(messages[-1].text)
        reply = self.replies.pop(0)
        return ChatResult(text=reply.model_dump_json(), parsed=reply)


def test_offline_rules_merge_same_values_and_flag_real_disagreements():
    view = HolisticView([fact("m1", "acme", "revenue", "1,200", "d:1:T1"), fact("m2", "acme", "ceo", "bob")])
    view.take_diff()
    new = [
        fact("n1", "acme", "revenue", "1200", "d:2:P1"),
        fact("n2", "acme", "revenue", "900", "d:2:P1"),
        fact("n3", "acme", "based_in", "spain", "d:2:P1"),
    ]
    groups = candidate_groups(view, new)
    confirmed = OfflineDetector().detect(view, new, groups)
    assert [c.group.kind for c in confirmed] == ["hr"]  # head-only groups are complementary facts
    resolution = OfflineResolver().resolve(view, new, confirmed, chunk("d:2:P1", 2, "..."), {})
    apply_resolution(view, new, confirmed, resolution)
    assert "n1" not in view.facts and view.facts["m1"].chunks == ["d:1:T1", "d:2:P1"]
    assert view.facts["m1"].status == view.facts["n2"].status == "unresolved"
    assert view.facts["n3"].status == view.facts["m2"].status == "accepted"


def test_offline_rules_resolve_a_pure_formatting_difference():
    view = HolisticView([fact("m1", "acme", "revenue", "1,200")])
    new = [fact("n1", "acme", "revenue", "1200", "d:2:P1")]
    confirmed = OfflineDetector().detect(view, new, candidate_groups(view, new))
    resolution = OfflineResolver().resolve(view, new, confirmed, chunk("d:2:P1", 2, ""), {})
    assert resolution.unresolved == set()
    apply_resolution(view, new, confirmed, resolution)
    assert list(view.facts) == ["m1"] and view.facts["m1"].status == "accepted"


def test_model_detector_maps_labels_types_and_pairs():
    view = HolisticView([fact("m1", "acme", "revenue", "1200", "d:1:T1"), fact("m2", "acme", "ceo", "bob")])
    new = [fact("n1", "acme", "revenue", "900", "d:2:P1")]
    groups = candidate_groups(view, new)  # G1 = hr {n1, m1}, G2 = h {n1, m1, m2}
    chat = FakeChat(
        DetectionReply.model_validate(
            {
                "groups": [
                    {"group": "G1", "conflict": True, "type": "Mutual", "pairs": [["F1", "F2"], ["F1", "F9"]]},
                    {"group": "g2", "conflict": True, "type": "contradiction", "pairs": []},
                    {"group": "G7", "conflict": True, "type": "mutual"},
                ]
            }
        )
    )
    confirmed = ModelDetector(chat, max_group_size=2).detect(view, new, groups)
    assert [(c.group.kind, c.type) for c in confirmed] == [("hr", "mutual"), ("h", "undetermined")]
    assert confirmed[0].pairs == (("n1", "m1"),)  # F9 does not exist
    assert len(confirmed[1].group) == 2  # bounded before it was shown
    prompt = chat.prompts[0]
    assert "F1: (acme, revenue, 900)  [new]" in prompt and "G2 (same head)" in prompt


def test_model_resolver_sees_support_and_maps_decisions():
    chunks = {"d:1:T1": chunk("d:1:T1", 1, "| ACME | revenue 1200 |"), "d:2:P1": chunk("d:2:P1", 2, "ACME made 900")}
    view = HolisticView([fact("m1", "acme", "revenue", "1200", "d:1:T1")])
    view.mention("acme", "ACME", "organization", "d:1:T1")
    new = [fact("n1", "acme", "revenue", "900", "d:2:P1")]
    confirmed = OfflineDetector().detect(view, new, candidate_groups(view, new))
    chat = FakeChat(
        ResolutionReply.model_validate(
            {
                "decisions": [
                    {"fact": "F1", "action": "Modify", "qualifier": "2021"},
                    {"fact": "F2", "action": "modify", "qualifier": "2020"},
                    {"fact": "F3", "action": "discard"},
                    {"fact": "F1", "action": "explode"},
                ],
                "unresolved": ["G1", "G5"],
            }
        )
    )
    resolution = ModelResolver(chat).resolve(view, new, confirmed, chunks["d:2:P1"], chunks)
    assert [(d.fact_id, d.action, d.qualifier) for d in resolution.decisions] == [
        ("n1", "modify", "2021"),
        ("m1", "modify", "2020"),
    ]
    assert resolution.unresolved == {0}
    prompt = chat.prompts[0]
    assert "S1 (page 1, text):\n| ACME | revenue 1200 |" in prompt  # B_g: where the group's facts come from
    assert "Current chunk" in prompt and "ACME made 900" in prompt


def test_detector_cuts_groups_only_as_set_and_counts_it():
    view = HolisticView([fact(f"m{k}", "acme", f"rel{k}", f"v{k}", f"d:1:P{k}") for k in range(5)])
    new = [fact("n1", "acme", "rel0", "other", "d:2:P1")]
    groups = candidate_groups(view, new)  # hr {n1, m0} and h {n1, m0..m4}
    assert sorted(len(g) for g in groups) == [2, 6]
    cut = ModelDetector(FakeChat(DetectionReply()), max_group_size=3)
    cut.detect(view, new, groups)
    assert cut.truncated == {"groups_cut": 1, "group_facts_omitted": 3}
    whole = ModelDetector(chat := FakeChat(DetectionReply()), max_group_size=0)
    whole.detect(view, new, groups)
    assert not whole.truncated and chat.prompts[0].count("  F") == 2 + 6  # every fact of both groups shown


def test_resolver_shows_b_g_within_its_limits_and_counts_the_rest():
    chunks = {f"d:{p}:P1": chunk(f"d:{p}:P1", p, f"page {p} says ACME revenue " + "x" * 50) for p in range(1, 6)}
    view = HolisticView([fact("m1", "acme", "revenue", "1200", "d:1:P1")])
    for p in range(2, 5):
        view.mention("acme", "ACME", "organization", f"d:{p}:P1")  # I_fac(acme): four chunks
    new = [fact("n1", "acme", "revenue", "900", "d:5:P1")]
    confirmed = OfflineDetector().detect(view, new, candidate_groups(view, new))

    def resolve(limits):
        chat = FakeChat(ResolutionReply())
        resolver = ModelResolver(chat, limits=limits)
        return resolver, resolver.resolve(view, new, confirmed, chunks["d:5:P1"], chunks), chat.prompts[0]

    resolver, resolution, prompt = resolve(SupportLimits(per_group=2, chars=30))
    assert re.findall(r"^(S\d) \(page (\d)", prompt, re.M) == [("S1", "1"), ("S2", "2")]  # own source first
    assert resolution.support_omitted == {0: 2}
    assert resolver.truncated == {"support_groups_cut": 1, "support_chunks_omitted": 2, "texts_cut": 3}
    assert "S1 (page 1, text):\npage 1 says ACME revenue xxxxx\n" in prompt  # 30 characters
    resolver, resolution, prompt = resolve(SupportLimits(per_group=0, chars=0))
    assert len(re.findall(r"^S\d \(page", prompt, re.M)) == 4 and not resolution.support_omitted
    assert not resolver.truncated and "x" * 50 in prompt
    total: dict[str, int] = {"texts_cut": 1}
    add_truncation(total, resolve(SupportLimits(per_group=2, chars=30))[0], OfflineResolver())
    assert total == {"texts_cut": 4, "support_groups_cut": 1, "support_chunks_omitted": 2}
