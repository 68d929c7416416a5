"""Standing ``/always`` grants per agent and person (persisted, cached, revocable)."""

from beamclaw_core.approvals.allowlist import AlwaysAllowlist, AlwaysGrant, PersonAllowlist

__all__ = ["AlwaysAllowlist", "AlwaysGrant", "PersonAllowlist"]
