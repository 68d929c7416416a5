"""Sandbox skills: a script saved by ``exec``'s ``save_as`` and run again by name.

Layout (the agent's skill directory, so core's skill discovery lists it)::

    <workspace>/skills/<name>/SKILL.md      frontmatter: type sandbox_script, language, sha256
    <workspace>/skills/<name>/script.py|sh  the script itself

Invariants: files are written to a temporary name, fsynced and renamed (a crash leaves the
old skill or the new one, never half of one); a script whose content no longer matches
the hash in its SKILL.md is refused when run.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from beamclaw_sandbox.errors import BeamclawSandboxError
from beamclaw_sandbox.runner import Language

SKILL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
EXTENSIONS: dict[Language, str] = {"python": "py", "bash": "sh"}
_HASH_LINE = re.compile(r"^\s*sha256:\s*([0-9a-f]{64})\s*$", re.M)
_LANGUAGE_LINE = re.compile(r"^\s*language:\s*(python|bash)\s*$", re.M)


class SkillError(BeamclawSandboxError):
    """A sandbox skill cannot be saved or run; the message says why."""


def script_digest(script: str) -> str:
    return hashlib.sha256(script.encode()).hexdigest()


def skill_markdown(name: str, description: str, language: Language, script: str) -> str:
    """The SKILL.md of a sandbox script (pure)."""
    ext = EXTENSIONS[language]
    fence = "```"
    summary = " ".join(description.split()) or f"Sandbox {language} script {name}"
    return (
        "---\n"
        f"name: {name}\n"
        f"description: {_yaml_scalar(summary)}\n"
        "metadata:\n"
        "  type: sandbox_script\n"
        f"  language: {language}\n"
        f"  sha256: {script_digest(script)}\n"
        "---\n"
        f"# {name}\n\n"
        f"A saved sandbox script. Run it with the `exec` tool: "
        f'`{{"skill": "{name}"}}` (it runs in the sandbox, not on the host).\n\n'
        f"{fence}{language}\n{script.rstrip()}\n{fence}\n\n"
        f"The script is also in `script.{ext}` next to this file.\n"
    )


def _yaml_scalar(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def save_skill(
    workspace: Path, name: str, description: str, language: Language, script: str
) -> Path:
    """Write (or replace) the skill; the SKILL.md path."""
    if not SKILL_NAME.match(name):
        raise SkillError(f"skill name {name!r} may use letters, digits, '-', '_' and '.' only")
    directory = workspace / "skills" / name
    directory.mkdir(parents=True, exist_ok=True)
    for other in EXTENSIONS.values():
        stale = directory / f"script.{other}"
        if other != EXTENSIONS[language] and stale.exists():
            stale.unlink()
    _write_atomic(directory / f"script.{EXTENSIONS[language]}", script)
    skill_file = directory / "SKILL.md"
    _write_atomic(skill_file, skill_markdown(name, description, language, script))
    return skill_file


def load_skill(workspace: Path, name: str) -> tuple[Language, str]:
    """The language and script of a saved sandbox skill (hash-checked)."""
    if not SKILL_NAME.match(name):
        raise SkillError(f"skill name {name!r} is not valid")
    directory = workspace / "skills" / name
    skill_file = directory / "SKILL.md"
    if not skill_file.is_file():
        raise SkillError(f"no sandbox skill named {name!r}")
    text = skill_file.read_text(encoding="utf-8")
    language_match = _LANGUAGE_LINE.search(text)
    hash_match = _HASH_LINE.search(text)
    if "type: sandbox_script" not in text or language_match is None or hash_match is None:
        raise SkillError(f"skill {name!r} is not a sandbox script")
    language: Language = "python" if language_match.group(1) == "python" else "bash"
    script_file = directory / f"script.{EXTENSIONS[language]}"
    if not script_file.is_file():
        raise SkillError(f"skill {name!r} has no script.{EXTENSIONS[language]}")
    script = script_file.read_text(encoding="utf-8")
    if script_digest(script) != hash_match.group(1):
        raise SkillError(f"skill {name!r} was changed since it was saved (hash mismatch)")
    return language, script
