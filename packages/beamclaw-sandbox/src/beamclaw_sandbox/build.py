"""Building the sandbox image: offline from Debian packages, or from the packaged Dockerfile.

* ``debootstrap``: a minimal Debian root (``--variant=minbase`` plus the recipe's
  packages) in a scratch directory, trimmed, streamed by ``tar`` into ``docker import``
  with the recipe's ``--change`` instructions (user, work directory, environment, label).
  Needs root and ``debootstrap``, and a Debian mirror (no container registry).
* ``dockerfile``: the packaged ``image/Dockerfile`` over ``base_image``, which must be
  present locally (nothing is pulled).

Invariants: a build is skipped when an image of that name carries the recipe's digest
(:func:`image_state`); the scratch root is removed whatever happens; a cancelled build
kills debootstrap's whole process group.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from beamclaw_sandbox.errors import ImageBuildError
from beamclaw_sandbox.recipe import RECIPE_LABEL, TRIMMED_PATHS, WORKDIR, ImageRecipe
from beamclaw_sandbox.settings import BuildMethod

if TYPE_CHECKING:
    import docker

Progress = Callable[[str], None]
ImageState = Literal["present", "stale", "missing"]


@dataclass(frozen=True)
class BuildReport:
    """The outcome of :func:`ensure_image`."""

    image: str
    built: bool
    """False when the image was already there (cached)."""
    method: str
    seconds: float


def image_state(client: docker.DockerClient, recipe: ImageRecipe) -> ImageState:
    """``present`` (same recipe), ``stale`` (another recipe) or ``missing`` (blocking)."""
    import docker.errors

    try:
        image = client.images.get(recipe.image)
    except docker.errors.ImageNotFound:
        return "missing"
    labels = image.labels or {}
    return "present" if labels.get(RECIPE_LABEL) == recipe.digest else "stale"


def _image_exists(client: docker.DockerClient, name: str) -> bool:
    import docker.errors

    try:
        client.images.get(name)
    except docker.errors.ImageNotFound:
        return False
    return True


def choose_method(client: docker.DockerClient, recipe: ImageRecipe, method: BuildMethod) -> str:
    """``auto`` → ``dockerfile`` when the base image is present locally, else debootstrap."""
    if method != "auto":
        return method
    return "dockerfile" if _image_exists(client, recipe.base_image) else "debootstrap"


async def ensure_image(
    client: docker.DockerClient,
    recipe: ImageRecipe,
    *,
    method: BuildMethod = "auto",
    progress: Progress = lambda _line: None,
    force: bool = False,
) -> BuildReport:
    """Build the image unless one from the same recipe exists (or ``force``).

    Raises:
        ImageBuildError: a step failed (``step`` names it; ``detail`` says why).
    """
    started = time.monotonic()
    state = await asyncio.to_thread(image_state, client, recipe)
    if state == "present" and not force:
        progress(f"image {recipe.image} is up to date (recipe {recipe.digest})")
        return BuildReport(recipe.image, False, "cached", time.monotonic() - started)
    if state == "stale":
        progress(f"image {recipe.image} was built from another recipe: rebuilding")
    chosen = await asyncio.to_thread(choose_method, client, recipe, method)
    progress(f"building {recipe.image} (recipe {recipe.digest}) with {chosen}")
    if chosen == "dockerfile":
        await asyncio.to_thread(_build_dockerfile, client, recipe, progress)
    else:
        await _build_debootstrap(client, recipe, progress)
    if await asyncio.to_thread(image_state, client, recipe) != "present":
        raise ImageBuildError("verify", f"{recipe.image} lacks the label {RECIPE_LABEL}")
    seconds = time.monotonic() - started
    progress(f"image {recipe.image} ready in {seconds:.1f} s")
    return BuildReport(recipe.image, True, chosen, seconds)


# ---------------------------------------------------------------- debootstrap path


def debootstrap_problem() -> str | None:
    """Why the debootstrap path cannot run here, or None."""
    if shutil.which("debootstrap") is None:
        return "debootstrap is not installed (apt-get install debootstrap)"
    if os.geteuid() != 0:
        return "debootstrap needs root (run `sudo beamclaw sandbox build`)"
    return None


async def _build_debootstrap(
    client: docker.DockerClient, recipe: ImageRecipe, progress: Progress
) -> None:
    problem = debootstrap_problem()
    if problem is not None:
        raise ImageBuildError("debootstrap", problem)
    scratch = Path(tempfile.mkdtemp(prefix="beamclaw-sandbox-rootfs-"))
    try:
        rootfs = scratch / "rootfs"
        await _run_logged(recipe.debootstrap_command(str(rootfs)), "debootstrap", progress)
        progress("trimming the root file system")
        await asyncio.to_thread(_trim, rootfs)
        progress(f"importing into Docker as {recipe.image}")
        await asyncio.to_thread(_import_rootfs, client, rootfs, recipe)
    finally:
        await asyncio.to_thread(shutil.rmtree, scratch, True)


async def _run_logged(argv: list[str], step: str, progress: Progress) -> None:
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
    )
    tail: deque[str] = deque(maxlen=15)
    assert process.stdout is not None
    try:
        async for raw in process.stdout:
            line = raw.decode(errors="replace").rstrip()
            if line:
                tail.append(line)
                progress(f"{step}: {line}")
        status = await process.wait()
    except BaseException:
        if process.returncode is None:
            os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
        raise
    if status != 0:
        raise ImageBuildError(step, f"exit status {status}: " + " | ".join(tail))


def _trim(rootfs: Path) -> None:
    for relative in TRIMMED_PATHS:
        path = rootfs / relative
        if path.is_dir():
            shutil.rmtree(path)
            path.mkdir()
    for relative in (WORKDIR.lstrip("/"), "tools"):
        (rootfs / relative).mkdir(parents=True, exist_ok=True)


def _import_rootfs(client: docker.DockerClient, rootfs: Path, recipe: ImageRecipe) -> None:
    import docker.errors

    argv = ["tar", "-C", str(rootfs), "--numeric-owner", "-c", "."]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as tar:
        try:
            client.api.import_image(
                src=tar.stdout,
                stream_src=True,
                repository=recipe.repository,
                tag=recipe.tag,
                changes=recipe.import_changes(),
            )
        except docker.errors.DockerException as e:
            tar.kill()
            raise ImageBuildError("import", str(e)) from e
        status = tar.wait()
        if status != 0:
            err = tar.stderr.read().decode(errors="replace") if tar.stderr else ""
            raise ImageBuildError("tar", f"exit status {status}: {err.strip()}")


# ---------------------------------------------------------------- Dockerfile path


def dockerfile_dir() -> Path:
    """The directory of the packaged Dockerfile."""
    return Path(str(files("beamclaw_sandbox") / "image"))


def _build_dockerfile(client: docker.DockerClient, recipe: ImageRecipe, progress: Progress) -> None:
    import docker.errors

    if not _image_exists(client, recipe.base_image):
        raise ImageBuildError(
            "dockerfile",
            f"the base image {recipe.base_image} is not present locally "
            "(load it, or use build_method = 'debootstrap')",
        )
    try:
        for chunk in client.api.build(
            path=str(dockerfile_dir()),
            tag=recipe.image,
            buildargs=recipe.build_args(),
            labels=recipe.labels(),
            pull=False,
            rm=True,
            forcerm=True,
            decode=True,
        ):
            if "error" in chunk:
                raise ImageBuildError("dockerfile", str(chunk["error"]).strip())
            line = str(chunk.get("stream", "")).strip()
            if line:
                progress(f"docker build: {line}")
    except docker.errors.DockerException as e:
        raise ImageBuildError("dockerfile", str(e)) from e
