"""Check that each package declares exactly what it imports (one pass per package).

Two checks, both per package and both from the package's own directory:

* **Siblings** (this script, from the source tree): the ``beamclaw-*`` names in
  ``[project].dependencies`` equal the ``beamclaw_*`` packages its ``src`` imports
  (any ``import``/``from`` statement, also inside functions or ``TYPE_CHECKING``), and
  ``[tool.uv.sources]`` names the same siblings. A missing sibling (an import the wheel
  would not satisfy) and an extra one (a dependency nobody needs, e.g. numpy under
  beamclaw-mcp) both fail: the package graph is a DAG of needs, not a ladder.
* **Third-party** (deptry): a module imported but not declared (even if a sibling brings
  it in transitively), or a dependency declared but never imported, fails.

Usage: python scripts/check_deps.py [package-dir ...]
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEPTRY = Path(sys.executable).parent / "deptry"
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def parse_python(path: Path) -> ast.Module:
    """``path``'s syntax tree. CPython 3.11 keeps the AST constructor's recursion depth
    per interpreter, so a parse racing another thread's (a traceback formatted in a
    test's server thread parses its source line) can fail with a spurious
    ``SystemError`` (python/cpython#106905): it is parsed again."""
    source = path.read_text(encoding="utf-8")
    for _attempt in range(4):
        try:
            return ast.parse(source, filename=str(path))
        except SystemError:
            continue
    return ast.parse(source, filename=str(path))


def imported_siblings(package_dir: Path) -> set[str]:
    """The ``beamclaw-*`` distributions the package's sources import, itself excluded."""
    own = package_dir.name
    found: set[str] = set()
    for path in sorted((package_dir / "src").rglob("*.py")):
        tree = parse_python(path)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                continue
            for module in modules:
                top = module.split(".")[0]
                if top.startswith("beamclaw_"):
                    found.add(top.replace("_", "-"))
    return found - {own}


def declared_siblings(package_dir: Path) -> tuple[set[str], set[str]]:
    """``([project].dependencies, [tool.uv.sources])`` sibling names of the package."""
    with (package_dir / "pyproject.toml").open("rb") as fh:
        data = tomllib.load(fh)
    names: set[str] = set()
    for requirement in data["project"].get("dependencies", []):
        match = _NAME.match(requirement)
        if match and match.group(1).startswith("beamclaw-"):
            names.add(match.group(1))
    sources = set(data.get("tool", {}).get("uv", {}).get("sources", {}))
    return names, {s for s in sources if s.startswith("beamclaw-")}


def sibling_problems(package_dir: Path) -> list[str]:
    """Why the package's sibling declarations differ from its imports (empty: they agree)."""
    imported = imported_siblings(package_dir)
    declared, sources = declared_siblings(package_dir)
    problems = [
        f"imports {name.replace('-', '_')} but does not declare {name}"
        for name in sorted(imported - declared)
    ]
    problems += [f"declares {name} but never imports it" for name in sorted(declared - imported)]
    if sources != declared:
        problems.append(
            f"[tool.uv.sources] names {sorted(sources)}, dependencies name {sorted(declared)}"
        )
    return problems


def check(package_dir: Path) -> bool:
    problems = sibling_problems(package_dir)
    result = subprocess.run(
        [str(DEPTRY), "src", "--no-ansi"],
        cwd=package_dir,
        capture_output=True,
        text=True,
        check=False,
    )
    ok = result.returncode == 0 and not problems
    status = "ok" if ok else "FAIL"
    print(f"[{status}] {package_dir.name}")
    for problem in problems:
        print(f"  siblings: {problem}")
    if result.returncode != 0:
        print(result.stdout + result.stderr)
    return ok


def main(argv: list[str]) -> int:
    dirs = [Path(a).resolve() for a in argv] or sorted((ROOT / "packages").glob("beamclaw-*"))
    results = [check(d) for d in dirs]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
