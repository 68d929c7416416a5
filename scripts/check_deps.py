"""Check that each package imports only what it declares (deptry, one run per package).

A package that imports a module it does not list in its own pyproject (even if a sibling
brings it in transitively), or lists a dependency it never imports, fails the check.
Usage: python scripts/check_deps.py [package-dir ...]
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEPTRY = Path(sys.executable).parent / "deptry"


def check(package_dir: Path) -> bool:
    result = subprocess.run(
        [str(DEPTRY), "src", "--no-ansi"],
        cwd=package_dir,
        capture_output=True,
        text=True,
        check=False,
    )
    ok = result.returncode == 0
    status = "ok" if ok else "FAIL"
    print(f"[{status}] {package_dir.name}")
    if not ok:
        print(result.stdout + result.stderr)
    return ok


def main(argv: list[str]) -> int:
    dirs = [Path(a).resolve() for a in argv] or sorted((ROOT / "packages").glob("beamclaw-*"))
    results = [check(d) for d in dirs]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
