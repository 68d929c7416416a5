"""The beamclaw-tools error tree."""

from __future__ import annotations


class BeamclawToolsError(Exception):
    """Base of every error raised by beamclaw-tools."""


class ToolNameCollisionError(BeamclawToolsError):
    """A tool with this name is already registered."""

    def __init__(self, name: str, existing_source: str, new_source: str) -> None:
        self.name = name
        self.existing_source = existing_source
        self.new_source = new_source
        super().__init__(
            f"tool name {name!r} from {new_source} collides with the one from {existing_source}"
        )


class UnknownToolError(BeamclawToolsError):
    """No tool with this name is registered (or it is not granted to the agent)."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"unknown tool {name!r}")


class PathOutsideRootsError(BeamclawToolsError):
    """A path escapes the roots a file tool is confined to."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"path {path!r} refused: {reason}")


class UnsafeAddressError(BeamclawToolsError):
    """An outbound request targets an address the SSRF guard refuses."""

    def __init__(self, url: str, reason: str) -> None:
        self.url = url
        self.reason = reason
        super().__init__(f"refused to fetch {url}: {reason}")


class InvalidAgentIdError(BeamclawToolsError):
    """An agent id that cannot safely name a directory."""

    def __init__(self, agent_id: str) -> None:
        self.agent_id = agent_id
        super().__init__(
            f"agent id {agent_id!r} is not allowed (letters, digits, '.', '_', '-'; "
            "must start with a letter or digit; at most 64 characters)"
        )


class PatchError(BeamclawToolsError):
    """A unified diff that cannot be applied; nothing was written."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path}: {reason}" if path else reason)


class FetchError(BeamclawToolsError):
    """An outbound request failed (DNS, connection, protocol, too many redirects)."""

    def __init__(self, url: str, reason: str) -> None:
        self.url = url
        self.reason = reason
        super().__init__(f"request to {url} failed: {reason}")


class MemoryUnavailableError(BeamclawToolsError):
    """The memory behind the memory tools failed (its store, its index)."""


class MemoryInputRejectedError(BeamclawToolsError):
    """The memory refused a store request (bad key, oversized value).

    Attributes:
        reason: a sentence the agent can act on.
    """

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


class FileToolError(BeamclawToolsError):
    """A file tool refused or failed; internal signal whose message becomes ``ToolOutput.error``."""


class BrowserError(BeamclawToolsError):
    """A browser action failed or was refused; the message is written for the model."""


class StaleRefError(BrowserError):
    """An element ref that is not on the current page (the page changed since the snapshot)."""

    def __init__(self, ref: str) -> None:
        self.ref = ref
        super().__init__(
            f"element ref {ref!r} is not on the current page any more (the page changed); "
            "call browser_snapshot for fresh refs and try again"
        )


class BrowserUnavailableError(BrowserError):
    """Chromium is missing or could not be launched."""
