"""Ray-distributed ingest and embedding (``docgraph.scale``) on a real local cluster.

A workspace added and built with ``ray.enabled`` must hold exactly what a local run
stores: the same pages and components, and bit-identical vectors, even when a worker
process is SIGKILLed in the middle of the build (Ray reruns its task).
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

ray = pytest.importorskip("ray")

from docgraph import Workspace  # noqa: E402
from docgraph.cli import main  # noqa: E402
from docgraph.scale.cluster import FAULT_FILE_ENV, ROLE_ENV, WORKER_ENV, remote_task  # noqa: E402
from docgraph.scale.ray_embed import RayTextEmbedder, shards  # noqa: E402

EXCERPT = "openstax_world_history_v1_excerpt.pdf"
RAY = {"ray": {"enabled": True}}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A local 2-CPU cluster whose workers kill themselves once a fault file appears."""
    fault = tmp_path_factory.mktemp("ray") / "kill-one-worker"
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {**WORKER_ENV, FAULT_FILE_ENV: str(fault)}},
    )
    yield fault
    ray.shutdown()


def page_rows(ws: Workspace) -> list:
    doc = ws.documents()[0]
    return [
        (p.number, p.width, p.height, p.source, [(c.id, c.kind, c.text, c.bbox.model_dump()) for c in p.components])
        for p in doc.pages
    ]


def vectors(ws: Workspace, namespace: str) -> tuple[list[str], np.ndarray]:
    return ws.store.load_vectors(namespace)


def test_shards_cover_every_text_once():
    assert shards(5, 2) == [(0, 2), (2, 5)] or shards(5, 2) == [(0, 3), (3, 5)]
    assert shards(1, 8) == [(0, 1)] and shards(0, 2) == []
    cut = shards(53, 4)
    assert cut[0][0] == 0 and cut[-1][1] == 53 and all(a[1] == b[0] for a, b in zip(cut, cut[1:]))


def test_ray_add_and_build_equal_a_local_run_despite_a_killed_worker(cluster, shared_data, tmp_path):
    pdf = tmp_path / EXCERPT
    shutil.copy(shared_data / "documents" / EXCERPT, pdf)
    with Workspace(tmp_path / "local", overrides={"ingest": {"workers": 1}}) as local:
        local.add([pdf])
        local.build("dense")
        expected_pages, expected = page_rows(local), vectors(local, "dense.chunk")

    cluster.write_text("kill the first worker that claims this\n")
    with Workspace(tmp_path / "ray", overrides=RAY) as distributed:
        distributed.add([pdf])
        assert not cluster.exists(), "a page task claimed the fault file and killed its worker"
        assert page_rows(distributed) == expected_pages
        cluster.write_text("kill the first worker that claims this\n")
        distributed.build("dense")
        assert not cluster.exists(), "an embedding task claimed the fault file and killed its worker"
        keys, matrix = vectors(distributed, "dense.chunk")
        assert keys == expected[0] and len(keys) > 10
        assert np.array_equal(matrix, expected[1]), "vectors bit-identical to the local build"
        assert distributed.retrieve("Mongol Empire", method="dense").pages
    claimed = list(cluster.parent.glob(f"{cluster.name}.claimed.*"))
    assert len(claimed) == 2, "two worker processes were killed, one per run"


def test_ray_page_workers_are_replaced_after_their_share_and_the_pages_still_match(cluster, shared_data, tmp_path):
    """``ingest.worker_pages`` on Ray: each worker exits after that many pages (max_calls)."""
    from docgraph.config import RaySettings
    from docgraph.scale.ray_pages import RayPageRunner

    runner = RayPageRunner(RaySettings(enabled=True), lambda line: None, recycle_after=1)
    assert runner._task._default_options["max_calls"] == 1
    assert "max_calls" not in RayPageRunner(RaySettings(enabled=True), lambda line: None)._task._default_options
    pdf = tmp_path / EXCERPT
    shutil.copy(shared_data / "documents" / EXCERPT, pdf)
    with Workspace(tmp_path / "local", overrides={"ingest": {"workers": 1}}) as local:
        local.add([pdf])
        expected = page_rows(local)
    with Workspace(tmp_path / "ray", overrides={**RAY, "ingest": {"worker_pages": 1}}) as recycled:
        recycled.add([pdf])
        assert page_rows(recycled) == expected, "every page came back, each from a fresh worker"


