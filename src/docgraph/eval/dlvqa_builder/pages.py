"""What the model is shown of a page: its image (the rendered page, or its Set-of-Marks
image when facts must name components) and a manifest of its components."""

from __future__ import annotations

from pathlib import Path

from ...models.base import ChatModel
from ...types import Page

MAX_COMPONENT_CHARS = 1500


def sees_images(chat: ChatModel) -> bool:
    """Whether the model is sent page images (a text-only endpoint gets the manifest only)."""
    return bool(getattr(chat, "supports_vision", True))


def page_image(root: Path, page: Page) -> Path:
    """The rendered page image (absolute)."""
    return Path(root) / page.image_path


def visual_components(page: Page) -> list[str]:
    """Ids of the components that show rather than say: images/figures, tables, equations."""
    return [c.id for c in page.components if c.kind.is_visual]


def component_manifest(page: Page) -> str:
    """The page's components in reading order: ``[id] (kind) text``, tables as Markdown."""
    lines = []
    for comp in sorted(page.components, key=lambda c: c.order):
        content = comp.markdown.strip() if comp.markdown else " ".join(comp.text.split())
        if len(content) > MAX_COMPONENT_CHARS:
            content = content[:MAX_COMPONENT_CHARS] + " …"
        kind = comp.kind.name.lower() + (", page furniture" if comp.furniture else "")
        body = f"\n{content}" if comp.markdown else f" {content}" if content else " (no text; see the image)"
        lines.append(f"[{comp.id}] ({kind}){body}")
    return "\n".join(lines) or "(the page has no components)"
