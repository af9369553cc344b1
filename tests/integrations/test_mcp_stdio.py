"""``docgraph mcp`` on stdio, driven by the MCP SDK's client: tools, results, images, errors,
and the write tools only with ``--allow-write``."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import anyio
import jsonschema
from mcp_helpers import stdio_client
from PIL import Image

SCHEMAS = Path(__file__).resolve().parents[2] / "docs" / "schemas"
READ_TOOLS = {"search", "ask", "list_documents", "get_page", "get_region"}


def schema(name: str) -> dict:
    return json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))


def test_read_only_tools_over_stdio(example_ws):
    async def session():
        async with stdio_client(example_ws) as client:
            listed = await client.list_tools()
            names = {tool.name for tool in listed.tools}
            assert names == READ_TOOLS, "no write tools without --allow-write"
            assert all(tool.annotations.read_only_hint for tool in listed.tools)
            assert all(tool.output_schema for tool in listed.tools)

            docs = (await client.call_tool("list_documents", {})).structured_content
            assert {"hybrid", "kg4vd"} <= set(docs["methods_built"]) and "hvm" not in docs["methods_built"]
            (doc,) = docs["documents"]
            assert doc["pages"] == 5 and doc["file"] == "world_history_excerpt.pdf"

            found = await client.call_tool("search", {"query": "Creative Commons license", "top_pages": 2})
            assert not found.is_error
            jsonschema.validate(found.structured_content, schema("search"))
            top = found.structured_content["pages"][0]
            assert top["page"] == 2 and "Creative Commons" in top["regions"][0]["text"]

            answered = await client.call_tool(
                "ask", {"question": "Under what license is this textbook published?", "method": "hybrid"}
            )
            jsonschema.validate(answered.structured_content, schema("ask"))
            assert answered.structured_content["model_used"] is False
            assert answered.structured_content["citations"][0]["page"] == 2

            page = await client.call_tool("get_page", {"document": doc["document_id"], "page": 2})
            view = page.structured_content
            kinds = [type(block).__name__ for block in page.content]
            assert kinds == ["TextContent", "ImageContent"]
            with Image.open(io.BytesIO(base64.b64decode(page.content[1].data))) as image:
                assert image.width > 100 and image.height > 100
            assert any(r["component_id"] == top["regions"][0]["component_id"] for r in view["regions"])

            region = await client.call_tool(
                "get_region",
                {"document": doc["document_id"], "page": 2, "component": top["regions"][0]["component_id"]},
            )
            assert region.structured_content["region"]["text"].startswith(top["regions"][0]["text"][:50])

            marks = await client.read_resource(view["marks_uri"])
            assert marks.contents[0].mime_type == "image/png" and len(base64.b64decode(marks.contents[0].blob)) > 1000
            image = await client.read_resource(view["image_uri"])
            assert len(base64.b64decode(image.contents[0].blob)) > 1000

    anyio.run(session)


def test_errors_carry_the_cli_messages(example_ws):
    async def session():
        async with stdio_client(example_ws) as client:
            unbuilt = await client.call_tool("ask", {"question": "Who wrote it?", "method": "hvm"})
            assert unbuilt.is_error
            assert (
                "the hvm index of this workspace is not built yet; run: docgraph build --method hvm"
                in unbuilt.content[0].text
            )
            unknown = await client.call_tool("get_page", {"document": "nosuch.pdf", "page": 1})
            assert unknown.is_error and "no document 'nosuch.pdf'" in unknown.content[0].text
            beyond = await client.call_tool("get_page", {"document": "world_history_excerpt.pdf", "page": 99})
            assert beyond.is_error and "has no page 99 (it has 5)" in beyond.content[0].text
            method = await client.call_tool("search", {"query": "x", "method": "nosuch"})
            assert method.is_error and "unknown method 'nosuch'" in method.content[0].text
            writing = await client.call_tool("build", {"method": "hvm"})
            assert writing.is_error, "write tools are absent without --allow-write"

    anyio.run(session)


def test_write_tools_report_progress(example_ws, shared_data):
    extra = shared_data / "documents" / "acciona_sustainability_report_2020_p1.pdf"
    seen: list[tuple[float, float | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total))

    async def session():
        async with stdio_client(example_ws, "--allow-write") as client:
            assert {t.name for t in (await client.list_tools()).tools} == READ_TOOLS | {"add_documents", "build"}
            added = await client.call_tool("add_documents", {"paths": [str(extra)]}, progress_callback=progress)
            assert not added.is_error and added.structured_content["pages"] == 1
            built = await client.call_tool("build", {"method": "hybrid"}, progress_callback=progress)
            assert not built.is_error and built.structured_content["method"] == "hybrid"
            missing = await client.call_tool("add_documents", {"paths": ["/nowhere/x.pdf"]})
            assert missing.is_error and "no such file or folder: /nowhere/x.pdf" in missing.content[0].text
            docs = (await client.call_tool("list_documents", {})).structured_content["documents"]
            assert len(docs) == 2

    anyio.run(session)
    assert seen and any(total for _, total in seen), "progress notifications arrived with totals"
