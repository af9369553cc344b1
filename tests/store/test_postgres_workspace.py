"""A workspace on PostgreSQL (issue 14 item 1): the OpenStax excerpt (5 pages) ingested, built
and queried for kg4vd, hvm and dense against a ``pgserver`` PostgreSQL, with the same ranked
pages and the same rows as the SQLite workspace; an interrupted build resumes; removing the
document leaves no row behind; the server-side HNSW search; settings and connection errors."""

from __future__ import annotations

import shutil
import sqlite3

import numpy as np
import pytest

from docgraph import Workspace
from docgraph.config import load_settings
from docgraph.errors import ConfigError, StoreError
from docgraph.store import open_store
from docgraph.testing.postgres import new_pg_schema, postgres_settings

METHODS = ("kg4vd", "hvm", "dense")
QUERIES = (
    "What is the mission of OpenStax at Rice University?",
    "Chinggis Khan and the Mongol Empire",
    "Who wrote Arab Conquests and Early Islamic Historiography?",
    "section summaries and key terms for students",
)
OPENSTAX = "openstax_world_history_v1_excerpt.pdf"


def _ranked(ws: Workspace, method: str) -> list[list[tuple[str, int]]]:
    return [[(p.doc_id, p.page) for p in ws.retrieve(q, method=method).pages] for q in QUERIES]


class _Interrupt(Exception):
    pass


@pytest.fixture(scope="module")
def pair(tmp_path_factory, shared_data, postgres_url, _openstax_template):
    """(sqlite workspace, postgres workspace, kg4vd resume report), both built for METHODS."""
    base = tmp_path_factory.mktemp("pg-roundtrip")
    lite = Workspace(shutil.copytree(_openstax_template, base / "sqlite"))
    pg = Workspace(base / "pg", overrides=postgres_settings(postgres_url, new_pg_schema()))
    pg.add([shared_data / "documents" / OPENSTAX])  # ingested into PostgreSQL, files in base/pg

    # kg4vd on PostgreSQL: interrupted at its third record write (inside a build transaction), then resumed
    calls, original = [], pg.store.put_records

    def failing(namespace, items):
        calls.append(namespace)
        if len(calls) == 3:
            raise _Interrupt("the build process died here")
        return original(namespace, items)

    pg.store.put_records = failing
    with pytest.raises(_Interrupt):
        pg.build("kg4vd")
    del pg.store.put_records
    resumed = pg.build("kg4vd")
    for method in METHODS:
        lite.build(method)
        if method != "kg4vd":
            pg.build(method)
    yield lite, pg, resumed
    lite.close()
    pg.close()


def test_postgres_workspace_keeps_files_in_the_folder_and_rows_in_the_server(pair):
    lite, pg, _ = pair
    assert type(pg.store).__name__ == "PostgresStore"
    assert not (pg.root / "docgraph.sqlite").exists()
    [doc] = pg.documents()
    assert doc.id == lite.documents()[0].id and doc.status == "ready" and doc.page_count == 5
    for page in doc.pages:
        assert (pg.root / page.image_path).is_file()
        assert page == lite.store.get_page(doc.id, page.number)


@pytest.mark.parametrize("method", METHODS)
def test_same_ranked_pages_as_sqlite(pair, method):
    lite, pg, _ = pair
    expected = _ranked(lite, method)
    assert any(expected), "the SQLite workspace retrieves pages"
    assert _ranked(pg, method) == expected


def test_same_rows_as_sqlite_after_an_interrupted_build(pair):
    lite, pg, resumed = pair
    assert resumed.pages_skipped > 0  # work committed before the interruption was kept
    with sqlite3.connect(lite.root / "docgraph.sqlite") as db:
        lite_records = db.execute("SELECT namespace, key, doc_id FROM records").fetchall()
        lite_vectors = db.execute("SELECT namespace, key, doc_id, model FROM vectors").fetchall()
    pg_records = pg.store._query("SELECT namespace, key, doc_id FROM records")
    pg_vectors = pg.store._query("SELECT namespace, key, doc_id, model FROM vectors")
    assert sorted(pg_records) == sorted(lite_records)
    assert sorted(pg_vectors) == sorted(lite_vectors)
    for namespace in sorted({row[0] for row in lite_vectors}):
        lite_keys, lite_matrix = lite.store.load_vectors(namespace)
        pg_keys, pg_matrix = pg.store.load_vectors(namespace)
        assert pg_keys == lite_keys
        np.testing.assert_allclose(pg_matrix, lite_matrix, atol=1e-5)


