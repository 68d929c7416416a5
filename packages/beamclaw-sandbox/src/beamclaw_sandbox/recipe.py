"""What the sandbox image is made of, as data (no I/O).

Invariant: two builds from equal recipes make interchangeable images, and
:attr:`ImageRecipe.digest` changes whenever anything that shapes the image changes
(suite, packages, user, work directory, environment, layout version). The digest is the
image's :data:`RECIPE_LABEL`, so an image built from an older recipe counts as missing.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from beamclaw_sandbox.settings import SandboxSettings

RECIPE_LABEL = "org.beamclaw.sandbox.recipe"
"""Image label holding :attr:`ImageRecipe.digest`."""
LAYOUT_VERSION = 1
"""Bumped when the image layout (directories, changes below) changes."""
SANDBOX_UID = 65534
"""``nobody``: scripts never run as root."""
WORKDIR = "/work"
"""The writable work directory (a tmpfs per container)."""
BASE_PACKAGES = ("python3", "bash", "coreutils")
IMAGE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "HOME": WORKDIR,
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONUNBUFFERED": "1",
}
"""The image's own environment; containers add only the configured allowlist."""
TRIMMED_PATHS = (
    "var/cache/apt/archives",
    "var/lib/apt/lists",
    "usr/share/doc",
    "usr/share/man",
    "usr/share/info",
)
"""Paths of the debootstrap root emptied before import (not needed at run time)."""


@dataclass(frozen=True)
class ImageRecipe:
    """The sandbox image: name and contents."""

    image: str
    suite: str = "bookworm"
    mirror: str = "http://deb.debian.org/debian"
    packages: tuple[str, ...] = BASE_PACKAGES
    base_image: str = "debian:bookworm-slim"

    @classmethod
    def from_settings(cls, settings: SandboxSettings) -> ImageRecipe:
        packages = tuple(dict.fromkeys((*BASE_PACKAGES, *settings.extra_packages)))
        return cls(
            image=settings.image,
            suite=settings.debian_suite,
            mirror=settings.debian_mirror,
            packages=packages,
            base_image=settings.base_image,
        )

    @property
    def digest(self) -> str:
        """Content identity of the image (the mirror and the image name do not count)."""
        shape = {
            "layout": LAYOUT_VERSION,
            "suite": self.suite,
            "packages": sorted(self.packages),
            "uid": SANDBOX_UID,
            "workdir": WORKDIR,
            "env": IMAGE_ENV,
        }
        return hashlib.sha256(json.dumps(shape, sort_keys=True).encode()).hexdigest()[:16]

    @property
    def repository(self) -> str:
        return self.image.rpartition(":")[0] if ":" in self.image else self.image

    @property
    def tag(self) -> str:
        return self.image.rpartition(":")[2] if ":" in self.image else "latest"

    def labels(self) -> dict[str, str]:
        return {RECIPE_LABEL: self.digest}

    def import_changes(self) -> list[str]:
        """Dockerfile instructions ``docker import --change`` applies to the root fs."""
        env = [f"ENV {k}={v}" for k, v in IMAGE_ENV.items()]
        return [
            f"USER {SANDBOX_UID}:{SANDBOX_UID}",
            f"WORKDIR {WORKDIR}",
            *env,
            f"LABEL {RECIPE_LABEL}={self.digest}",
            'CMD ["sleep", "infinity"]',
        ]

    def debootstrap_command(self, target: str) -> list[str]:
        """The debootstrap invocation building the root file system in ``target``."""
        return [
            "debootstrap",
            "--variant=minbase",
            f"--include={','.join(self.packages)}",
            self.suite,
            target,
            self.mirror,
        ]

    def build_args(self) -> dict[str, str]:
        """``--build-arg`` values of the packaged Dockerfile."""
        return {
            "BASE_IMAGE": self.base_image,
            "PACKAGES": " ".join(self.packages),
            "SANDBOX_UID": str(SANDBOX_UID),
            "WORKDIR": WORKDIR,
        }
