"""Cross-page judging as KG4VD specifies it (issue 17 item 4): with the model judge every
entity is judged against its own top-``cross_page_top_k`` candidates, less those under the
similarity floor; the offline judge keeps its candidate sets (each pair once, no floor).
Also the model judge's image limit (``models.build.max_images``)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from docgraph.methods.kg4vd.crosspage import candidate_pairs
from docgraph.methods.kg4vd.judge import JudgeItem, JudgeReply, ModelJudge
from docgraph.models.base import ChatResult
from docgraph.types import Entity, Mention


def entity(eid: str, page: int, modality: str = "text") -> Entity:
    return Entity(id=eid, name=eid, type="visual_object" if modality == "visual" else "concept",
                  modality=modality, mentions=[Mention(doc_id="d", page=page, component_ids=["P1"])])


class RecordingChat:
    supports_vision = True
    model = "scripted"

    def __init__(self):
        self.calls = []

    def complete(self, messages, **kwargs):
        self.calls.append(messages)
        return ChatResult(text="{}", parsed=JudgeReply())


def test_model_judge_attaches_at_most_the_endpoints_image_limit(tmp_path: Path):
    crops = []
    for n in range(4):
        crops.append(tmp_path / f"c{n}.png")
        crops[-1].write_bytes(b"png")
    anchor = JudgeItem("a", entity("a", 1, "visual"), crops[0])
    candidates = [(JudgeItem(f"v{n}", entity(f"v{n}", 2, "visual"), crops[n]), 0.9) for n in (1, 2, 3)]
    for limit, expected in ((None, 4), (2, 2), (0, 0)):
        chat = RecordingChat()
        verdicts, _ = ModelJudge(chat, max_images=limit).judge(anchor, candidates)
        (message,) = chat.calls[-1]
        assert len(message.images) == expected and len(verdicts) == 3
        assert re.findall(r"\[image (\d+)\]", message.text) == [str(n) for n in range(1, expected + 1)]