def test_page_and_embedding_tasks_run_in_workers_of_their_own(cluster):
    """A page worker holds the layout and OCR networks; were it handed embedding too, it would
    hold both. (That Ray then retires the idle page workers is its own idle-worker policy,
    which depends on what other idle workers the cluster holds: measured by
    benchmarks/scale.py, not asserted here.)"""
    from docgraph.config import RaySettings
    from docgraph.scale.ray_pages import RayPageRunner

    settings = RaySettings(enabled=True)
    page_env = RayPageRunner(settings, lambda line: None)._task._runtime_env
    assert page_env["env_vars"][ROLE_ENV] == "pages"

    class Unused:
        model, dim = "unused", 384

    embed_env = RayTextEmbedder(Unused(), None, settings)._task._runtime_env  # type: ignore[arg-type]
    assert embed_env["env_vars"][ROLE_ENV] == "embed" and embed_env["env_vars"]["OMP_NUM_THREADS"] == "2"

    def worker_identity() -> tuple[int, str | None, str | None]:  # nested: Ray ships it by value
        import os

        return os.getpid(), os.environ.get("DOCGRAPH_RAY_ROLE"), os.environ.get("OMP_NUM_THREADS")

    as_pages, as_embedding = remote_task(ray, worker_identity, "pages"), remote_task(ray, worker_identity, "embed")
    pages = set(ray.get([as_pages.remote() for _ in range(8)]))
    embedding = set(ray.get([as_embedding.remote() for _ in range(8)]))
    assert {role for _, role, _ in pages} == {"pages"} and {role for _, role, _ in embedding} == {"embed"}
    assert {threads for _, _, threads in pages | embedding} == {"1"}, "the job's env vars still reach them"
    page_pids = {pid for pid, _, _ in pages}
    assert not page_pids & {pid for pid, _, _ in embedding}, "an embedding task ran in a page worker"


def test_embedding_tasks_are_embed_threads_wide_and_rows_do_not_depend_on_it(cluster, shared_data):
    """One 2-thread embedding worker on the 2-CPU cluster by default (one model in memory, not
    two); ``ray.embed_threads = 1`` shards each call over two 1-thread workers; a width above
    the largest node's CPUs would never be scheduled, so it is clamped. Same rows every way."""
    import pymupdf

    from docgraph.config import EmbeddingSettings, RaySettings
    from docgraph.models.embedding.embed_local import local_spec

    spec = local_spec(EmbeddingSettings(), None)
    local = spec.build()
    with pymupdf.open(shared_data / "documents" / EXCERPT) as doc:
        texts = [line for page in list(doc)[:4] for line in page.get_text().split("\n") if len(line.split()) > 4][:40]
    wide, narrow, too_wide = (
        RayTextEmbedder(local, spec, RaySettings(enabled=True, embed_threads=threads)) for threads in (2, 1, 64)
    )
    assert (wide.threads, wide.parts) == (2, 1) and (narrow.threads, narrow.parts) == (1, 2)
    assert (too_wide.threads, too_wide.parts) == (2, 1)
    assert wide._task._default_options["num_cpus"] == 2 and narrow._task._default_options["num_cpus"] == 1
    assert narrow._task._runtime_env["env_vars"]["OMP_NUM_THREADS"] == "1"
    rows = wide.embed_passages(texts)
    assert len(texts) > 10 and rows.shape == (len(texts), 384)
    assert np.array_equal(rows, narrow.embed_passages(texts)), "rows do not depend on the task width"
    assert np.array_equal(rows, local.embed_passages(texts)), "nor on where they are computed"


def test_a_build_embeds_even_a_single_passage_on_the_cluster(cluster):
    """Only a query is embedded in the calling process; passages never load the model there."""
    from docgraph.config import EmbeddingSettings, RaySettings
    from docgraph.models.embedding.embed_local import local_spec

    spec = local_spec(EmbeddingSettings(), None)

    class LocalMustNotEmbedPassages:
        model = "local"

        def embed_passages(self, texts):
            raise AssertionError(f"embedded {len(texts)} passage(s) in the calling process")

        def embed_queries(self, texts):
            return spec.build().embed_queries(texts)

    embedder = RayTextEmbedder(LocalMustNotEmbedPassages(), spec, RaySettings(enabled=True))  # type: ignore[arg-type]
    one = embedder.embed_passages(["The Mongol Empire traded along the Silk Road."])
    assert one.shape == (1, 384) and np.isclose(float(np.linalg.norm(one)), 1.0, atol=1e-4)
    assert embedder.embed_queries(["Mongol trade"]).shape == (1, 384)


def test_cli_ray_flag(cluster, shared_data, tmp_path, capsys):
    ws = tmp_path / "ws"
    assert main(["--workspace", str(ws), "add", str(shared_data / "documents" / EXCERPT), "--ray"]) == 0
    out = capsys.readouterr()
    assert "Ray tasks on 2 CPU(s)" in out.out + out.err and "added" in out.out
    assert main(["--workspace", str(ws), "build", "--method", "bm25", "--ray"]) == 0


def test_ray_not_installed_is_a_clear_error(monkeypatch):
    import sys

    from docgraph.config import RaySettings
    from docgraph.errors import ConfigError
    from docgraph.scale import cluster as cluster_module

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now fails as if it were absent
    with pytest.raises(ConfigError, match=r"pip install 'docgraph\[ray\]'"):
        cluster_module.connect(RaySettings(enabled=True))
