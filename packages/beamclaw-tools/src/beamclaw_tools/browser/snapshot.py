"""Accessibility snapshots as a tree: parse Playwright's ``ai`` aria snapshot, trim, render.

Pure functions only (no browser, no I/O). The input is the YAML-like text
``page.aria_snapshot(mode="ai")`` returns (``- role "name" [attr] [ref=e5]: text``,
children indented by two spaces, ``/url``-style property lines).

Invariants of :func:`trim`:

* every interactive element (:attr:`AriaNode.interactive`) kept in the tree keeps its ref;
  other elements lose theirs (the ``ai`` snapshot puts a ref on everything); elements are
  dropped only as separators, unnamed images, URL/property metadata, empty leaves (no
  name, text, ref or children), or as the tail of a run of repeated siblings (counted
  in a ``… N more`` line);
* wrapper roles without a name are unwrapped (their children take their place); an
  element without name, ref or text that has exactly one child is replaced by that child;
* the tree is never reordered.

:func:`render` caps the text at ``max_chars`` on a line boundary and says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

WRAPPER_ROLES = frozenset({"generic", "group", "none", "presentation", "paragraph", "Section"})
"""Roles that only structure the page; unnamed ones are unwrapped."""
DROPPED_ROLES = frozenset({"separator", "img"})
"""Roles dropped when unnamed (an image without alt text tells the model nothing)."""
NOISE_ATTRS = frozenset({"cursor=pointer", "active"})
"""Attributes that describe the pointer or focus, not the element."""
KEPT_PROPS = frozenset({"/placeholder"})
"""Property lines kept by :func:`trim` (``/url`` and the like are metadata)."""
INTERACTIVE_ROLES = frozenset(
    {
        "button",
        "checkbox",
        "combobox",
        "link",
        "listbox",
        "menuitem",
        "menuitemcheckbox",
        "menuitemradio",
        "option",
        "radio",
        "searchbox",
        "slider",
        "spinbutton",
        "switch",
        "tab",
        "textbox",
        "treeitem",
    }
)
"""Roles the model acts on; their refs are always kept (``cursor=pointer`` counts too)."""
REPEAT_KEEP = 8
"""Siblings of one role shown before the rest of the run is summarised."""
TEXT_KEEP = 240
"""Characters of one text value kept by :func:`trim`."""

_HEADER = re.compile(r'^(?P<role>[^\s"\[:]+)(?:\s+"(?P<name>(?:[^"\\]|\\.)*)")?(?P<rest>.*)$')
_ATTR = re.compile(r"\[([^\]]*)\]")


@dataclass(frozen=True)
class AriaNode:
    """One element (or text run) of an aria snapshot."""

    role: str
    name: str = ""
    attrs: tuple[str, ...] = ()
    ref: str | None = None
    text: str = ""
    props: tuple[tuple[str, str], ...] = ()
    children: tuple[AriaNode, ...] = field(default=())

    @property
    def interactive(self) -> bool:
        """True when the model can act on it (a ref on an actionable role or a pointer)."""
        return self.ref is not None and (
            self.role in INTERACTIVE_ROLES or "cursor=pointer" in self.attrs
        )


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    return value


def _split_value(body: str) -> tuple[str, str | None]:
    """``header: value`` → (header, value); a quoted name may itself contain ``: ``."""
    in_quote = False
    escaped = False
    for i, ch in enumerate(body):
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == '"':
            in_quote = not in_quote
        elif ch == ":" and not in_quote and (i + 1 == len(body) or body[i + 1] == " "):
            return body[:i], body[i + 1 :].strip()
    return body, None


def _parse_line(body: str) -> tuple[AriaNode | None, tuple[str, str] | None]:
    """A node, or a ``(/prop, value)`` pair, from the text after ``- ``."""
    if body.startswith("'") and body.endswith("'") and ": " not in body:
        body = _unquote(body)
    if body.startswith("/"):
        key, value = _split_value(body)
        return None, (key, _unquote(value or ""))
    header, value = _split_value(body)
    header = _unquote(header) if header.startswith("'") else header
    match = _HEADER.match(header.strip())
    if match is None:
        return AriaNode(role="text", text=_unquote(body)), None
    attrs = tuple(_ATTR.findall(match.group("rest")))
    ref = next((a[4:] for a in attrs if a.startswith("ref=")), None)
    role = match.group("role")
    name = (match.group("name") or "").replace('\\"', '"')
    text = _unquote(value) if value else ""
    if role == "text" and not name:
        return AriaNode(role="text", text=text), None
    kept = tuple(a for a in attrs if not a.startswith("ref="))
    return AriaNode(role=role, name=name, attrs=kept, ref=ref, text=text), None


@dataclass
class _Building:
    node: AriaNode
    children: list[_Building] = field(default_factory=list["_Building"])
    props: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])

    def freeze(self) -> AriaNode:
        return replace(
            self.node,
            props=tuple(self.props),
            children=tuple(c.freeze() for c in self.children),
        )


def parse_snapshot(text: str) -> AriaNode:
    """The tree of an ``ai`` aria snapshot, under a synthetic ``document`` root."""
    root = _Building(AriaNode(role="document"))
    stack: list[tuple[int, _Building]] = [(-1, root)]
    for raw in text.splitlines():
        stripped = raw.lstrip(" ")
        if not stripped.startswith("- "):
            continue
        indent = len(raw) - len(stripped)
        while stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1]
        node, prop = _parse_line(stripped[2:].rstrip())
        if prop is not None:
            parent.props.append(prop)
        elif node is not None:
            building = _Building(node)
            parent.children.append(building)
            stack.append((indent, building))
    return root.freeze()


def refs_of(node: AriaNode) -> set[str]:
    """Every ref in the tree."""
    found = {node.ref} if node.ref else set[str]()
    for child in node.children:
        found |= refs_of(child)
    return found


def _short(text: str) -> str:
    return text if len(text) <= TEXT_KEEP else text[: TEXT_KEEP - 1] + "…"


def _trim_node(node: AriaNode) -> list[AriaNode]:
    """The nodes that replace ``node`` in its parent's children."""
    children = _trim_children(node.children)
    attrs = tuple(a for a in node.attrs if a not in NOISE_ATTRS)
    props = tuple(p for p in node.props if p[0] in KEPT_PROPS)
    ref = node.ref if node.interactive else None
    kept = replace(
        node, attrs=attrs, props=props, ref=ref, text=_short(node.text), children=children
    )
    if node.role in DROPPED_ROLES and not node.name:
        return list(children)
    if node.role in WRAPPER_ROLES and not node.name and not node.interactive:
        out = list(children)
        if node.text:
            out.insert(0, AriaNode(role="text", text=kept.text))
        return out
    if node.role == "text":
        return [kept] if kept.text else []
    if not (node.name or node.text or kept.ref or props or children):
        return []  # nothing to read and nothing to act on (an invisible image link)
    if not (node.name or node.text or node.interactive or props) and len(children) == 1:
        return list(children)
    return [kept]


