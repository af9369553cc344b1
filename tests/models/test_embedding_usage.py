"""Embedding usage in ``docgraph usage``: texts embedded, cache hits and tokens per stage
(``embed.<label>``), through real offline builds of the OpenStax excerpt."""

from __future__ import annotations

import numpy as np

from docgraph import Workspace
from docgraph.config import load_settings
from docgraph.methods.retrieval.chunk_vectors import ContextualChunks
from docgraph.models.usage import UsageMeter, embedding_stage, embedding_stage_name
from docgraph.types import Chunk


def test_stage_label_is_scoped_to_the_block():
    assert embedding_stage_name("passage") == "embed.passage"
    with embedding_stage("kg4vd entity vectors"):
        assert embedding_stage_name("passage") == "embed.kg4vd entity vectors"
    assert embedding_stage_name("query") == "embed.query"


def test_builds_record_embedded_texts_tokens_and_cache_hits(openstax_ws):
    with Workspace(openstax_ws, settings=load_settings(openstax_ws, environ={})) as ws:
        ws.build("dense")
        cold = ws.usage()["embed.chunks"]
        chunks = [Chunk.model_validate(v) for _, v in ws.store.iter_records("dense.chunk")]
        distinct = set(ContextualChunks.of(chunks, ws.settings.models.embedding).texts())
        # each distinct text (chunk text, title, heading) is embedded once; a title met again in
        # a later embedding block, or a repeated chunk text, is a cache hit
        assert cold.calls == len(distinct) and cold.calls + cold.cache_hits >= len(chunks)
        assert cold.input_tokens > 10 * cold.calls  # chunks are passages of many tokens
        ws.build("hybrid")  # the same chunk texts: answered by the cache
        warm = ws.usage()["embed.chunks"]
        assert warm.calls == cold.calls and warm.cache_hits >= cold.calls + cold.cache_hits
        ws.build("kg4vd")
        usage = ws.usage()
        assert usage["embed.kg4vd entity vectors"].calls > 0
        assert usage["embed.kg4vd chunk vectors"].cache_hits > 0  # KG4VD embeds the chunk texts dense did
        with ws.models.meter.track() as used:
            ws.retrieve("Who founded the Mongol Empire?", method="dense")
        assert used["embed.query"].calls + used["embed.query"].cache_hits == 1


def test_no_meter_no_records(tmp_path):
    from docgraph.models.embedding.embed_cache import CachedTextEmbedder
    from docgraph.store.sqlite import SQLiteStore

    class Fixed:
        model, dim = "fixed", 3

        def embed_passages(self, texts):
            return np.ones((len(texts), 3), dtype=np.float32)

    store = SQLiteStore(tmp_path)
    meter = UsageMeter(store)
    CachedTextEmbedder(Fixed(), store).embed_passages(["a"])
    assert not store.usage()
    CachedTextEmbedder(Fixed(), store, meter=meter).embed_passages(["a", "b", "a"])
    assert meter.snapshot()["embed.passage"].calls == 1 and meter.snapshot()["embed.passage"].cache_hits == 2


def test_usage_table_and_eval_totals_leave_embeddings_out():
    from docgraph.cli.build import format_usage
    from docgraph.eval.records import usage_dict
    from docgraph.types import Usage

    usage = {
        "embed.chunks": Usage(calls=40, cache_hits=2, input_tokens=9000, seconds=3.0),
        "kg4vd.extract": Usage(calls=3, input_tokens=1200, output_tokens=300, seconds=9.0),
    }
    table = format_usage(usage)
    assert "embed.chunks" in table  # listed
    total = table.splitlines()[-1].split()
    assert total[:5] == ["total", "(model", "calls)", "3", "0"] and total[5] == "1200"
    assert usage_dict(usage) == {"calls": 3, "input_tokens": 1200, "output_tokens": 300, "seconds": 9.0}
