"""beamclaw-sandbox: model-written code in hardened Docker containers (the ``exec`` tool).

Only this package imports the docker SDK, and only when a sandbox is used: importing
``beamclaw_sandbox`` (the gateway's configuration does) costs no Docker import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from beamclaw_obs.lazy import lazy_exports

if TYPE_CHECKING:
    from beamclaw_sandbox.admin import SandboxAdmin
    from beamclaw_sandbox.bridge import ToolBridge
    from beamclaw_sandbox.build import BuildReport, ensure_image, image_state
    from beamclaw_sandbox.engine import connect, engine_url
    from beamclaw_sandbox.errors import (
        BeamclawSandboxError,
        ContainerError,
        DockerUnavailableError,
        ImageBuildError,
        SandboxUnavailableError,
    )
    from beamclaw_sandbox.hardening import ContainerSpec, owner_id
    from beamclaw_sandbox.pool import ContainerInfo, ContainerPool
    from beamclaw_sandbox.recipe import ImageRecipe
    from beamclaw_sandbox.runner import RunOutcome
    from beamclaw_sandbox.service import Sandbox
    from beamclaw_sandbox.settings import SandboxSettings
    from beamclaw_sandbox.skills import SkillError, load_skill, save_skill
    from beamclaw_sandbox.tool import ExecArgs, ExecTool
else:
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "beamclaw_sandbox.admin": ("SandboxAdmin",),
            "beamclaw_sandbox.bridge": ("ToolBridge",),
            "beamclaw_sandbox.build": ("BuildReport", "ensure_image", "image_state"),
            "beamclaw_sandbox.engine": ("connect", "engine_url"),
            "beamclaw_sandbox.errors": (
                "BeamclawSandboxError",
                "ContainerError",
                "DockerUnavailableError",
                "ImageBuildError",
                "SandboxUnavailableError",
            ),
            "beamclaw_sandbox.hardening": ("ContainerSpec", "owner_id"),
            "beamclaw_sandbox.pool": ("ContainerInfo", "ContainerPool"),
            "beamclaw_sandbox.recipe": ("ImageRecipe",),
            "beamclaw_sandbox.runner": ("RunOutcome",),
            "beamclaw_sandbox.service": ("Sandbox",),
            "beamclaw_sandbox.settings": ("SandboxSettings",),
            "beamclaw_sandbox.skills": ("SkillError", "load_skill", "save_skill"),
            "beamclaw_sandbox.tool": ("ExecArgs", "ExecTool"),
        },
    )

__version__ = "0.1.0"

__all__ = [
    "BeamclawSandboxError",
    "BuildReport",
    "ContainerError",
    "ContainerInfo",
    "ContainerPool",
    "ContainerSpec",
    "DockerUnavailableError",
    "ExecArgs",
    "ExecTool",
    "ImageBuildError",
    "ImageRecipe",
    "RunOutcome",
    "Sandbox",
    "SandboxAdmin",
    "SandboxSettings",
    "SandboxUnavailableError",
    "SkillError",
    "ToolBridge",
    "__version__",
    "connect",
    "engine_url",
    "ensure_image",
    "image_state",
    "load_skill",
    "owner_id",
    "save_skill",
]
