"""``MEDIA:`` lines: a tool names an image in the agent's workspace and the model sees it
(beamclaw_core.tool_media), through the real loop and on its own."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from beamclaw_core.api import Core
from beamclaw_core.sessions import SessionAddress
from beamclaw_core.testing import CallTool, ImageTool, Reply, ScriptedProvider, png_bytes
from beamclaw_core.tool_media import MAX_MEDIA_LINES, attach_media
from beamclaw_obs import beamclaw_home
from beamclaw_tools import ImagePart, TextPart, ToolResult
from beamclaw_tools.paths import WorkspaceRoots

ADDR = SessionAddress("local:ann", "default", "tui")


def result(text: str) -> ToolResult:
    return ToolResult(tool_call_id="c1", name="render", content=text)


async def test_a_media_line_attaches_the_workspace_image(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "chart.png").write_bytes(png_bytes())
    done = await attach_media(
        result("rendered the chart\nMEDIA: out/chart.png\nbye"), WorkspaceRoots((tmp_path,)), 10_000
    )
    assert done.content == "rendered the chart\n[image attached: out/chart.png]\nbye"
    (image,) = done.parts
    assert isinstance(image, ImagePart) and image.media_type == "image/png"


async def test_a_media_line_naming_another_file_hands_it_to_the_person(tmp_path: Path) -> None:
    (tmp_path / "report.csv").write_text("a,b\n1,2\n")
    (tmp_path / "tiny.png").write_bytes(b"\x89PNG")  # too short to be an image: a file
    done = await attach_media(
        result("MEDIA: report.csv\nMEDIA: tiny.png"), WorkspaceRoots((tmp_path,)), 10_000
    )
    assert done.content == "[file attached: report.csv]\n[file attached: tiny.png]"
    assert done.parts == ()
    report, tiny = done.files
    assert report.name == "report.csv" and report.media_type == "text/csv"
    assert report.size == 8 and Path(report.path) == (tmp_path / "report.csv").resolve()
    assert tiny.media_type == "image/png" and tiny.size == 4


async def test_lines_that_cannot_be_honoured_say_why(tmp_path: Path) -> None:
    (tmp_path / "big.png").write_bytes(png_bytes(5000))
    (tmp_path.parent / "secret.png").write_bytes(png_bytes())
    (tmp_path / "link.png").symlink_to(tmp_path.parent / "secret.png")
    text = "\n".join(
        [
            "MEDIA: missing.png",
            "MEDIA: big.png",
            "MEDIA: ../secret.png",
            "MEDIA: link.png",
            f"MEDIA: {tmp_path.parent / 'secret.png'}",
        ]
    )
    done = await attach_media(result(text), WorkspaceRoots((tmp_path,)), 1000)
    assert done.parts == ()
    lines = done.content.splitlines()
    assert lines[0] == "[image not attached: no file missing.png]"
    assert "over the 1,000-byte limit" in lines[1]
    assert all(line.startswith("[image not attached: ") for line in lines[2:])
    assert done.files == ()
    assert "secret" not in "".join(p.data for p in done.parts if isinstance(p, ImagePart))


async def test_at_most_a_few_media_lines_count(tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(png_bytes())
    text = "\n".join(["MEDIA: a.png"] * (MAX_MEDIA_LINES + 2))
    done = await attach_media(result(text), WorkspaceRoots((tmp_path,)), 10_000)
    assert len(done.parts) == MAX_MEDIA_LINES
    assert done.content.count("more than") == 2


async def test_text_without_media_lines_is_untouched(tmp_path: Path) -> None:
    plain = result("the word MEDIA: appears mid-line here")
    assert await attach_media(plain, WorkspaceRoots((tmp_path,)), 10_000) is plain


async def test_the_model_sees_the_image_a_media_line_names(
    make_core: Callable[..., Core],
) -> None:
    workspace = beamclaw_home() / "agents" / "default"
    workspace.mkdir(parents=True, exist_ok=True)
    (workspace / "plot.png").write_bytes(png_bytes())
    tool = ImageTool("render", text="plotted\nMEDIA: plot.png")
    provider = ScriptedProvider([CallTool("render", {}), Reply("a red dot")])
    core = make_core(provider, tool)
    await core.start()
    handle = await core.send(ADDR, "plot it")
    assert await handle.text() == "a red dot"
    second = provider.calls[1].messages
    tool_message = next(m for m in second if m.role.value == "tool")
    assert isinstance(tool_message.content, tuple)
    assert tool_message.content[0] == TextPart(text="plotted\n[image attached: plot.png]")
    assert isinstance(tool_message.content[1], ImagePart)
