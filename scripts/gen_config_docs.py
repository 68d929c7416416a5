"""Generate the key reference in docs/configuration.md from the configuration models.

Every key of every section, with its type, default and environment override, comes from
the pydantic models themselves (descriptions are the attribute docstrings), so the docs
cannot drift: ``tests/test_docs.py`` fails when the generated block is stale.
Usage: python scripts/gen_config_docs.py [--check]
"""

from __future__ import annotations

import ast
import inspect
import json
import sys
import textwrap
from functools import cache
from itertools import pairwise
from pathlib import Path
from types import UnionType
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from beamclaw_gateway import BeamclawConfig

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "configuration.md"
BEGIN = "<!-- BEGIN GENERATED KEYS -->"
END = "<!-- END GENERATED KEYS -->"


def _type_name(annotation: Any) -> str:
    origin = get_origin(annotation)
    if origin in (Union, UnionType):
        return " | ".join(_type_name(a) for a in get_args(annotation))
    if origin is not None:
        args = ", ".join(_type_name(a) for a in get_args(annotation))
        name = getattr(origin, "__name__", str(origin))
        return f"{name}[{args}]"
    if annotation is type(None):
        return "none"
    if isinstance(annotation, type):
        if annotation.__name__ == "Secret":
            return "secret"
        return annotation.__name__
    return str(annotation).replace("typing.", "")


def _submodel(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return None if annotation.__name__ == "Secret" else annotation
    return None


def _default(field: Any) -> str:
    if field.default is not PydanticUndefined:
        value = field.default
    elif field.default_factory is not None:
        value = field.default_factory()
    else:
        return "(required)"
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    elif isinstance(value, dict):
        value = {
            k: (v.model_dump(mode="json") if isinstance(v, BaseModel) else v)
            for k, v in value.items()
        }  # type: ignore[union-attr]
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


@cache
def _attribute_docs(model: type[BaseModel]) -> dict[str, str]:
    """The docstring under each attribute of ``model`` and its bases (nearest class wins)."""
    docs: dict[str, str] = {}
    for cls in reversed(model.__mro__):
        if not issubclass(cls, BaseModel) or cls is BaseModel:
            continue
        try:
            source = textwrap.dedent(inspect.getsource(cls))
        except (OSError, TypeError):
            continue
        body = next(n for n in ast.parse(source).body if isinstance(n, ast.ClassDef)).body
        for stmt, after in pairwise(body):
            if (
                isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                docs[stmt.target.id] = inspect.cleandoc(after.value.value)
    return docs


def rows(model: type[BaseModel], prefix: str = "") -> list[str]:
    out: list[str] = []
    for name, field in model.model_fields.items():
        key = f"{prefix}{name}"
        sub = _submodel(field.annotation)
        if sub is not None:
            out += rows(sub, f"{key}.")
            continue
        env = "BEAMCLAW_" + key.upper().replace(".", "__")
        desc = (
            (field.description or _attribute_docs(model).get(name, ""))
            .replace("\n", " ")
            .replace("|", "\\|")
        )
        type_name = _type_name(field.annotation).replace("|", "\\|")
        out.append(f"| `{key}` | {type_name} | `{_default(field)}` | `{env}` | {desc} |")
        origin, args = get_origin(field.annotation), get_args(field.annotation)
        if origin is dict and len(args) == 2 and _submodel(args[1]) is not None:
            out += rows(args[1], f"{key}.<name>.")
        elif origin is list and args and _submodel(args[0]) is not None:
            out += rows(args[0], f"{key}[].")
    return out


def generate() -> str:
    lines = [
        BEGIN,
        "",
        "| key | type | default | environment override | meaning |",
        "|---|---|---|---|---|",
    ]
    lines += rows(BeamclawConfig)
    lines += ["", END]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    text = DOC.read_text()
    start, end = text.index(BEGIN), text.index(END) + len(END)
    updated = text[:start] + generate() + text[end:]
    if "--check" in argv:
        if updated != text:
            print("docs/configuration.md is stale: run python scripts/gen_config_docs.py")
            return 1
        return 0
    DOC.write_text(updated)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
