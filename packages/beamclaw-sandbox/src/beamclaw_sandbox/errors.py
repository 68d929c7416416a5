"""The beamclaw-sandbox error tree."""

from __future__ import annotations


class BeamclawSandboxError(Exception):
    """Base of every error raised by beamclaw-sandbox."""


class DockerUnavailableError(BeamclawSandboxError):
    """The Docker engine does not answer (not installed, not running, no permission)."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"Docker is not available: {reason}")
        self.reason = reason


class ImageBuildError(BeamclawSandboxError):
    """Building the sandbox image failed; ``step`` names the stage that failed."""

    def __init__(self, step: str, detail: str) -> None:
        super().__init__(f"building the sandbox image failed at {step}: {detail}")
        self.step = step
        self.detail = detail


class ContainerError(BeamclawSandboxError):
    """A container could not be created, started or used."""

    def __init__(self, key: str, detail: str) -> None:
        super().__init__(f"sandbox container for {key}: {detail}")
        self.key = key
        self.detail = detail


class SandboxUnavailableError(BeamclawSandboxError):
    """A run was asked while the sandbox is down; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"the sandbox is not available: {reason}")
        self.reason = reason
