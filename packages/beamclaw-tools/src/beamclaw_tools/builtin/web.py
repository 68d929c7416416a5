"""``web_fetch`` (a page as readable markdown/text) and ``web_search`` (Brave Search).

``web_fetch`` goes through the SSRF guard and the size cap; HTML is reduced to its
readable part (scripts, styles, navigation and forms removed) and converted with
``markdownify``. ``web_search`` is only built when a Brave API key is configured and
available; its base URL is configurable (tests point it at a local fake).

Invariant: importing this module (as registering the built-in tools does) loads neither
BeautifulSoup, markdownify nor httpx; each is imported where it is first used (parsing
HTML, searching), so a gateway that never fetches a page never pays for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, cast

from pydantic import Field

from beamclaw_obs import MissingSecretError
from beamclaw_tools.base import ToolArgs, TypedTool, make_definition
from beamclaw_tools.builtin.http_request import is_text_type
from beamclaw_tools.errors import FetchError, UnsafeAddressError
from beamclaw_tools.fetch import guarded_fetch
from beamclaw_tools.netguard import NetworkPolicy, Resolver, system_resolver
from beamclaw_tools.settings import WebFetchSettings, WebSearchSettings
from beamclaw_tools.types import SessionRef, ToolOutput

if TYPE_CHECKING:
    import httpx

NOISE_TAGS = (
    "script",
    "style",
    "noscript",
    "iframe",
    "svg",
    "canvas",
    "nav",
    "footer",
    "header",
    "form",
    "button",
    "template",
    "aside",
)


def html_to_markdown(html: str, *, plain: bool = False) -> str:
    """Readable markdown (or plain text) of an HTML document, title first."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    title = soup.title.get_text(strip=True) if soup.title else ""
    for tag in soup(list(NOISE_TAGS)):
        tag.decompose()
    root = soup.find("main") or soup.find("article") or soup.body or soup
    if plain:
        text = root.get_text("\n", strip=True)
    else:
        text = MarkdownConverter(heading_style="ATX", strip=["img"]).convert_soup(root)
    lines = [line.rstrip() for line in text.splitlines()]
    compact: list[str] = []
    for line in lines:
        if line or (compact and compact[-1]):
            compact.append(line)
    body = "\n".join(compact).strip()
    return f"# {title}\n\n{body}" if title and not body.startswith(f"# {title}") else body


class WebFetchArgs(ToolArgs):
    url: str = Field(min_length=1, description="http:// or https:// URL of the page.")
    format: Literal["markdown", "text"] = "markdown"


class WebFetchTool(TypedTool[WebFetchArgs]):
    def __init__(self, settings: WebFetchSettings, resolver: Resolver = system_resolver) -> None:
        self._settings = settings
        self._policy = NetworkPolicy.from_config(settings.allow_private, settings.allowed_hosts)
        self._resolver = resolver
        super().__init__(
            WebFetchArgs,
            make_definition(
                "web_fetch",
                "Fetch a web page and return its readable content as markdown or text.",
                WebFetchArgs,
                timeout_seconds=settings.timeout_seconds * (settings.max_redirects + 1) + 5,
                max_output_chars=settings.max_output_chars,
            ),
        )

    async def run(self, args: WebFetchArgs, session: SessionRef) -> ToolOutput:
        try:
            response = await guarded_fetch(
                "GET",
                args.url,
                policy=self._policy,
                headers={
                    "User-Agent": self._settings.user_agent,
                    "Accept": "text/html, text/plain;q=0.9, */*;q=0.5",
                },
                max_bytes=self._settings.max_response_bytes,
                timeout_seconds=self._settings.timeout_seconds,
                max_redirects=self._settings.max_redirects,
                resolver=self._resolver,
            )
        except (UnsafeAddressError, FetchError) as e:
            return ToolOutput.error(str(e))
        if response.status >= 400:
            return ToolOutput.error(f"HTTP {response.status} {response.reason} from {args.url}")
        kind = response.content_type
        if not is_text_type(kind):
            return ToolOutput.error(f"{args.url} is {kind or 'binary'}, not a text page")
        text = response.text()
        if "html" in kind or (not kind and "<html" in text[:1000].lower()):
            text = html_to_markdown(text, plain=args.format == "text")
        if response.truncated:
            text += f"\n[... page truncated at {self._settings.max_response_bytes} bytes ...]"
        source = f"source: {response.final_url}\n\n"
        return ToolOutput(content=source + text, structured={"url": response.final_url})


class WebSearchArgs(ToolArgs):
    query: str = Field(min_length=1, max_length=400)
    count: int = Field(default=5, ge=1, le=20, description="Number of results.")


class WebSearchTool(TypedTool[WebSearchArgs]):
    def __init__(
        self, settings: WebSearchSettings, transport: httpx.AsyncBaseTransport | None = None
    ) -> None:
        self._settings = settings
        self._transport = transport
        super().__init__(
            WebSearchArgs,
            make_definition(
                "web_search",
                "Search the web (Brave Search). Returns titles, URLs and snippets.",
                WebSearchArgs,
                timeout_seconds=settings.timeout_seconds + 5,
            ),
        )

    async def run(self, args: WebSearchArgs, session: SessionRef) -> ToolOutput:
        if self._settings.api_key is None:
            return ToolOutput.error("web search is not configured ([tools.web_search] api_key)")
        try:
            key = self._settings.api_key.resolve(used_for="web_search")
        except MissingSecretError as e:
            return ToolOutput.error(str(e))
        import httpx
        from bs4 import BeautifulSoup

        url = self._settings.base_url.rstrip("/") + "/web/search"
        params: dict[str, str | int] = {
            "q": args.query,
            "count": min(args.count, self._settings.max_results),
        }
        try:
            async with httpx.AsyncClient(
                timeout=self._settings.timeout_seconds, transport=self._transport, trust_env=False
            ) as client:
                response = await client.get(
                    url,
                    params=params,
                    headers={"X-Subscription-Token": key, "Accept": "application/json"},
                )
        except httpx.HTTPError as e:
            return ToolOutput.error(f"web search failed: {type(e).__name__}: {e}")
        if response.status_code != 200:
            return ToolOutput.error(
                f"web search failed: HTTP {response.status_code} {response.text[:300]}"
            )
        try:
            data = cast(dict[str, Any], response.json())
        except ValueError:
            return ToolOutput.error("web search returned a response that is not JSON")
        web = cast(dict[str, Any], data.get("web") or {})
        results = cast(list[dict[str, Any]], web.get("results") or [])
        if not results:
            return ToolOutput.ok(f"no results for {args.query!r}")
        lines: list[str] = []
        for i, item in enumerate(results[: args.count], 1):
            title = str(item.get("title", "")).strip()
            link = str(item.get("url", "")).strip()
            snippet = BeautifulSoup(str(item.get("description", "")), "html.parser").get_text()
            lines.append(f"{i}. {title}\n   {link}\n   {snippet.strip()}")
        return ToolOutput(
            content="\n".join(lines),
            structured={
                "results": [
                    {"title": r.get("title"), "url": r.get("url")} for r in results[: args.count]
                ]
            },
        )
