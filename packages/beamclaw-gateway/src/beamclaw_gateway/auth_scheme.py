"""The gateway token as FastAPI's security dependency: ``Depends(require_token)`` guards a
route and documents it (``components.securitySchemes.HTTPBearer``). Imported by the route
groups only: the probes and the middleware need :mod:`.auth`, not FastAPI."""

from __future__ import annotations

from fastapi import Request
from fastapi.security import HTTPBearer

from beamclaw_gateway.auth import TokenGuard, unauthorized

__all__ = ["require_token"]


class _GatewayBearer(HTTPBearer):
    """The bearer security scheme that also checks the token.

    One dependency where a scheme plus a checking dependency took two: FastAPI's solver
    cost ~0.1 ms a request per level. Subclassing ``HTTPBearer`` keeps the scheme in the
    OpenAPI document (``components.securitySchemes.HTTPBearer``, ``security`` on each
    guarded operation)."""

    async def __call__(self, request: Request) -> None:  # type: ignore[override]
        guard: TokenGuard = request.app.state.services.auth
        refusal = guard.request_refusal(
            request.scope.get("state", {}), request.headers.get("authorization")
        )
        if not guard.accepts(refusal):
            raise unauthorized()


require_token = _GatewayBearer(
    auto_error=False, scheme_name="HTTPBearer", description="The gateway token."
)
"""FastAPI dependency guarding ``/v1``, ``/api`` and ``/a2a`` (``Depends(require_token)``)."""
