"""Notion blocks and properties as compact Markdown (pure functions).

Shapes: the block objects of ``blocks.children.list`` and the property values of pages
(``databases.query`` results) in the Notion API 2022-06-28. Unknown block types become a
one-line placeholder naming the type, never an error; a block with children says so
(its id reads them).
"""

from __future__ import annotations

from typing import Any

from beamclaw_tools.integrations.base import as_dict, as_list


def plain_text(rich_text: Any) -> str:
    """The concatenated ``plain_text`` of a rich text array (annotations as Markdown)."""
    out: list[str] = []
    for item in as_list(rich_text):
        text = str(item.get("plain_text", ""))
        annotations = as_dict(item.get("annotations"))
        if text.strip():
            if annotations.get("code"):
                text = f"`{text}`"
            if annotations.get("bold"):
                text = f"**{text}**"
            if annotations.get("italic"):
                text = f"*{text}*"
            if annotations.get("strikethrough"):
                text = f"~~{text}~~"
            href = item.get("href")
            if isinstance(href, str) and href:
                text = f"[{text}]({href})"
        out.append(text)
    return "".join(out)


_PREFIX = {
    "paragraph": "",
    "heading_1": "# ",
    "heading_2": "## ",
    "heading_3": "### ",
    "bulleted_list_item": "- ",
    "quote": "> ",
    "toggle": "- ",
}


def block_markdown(block: dict[str, Any], number: int = 1) -> str:
    """One block as Markdown (``number`` is its position in a numbered list)."""
    kind = str(block.get("type", ""))
    body = as_dict(block.get(kind))
    text = plain_text(body.get("rich_text"))
    if kind in _PREFIX:
        line = _PREFIX[kind] + text
    elif kind == "numbered_list_item":
        line = f"{number}. {text}"
    elif kind == "to_do":
        line = f"- [{'x' if body.get('checked') else ' '}] {text}"
    elif kind == "code":
        line = f"```{body.get('language', '')}\n{text}\n```"
    elif kind == "callout":
        icon = as_dict(body.get("icon")).get("emoji") or "💡"
        line = f"> {icon} {text}"
    elif kind == "divider":
        line = "---"
    elif kind == "child_page":
        line = f"📄 {body.get('title', '')} (page id={block.get('id')})"
    elif kind == "child_database":
        line = f"🗃 {body.get('title', '')} (database id={block.get('id')})"
    elif kind in ("bookmark", "embed", "link_preview"):
        line = f"<{body.get('url', '')}>"
    elif kind in ("image", "file", "pdf", "video"):
        source = as_dict(body.get("external")) or as_dict(body.get("file"))
        caption = plain_text(body.get("caption"))
        line = f"[{kind}: {caption or source.get('url', '')}]"
    elif kind == "equation":
        line = f"$$ {body.get('expression', '')} $$"
    elif kind == "table_row":
        cells = [plain_text(cell) for cell in body.get("cells") or []]
        line = "| " + " | ".join(cells) + " |"
    else:
        line = f"[{kind or 'unknown'} block]"
    if block.get("has_children") and kind not in ("child_page", "child_database"):
        line += f" (nested blocks: block id={block.get('id')})"
    return line


def blocks_markdown(blocks: list[dict[str, Any]]) -> str:
    """Consecutive blocks as Markdown; numbered lists count, list items stay together."""
    lines: list[str] = []
    number = 0
    previous = ""
    for block in blocks:
        kind = str(block.get("type", ""))
        number = number + 1 if kind == "numbered_list_item" else 0
        listy = kind in ("bulleted_list_item", "numbered_list_item", "to_do", "table_row")
        if lines and not (listy and previous == kind):
            lines.append("")
        lines.append(block_markdown(block, number))
        previous = kind
    return "\n".join(lines)


def property_text(value: dict[str, Any]) -> str:
    """A page property value as short text."""
    kind = str(value.get("type", ""))
    body = value.get(kind)
    if kind in ("title", "rich_text"):
        return plain_text(body)
    if kind in ("select", "status"):
        return str(as_dict(body).get("name", ""))
    if kind == "multi_select":
        return ", ".join(str(o.get("name", "")) for o in as_list(body))
    if kind == "date":
        date = as_dict(body)
        end = date.get("end")
        return f"{date.get('start', '')}" + (f" → {end}" if end else "")
    if kind == "people":
        return ", ".join(str(p.get("name") or p.get("id")) for p in as_list(body))
    if kind == "checkbox":
        return "yes" if body else "no"
    if kind == "relation":
        return ", ".join(str(r.get("id")) for r in as_list(body))
    if kind in ("formula", "rollup"):
        inner = as_dict(body)
        inner_kind = str(inner.get("type", ""))
        return str(inner.get(inner_kind, ""))
    if body is None:
        return ""
    return str(body)


def page_title(page: dict[str, Any]) -> str:
    """A page's title property (or a database's title)."""
    if page.get("object") == "database":
        return plain_text(page.get("title")) or "(untitled database)"
    for value in as_dict(page.get("properties")).values():
        prop = as_dict(value)
        if prop.get("type") == "title":
            return plain_text(prop.get("title")) or "(untitled)"
    return "(untitled)"