def test_offline_answer_matches_sqlite(pair):
    lite, pg, _ = pair
    question = QUERIES[0]
    answer, expected = pg.ask(question, method="kg4vd"), lite.ask(question, method="kg4vd")
    assert answer.text == expected.text
    assert [(c.doc_id, c.page) for c in answer.citations] == [(c.doc_id, c.page) for c in expected.citations]


def test_hnsw_search_in_the_server(pair):
    _, pg, _ = pair
    namespace = max(pg.store.vector_models(), key=lambda ns: len(pg.store.load_vectors(ns)[0]))
    keys, matrix = pg.store.load_vectors(namespace)
    query = matrix[len(keys) // 2]
    exact = np.argsort(-(matrix @ query), kind="stable")[:5]
    found = pg.store.search_vectors(namespace, query, 5)
    assert found[0][0] == keys[len(keys) // 2] and found[0][1] == pytest.approx(1.0, abs=1e-4)
    assert len({k for k, _ in found} & {keys[i] for i in exact}) >= 4  # approximate, but close on a small set
    dim = matrix.shape[1]
    with pg.store.transaction():  # EXPLAIN with sequential scans off: the namespace's HNSW index serves the query
        pg.store._conn.execute("SET LOCAL enable_seqscan = off")
        plan = "\n".join(
            r[0]
            for r in pg.store._query(
                f"EXPLAIN SELECT key FROM vectors WHERE namespace = '{namespace}' AND dim = {dim} "
                f"ORDER BY (vec::vector({dim})) <#> '[{','.join(['0'] * dim)}]' LIMIT 5"
            )
        )
    assert "vectors_hnsw_" in plan


def test_removing_the_document_leaves_no_row(pair):
    _, pg, _ = pair
    doc = pg.documents()[0]
    pg.remove(doc.id)
    assert pg.documents() == []
    for table in ("pages", "records", "vectors"):
        assert pg.store._query(f"SELECT COUNT(*) FROM {table} WHERE doc_id = %s", [doc.id]) == [(0,)]
    assert pg.store._query("SELECT COUNT(*) FROM pages") == [(0,)]
    assert not (pg.root / "pages" / doc.id).exists()


def test_schemas_are_separate_workspaces(postgres_url, tmp_path):
    one = open_store(
        tmp_path / "a",
        load_settings(None, environ={}, overrides=postgres_settings(postgres_url, new_pg_schema())).store,
    )
    two = open_store(
        tmp_path / "b",
        load_settings(None, environ={}, overrides=postgres_settings(postgres_url, new_pg_schema())).store,
    )
    one.put_record("ns", "k", 1)
    assert two.get_record("ns", "k") is None and one.get_record("ns", "k") == 1
    one.close()
    two.close()


def test_settings_and_connection_errors(postgres_url, tmp_path):
    with pytest.raises(ConfigError, match="store.url"):
        open_store(tmp_path, load_settings(None, environ={"DOCGRAPH_STORE__BACKEND": "postgres"}).store)
    with pytest.raises(ConfigError, match="pg_schema"):
        load_settings(None, environ={}, overrides={"store": {"pg_schema": "drop table; --"}})
    bad = "postgresql://docgraph:secret@127.0.0.1:1/none?connect_timeout=2"
    with pytest.raises(StoreError, match="cannot connect") as caught:
        open_store(tmp_path, load_settings(None, environ={}, overrides=postgres_settings(bad, "x")).store)
    assert "secret" not in str(caught.value)
    schema = new_pg_schema()
    store = open_store(
        tmp_path, load_settings(None, environ={}, overrides=postgres_settings(postgres_url, schema)).store
    )
    store.set_meta("schema_version", "999")
    store.close()
    with pytest.raises(StoreError, match="schema 999"):
        open_store(tmp_path, load_settings(None, environ={}, overrides=postgres_settings(postgres_url, schema)).store)


def test_a_dropped_connection_is_replaced(postgres_url, tmp_path):
    import psycopg

    store = open_store(
        tmp_path, load_settings(None, environ={}, overrides=postgres_settings(postgres_url, new_pg_schema())).store
    )
    store.put_record("ns", "k", 1)
    pid = store._conn.info.backend_pid
    with psycopg.connect(postgres_url, autocommit=True) as admin:  # a server restart, an idle timeout
        admin.execute("SELECT pg_terminate_backend(%s)", [pid])
    with pytest.raises(psycopg.OperationalError):
        store.get_record("ns", "k")  # the call in flight fails ...
    assert store.get_record("ns", "k") == 1  # ... the next one reconnects
    store.put_record("ns", "k2", 2)
    assert store._conn.info.backend_pid != pid and store.count_records("ns") == 2
    store.close()