def _trim_children(children: tuple[AriaNode, ...]) -> tuple[AriaNode, ...]:
    flat: list[AriaNode] = []
    for child in children:
        flat.extend(_trim_node(child))
    out: list[AriaNode] = []
    seen: dict[str, int] = {}
    hidden: dict[str, int] = {}
    for child in flat:
        if child.role == "text":
            out.append(child)
            continue
        seen[child.role] = seen.get(child.role, 0) + 1
        if seen[child.role] <= REPEAT_KEEP:
            out.append(child)
        else:
            hidden[child.role] = hidden.get(child.role, 0) + 1
    for role, count in hidden.items():
        out.append(AriaNode(role="text", text=f"… {count} more {role} (full=true shows all)"))
    return tuple(out)


def trim(root: AriaNode) -> AriaNode:
    """The tree with wrappers, separators, metadata and repetition removed (see module)."""
    return replace(root, children=_trim_children(root.children))


def _line(node: AriaNode) -> str:
    if node.role == "text":
        return f"- text: {node.text}"
    head = node.role
    if node.name:
        head += f' "{node.name}"'
    for attr in node.attrs:
        head += f" [{attr}]"
    if node.ref:
        head += f" [ref={node.ref}]"
    if node.text:
        head += f": {node.text}"
    return f"- {head}"


def _lines(node: AriaNode, depth: int, out: list[str]) -> None:
    pad = "  " * depth
    for key, value in node.props:
        out.append(f"{pad}- {key}: {value}")
    for child in node.children:
        out.append(pad + _line(child))
        _lines(child, depth + 1, out)


def render(root: AriaNode, max_chars: int | None = None) -> str:
    """The tree as indented lines; cut at ``max_chars`` on a line boundary with a note."""
    lines: list[str] = []
    _lines(root, 0, lines)
    text = "\n".join(lines)
    if max_chars is None or len(text) <= max_chars:
        return text
    kept: list[str] = []
    size = 0
    for line in lines:
        if size + len(line) + 1 > max_chars:
            break
        kept.append(line)
        size += len(line) + 1
    return "\n".join(kept) + (
        f"\n[... snapshot cut at {size} of {len(text)} characters; "
        "call browser_snapshot with full=true for everything ...]"
    )


def trimmed_snapshot(text: str, max_chars: int) -> str:
    """Parse, trim and render an ``ai`` aria snapshot under ``max_chars``."""
    return render(trim(parse_snapshot(text)), max_chars)


__all__ = [
    "AriaNode",
    "parse_snapshot",
    "refs_of",
    "render",
    "trim",
    "trimmed_snapshot",
]
