"""``/ws``: the route of the WebSocket protocol (ws.py), a group of its own so the
channel hub the services hold needs no FastAPI."""

from __future__ import annotations

from fastapi import APIRouter

from beamclaw_gateway.ws import websocket_endpoint

__all__ = ["router"]

router = APIRouter()
router.add_api_websocket_route("/ws", websocket_endpoint)
