"""The HTTP side of a Bot API call: reading parameters from a request, writing answers.

Telegram reads parameters from the query string and from a JSON, urlencoded or multipart
body alike; file parts of a multipart body are uploads. Answers are
``{"ok": true, "result": ...}`` (plus ``description`` for some) or the failure's body, with
``error_code`` equal to the HTTP status, which is how aiogram maps them to its exceptions
(``parameters.retry_after`` → ``TelegramRetryAfter`` whatever the status; else 400
``TelegramBadRequest``, 401 ``TelegramUnauthorizedError``, 409 ``TelegramConflictError``,
5xx ``TelegramServerError``).
"""

from __future__ import annotations

from typing import Any

from aiohttp import BodyPartReader, hdrs, web

from beamclaw_gateway.fake_telegram.errors import BotApiError
from beamclaw_gateway.fake_telegram.params import Upload


async def read_params(request: web.Request) -> tuple[dict[str, Any], dict[str, Upload]]:
    """The raw parameters (strings, or JSON values) and the file parts of a request.

    Raises:
        BotApiError: 400 for a JSON body that does not parse to an object.
    """
    raw: dict[str, Any] = dict(request.query)
    parts: dict[str, Upload] = {}
    content_type = request.content_type
    if content_type == "application/json":
        try:
            body: Any = await request.json()
        except ValueError:
            raise BotApiError.bad_request("can't parse JSON object") from None
        if not isinstance(body, dict):
            raise BotApiError.bad_request("can't parse JSON object")
        raw.update(body)
    elif content_type == "multipart/form-data":
        reader = await request.multipart()
        async for part in reader:
            if not isinstance(part, BodyPartReader) or part.name is None:
                continue
            if part.filename is not None:
                data = bytes(await part.read(decode=True))
                parts[part.name] = Upload(part.filename, data, part.headers.get(hdrs.CONTENT_TYPE))
            else:
                raw[part.name] = await part.text()
    elif content_type == "application/x-www-form-urlencoded":
        form = await request.post()
        raw.update({key: value for key, value in form.items() if isinstance(value, str)})
    return raw, parts


def ok(result: Any, description: str | None = None) -> web.Response:
    body: dict[str, Any] = {"ok": True, "result": result}
    if description is not None:
        body["description"] = description
    return web.json_response(body)


def failure(error: BotApiError) -> web.Response:
    return web.json_response(error.body(), status=error.status)


#: the description a bare ``fail_next(method, status)`` answers with
DEFAULT_DESCRIPTIONS = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden: bot was blocked by the user",
    404: "Not Found",
    409: "Conflict: terminated by other getUpdates request; "
    "make sure that only one bot instance is running",
    413: "Request Entity Too Large",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


def default_description(status: int, retry_after: int | None) -> str:
    if status == 429:
        return f"Too Many Requests: retry after {retry_after or 1}"
    return DEFAULT_DESCRIPTIONS.get(status, f"Error {status}")
