"""Parsing SKILL.md: YAML frontmatter between ``---`` lines, then a markdown body.

Accepted frontmatter keys: ``name`` (required; letters, digits, ``-``, ``_``, ``.``),
``description`` (required), ``homepage``, ``metadata``. ``metadata`` may be a mapping
or a JSON/YAML string (the original wrote JSON on one line), either direct or nested
under ``beamclaw``/``openclaw``/``clawdbot`` (compatibility with skills written for
those systems). ``always``, ``emoji``, ``requires`` and ``install`` are also accepted at
the top level of the frontmatter. Anything malformed raises :class:`SkillParseError`
with the reason; discovery turns that into a skipped skill.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, cast

from pydantic import ValidationError

from beamclaw_core.skills.errors import SkillParseError
from beamclaw_core.skills.model import Skill, SkillMetadata, SkillSource

SKILL_FILE = "SKILL.md"
MAX_SKILL_BYTES = 256 * 1024
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_NAMESPACES = ("beamclaw", "openclaw", "clawdbot")
_TOP_LEVEL_META = ("emoji", "always", "requires", "install", "primaryEnv", "primary_env")


def split_frontmatter(text: str) -> tuple[str, str]:
    """``(frontmatter, body)``; raise when the file does not start with ``---``."""
    text = text.lstrip("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise ValueError("missing frontmatter: the file must start with a '---' line")
    for index in range(1, len(lines)):
        if lines[index].strip() in ("---", "..."):
            return "".join(lines[1:index]), "".join(lines[index + 1 :])
    raise ValueError("unterminated frontmatter: no closing '---' line")


def _metadata_mapping(front: dict[str, Any]) -> dict[str, Any]:
    import yaml

    raw: Any = front.get("metadata", {})
    if isinstance(raw, str):
        try:
            raw = yaml.safe_load(raw) if raw.strip() else {}
        except yaml.YAMLError as e:
            raise ValueError(f"metadata is not valid JSON/YAML: {e}") from e
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ValueError("metadata must be a mapping")
    meta = cast(dict[str, Any], raw)
    for namespace in _NAMESPACES:
        nested = meta.get(namespace)
        if isinstance(nested, dict):
            meta = {**meta, **cast(dict[str, Any], nested)}
    for key in _TOP_LEVEL_META:
        if key in front and key not in meta:
            meta[key] = front[key]
    return meta


def parse_skill(
    text: str, path: Path | None = None, source: SkillSource = SkillSource.BUNDLED
) -> Skill:
    """Parse SKILL.md text. Raises :class:`SkillParseError` naming the problem."""
    import yaml  # at the first skill, not at import: ~0.8 MB a gateway without skills saves

    try:
        front_text, body = split_frontmatter(text)
        loaded: Any = yaml.safe_load(front_text) if front_text.strip() else {}
        if not isinstance(loaded, dict):
            raise ValueError("frontmatter must be a YAML mapping of keys to values")
        front = cast(dict[str, Any], loaded)
        name = front.get("name")
        description = front.get("description")
        if not isinstance(name, str) or not name.strip():
            raise ValueError("frontmatter needs a 'name'")
        if not _NAME.match(name.strip()):
            raise ValueError(f"name {name!r} may use letters, digits, '-', '_' and '.' only")
        if not isinstance(description, str) or not description.strip():
            raise ValueError("frontmatter needs a 'description'")
        homepage = front.get("homepage")
        if homepage is not None and not isinstance(homepage, str):
            raise ValueError("homepage must be a string")
        metadata = SkillMetadata.model_validate(_metadata_mapping(front))
    except yaml.YAMLError as e:
        raise SkillParseError(path, f"malformed YAML frontmatter: {e}") from e
    except ValidationError as e:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'metadata'}: {err['msg']}"
            for err in e.errors(include_url=False)
        )
        raise SkillParseError(path, f"invalid metadata: {problems}") from e
    except ValueError as e:
        raise SkillParseError(path, str(e)) from e
    return Skill(
        name=name.strip(),
        description=" ".join(description.split()),
        body=body.strip("\n") + "\n",
        homepage=homepage,
        metadata=metadata,
        path=path,
        source=source,
    )


def parse_skill_file(path: Path, source: SkillSource = SkillSource.BUNDLED) -> Skill:
    """Read and parse one SKILL.md (size-capped, UTF-8)."""
    try:
        size = path.stat().st_size
        if size > MAX_SKILL_BYTES:
            raise SkillParseError(path, f"file is {size} bytes; the limit is {MAX_SKILL_BYTES}")
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise SkillParseError(path, "not UTF-8 text") from e
    except OSError as e:
        raise SkillParseError(path, f"cannot read: {e.strerror or e}") from e
    return parse_skill(text, path, source)
