"""Page images and crops are JPEG by default (``ingest.image_format``), PNG when asked; readers
follow the stored path, so a workspace ingested with PNG keeps working."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from docgraph.config import IngestSettings
from docgraph.documents.ingestion import ingest
from docgraph.documents.render import jpeg_bytes, save_image
from docgraph.store.sqlite import SQLiteStore


def test_save_image_writes_the_format_its_path_names(tmp_path):
    pixels = np.random.default_rng(3).integers(0, 256, (60, 80, 3), dtype=np.uint8)
    image = Image.fromarray(pixels, "RGB")
    save_image(image, tmp_path, "pages/d/p0001.jpg", jpeg_quality=90)
    save_image(image, tmp_path, "pages/d/p0001.png")
    assert (tmp_path / "pages/d/p0001.jpg").read_bytes()[:3] == b"\xff\xd8\xff"
    assert np.array_equal(np.asarray(Image.open(tmp_path / "pages/d/p0001.png")), pixels), "PNG stays lossless"
    assert sorted(p.name for p in (tmp_path / "pages/d").iterdir()) == ["p0001.jpg", "p0001.png"], "no temp files"
    smooth = Image.fromarray(np.tile(np.linspace(0, 255, 80, dtype=np.uint8), (60, 1)), "L").convert("RGB")
    decoded = np.asarray(Image.open(io.BytesIO(jpeg_bytes(smooth, 90))), dtype=np.int16)
    assert np.abs(decoded - np.asarray(smooth, dtype=np.int16)).max() <= 8, "quality 90 is close to the source"


def test_ingest_writes_jpeg_by_default_and_png_when_asked(tmp_path, documents_dir):
    pdf = documents_dir / "acciona_sustainability_report_2020_p1.pdf"
    sizes = {}
    for image_format in ("jpeg", "png"):
        root = tmp_path / image_format
        store = SQLiteStore(root / "docgraph.sqlite")
        try:
            settings = IngestSettings(workers=1, image_format=image_format)
            ingest(store, root, settings, [pdf])
            pages = [store.get_page(doc.id, 1) for doc in store.list_documents()]
        finally:
            store.close()
        suffix = {"jpeg": ".jpg", "png": ".png"}[image_format]
        crops = [c.crop_path for p in pages for c in p.components if c.crop_path]
        assert len(pages) == 1 and crops, "the report's page has pictures"
        for rel in [p.image_path for p in pages] + crops:
            assert rel.endswith(suffix) and (root / rel).is_file(), rel
        with Image.open(root / pages[0].image_path) as image:
            assert image.format == {"jpeg": "JPEG", "png": "PNG"}[image_format]
            sizes[image_format] = image.size
    assert sizes["jpeg"] == sizes["png"], "same resolution"
