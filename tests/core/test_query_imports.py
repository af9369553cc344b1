"""A question over a workspace loads no PDF library: ``docgraph.documents`` imports its entry
points on first use, so the query path's labels, printed numbers and parts come without
PyMuPDF (half a second of every ``docgraph search`` / ``ask`` process)."""

from __future__ import annotations

import subprocess
import sys


def test_the_query_path_imports_no_pdf_library():
    code = (
        "import sys, docgraph.cli, docgraph.methods.kg4vd.query, docgraph.methods.hvm.retrieve;"
        "print(sorted(m for m in ('pymupdf', 'fitz', 'pymupdf4llm') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_every_entry_point_of_the_documents_package_is_there_on_first_use():
    import docgraph.documents as documents
    from docgraph.documents import ingestion, marks, parser, render

    homes = {"ingestion": ingestion, "marks": marks, "parser": parser, "render": render}
    for name in documents.__all__:
        home = homes[documents._HOMES[name].lstrip(".")]
        assert getattr(documents, name) is getattr(home, name), name
    assert set(documents.__all__) == set(documents._HOMES)
    # a submodule of the same family is still a module, and "ingest" stays the function
    from docgraph.documents import ingest, pages

    assert callable(ingest) and ingest is ingestion.ingest and pages.__name__ == "docgraph.documents.pages"
