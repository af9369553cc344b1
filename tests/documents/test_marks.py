"""Set-of-Marks images, masking and crops on a stored page of the corpus."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from docgraph.documents import crop_components, draw_marks
from docgraph.documents.marks import KIND_COLOURS, MASK_FILL
from docgraph.documents.render import pixel_box
from docgraph.errors import InputError
from docgraph.types import ComponentKind


@pytest.fixture(scope="module")
def esg(corpus):
    return corpus.doc("acciona").pages[0], corpus.root


def _pixels(page, root, comp_id, image):
    comp = page.component(comp_id)
    return pixel_box(comp.bbox, image.width / page.width, image.size)


def test_marks_are_deterministic_and_coloured_by_kind(esg, tmp_path):
    page, root = esg
    first = draw_marks(page, root, tmp_path / "a.png")
    second = draw_marks(page, root, tmp_path / "b.png")
    assert first.read_bytes() == second.read_bytes()
    marked = np.asarray(Image.open(first).convert("RGB"))
    plain = np.asarray(Image.open(root / page.image_path).convert("RGB"))
    assert marked.shape == plain.shape and (marked != plain).any()
    x0, y0, x1, y1 = _pixels(page, root, "T1", Image.open(first))
    assert tuple(marked[(y0 + y1) // 2, x0]) == KIND_COLOURS[ComponentKind.TABLE]  # left edge of the box


def test_mask_greys_out_the_given_components(esg, tmp_path):
    page, root = esg
    image = Image.open(draw_marks(page, root, tmp_path / "masked.png", mask={"T1", "IM1"})).convert("RGB")
    pixels = np.asarray(image)
    for comp_id in ("T1", "IM1"):
        x0, y0, x1, y1 = _pixels(page, root, comp_id, image)
        inner = pixels[y0 + 30 : y1 - 30, x0 + 30 : x1 - 30]  # clear of other components' outlines and tags
        assert (inner == MASK_FILL).all(), comp_id
    unmasked = np.asarray(Image.open(draw_marks(page, root, tmp_path / "plain.png")).convert("RGB"))
    x0, y0, x1, y1 = _pixels(page, root, "T1", image)
    assert not (unmasked[y0 + 30 : y1 - 30, x0 + 30 : x1 - 30] == MASK_FILL).all()
    with pytest.raises(InputError, match="no component"):
        draw_marks(page, root, tmp_path / "x.png", mask={"T9"})


def test_crops_cover_the_union_of_components(esg, tmp_path):
    page, root = esg
    table = page.component("T1")
    out = crop_components(page, root, ["T1"], tmp_path / "t1.png")
    x0, y0, x1, y1 = pixel_box(table.bbox, page.dpi / 72, Image.open(root / page.image_path).size)
    assert Image.open(out).size == (x1 - x0, y1 - y0)
    assert Image.open(root / table.crop_path).size == (x1 - x0, y1 - y0)  # the crop made at ingest
    both = page.component("TI2").bbox.union(table.bbox)
    x0, y0, x1, y1 = pixel_box(both, page.dpi / 72, Image.open(root / page.image_path).size)
    assert Image.open(crop_components(page, root, ["TI2", "T1"], tmp_path / "u.png")).size == (x1 - x0, y1 - y0)
