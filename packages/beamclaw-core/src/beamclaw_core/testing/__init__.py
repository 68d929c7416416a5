"""Test doubles shipped with beamclaw-core.

* :class:`ScriptedProvider` — an in-process provider following a script of rules.
* :class:`FakeOpenAIServer`, :class:`FakeAnthropicServer` — fake LLM APIs over real HTTP on
  127.0.0.1 (aiohttp), scripted with :class:`FakeReply` and fault steps, recording every
  request body exactly.
* :class:`FailingDatabase` — a real database whose writes fail on demand (store outages).
* :func:`png_image`, :class:`ImageTool` — real PNG files, and a tool that returns images.
"""

from beamclaw_core.testing.fake_anthropic import FakeAnthropicServer
from beamclaw_core.testing.fake_openai import FakeOpenAIServer
from beamclaw_core.testing.fake_server import FakeLLMServer
from beamclaw_core.testing.fake_steps import (
    FakeReply,
    FakeStep,
    FakeStepFn,
    FakeToolCall,
    HttpFault,
    InvalidJSON,
    RawBody,
    RecordedRequest,
    StreamError,
    Truncate,
)
from beamclaw_core.testing.fake_steps import Hang as ServerHang
from beamclaw_core.testing.faults import FailingDatabase
from beamclaw_core.testing.harness import EchoTool, VirtualTime, quiet_core_settings
from beamclaw_core.testing.images import ImageTool, png_bytes, png_image
from beamclaw_core.testing.scripted import (
    CallTool,
    CallTools,
    Fail,
    Hang,
    Reply,
    Rule,
    RuleFn,
    ScriptedCall,
    ScriptedProvider,
    ScriptStep,
)

__all__ = [
    "CallTool",
    "CallTools",
    "EchoTool",
    "Fail",
    "FailingDatabase",
    "FakeAnthropicServer",
    "FakeLLMServer",
    "FakeOpenAIServer",
    "FakeReply",
    "FakeStep",
    "FakeStepFn",
    "FakeToolCall",
    "Hang",
    "HttpFault",
    "ImageTool",
    "InvalidJSON",
    "RawBody",
    "RecordedRequest",
    "Reply",
    "Rule",
    "RuleFn",
    "ScriptStep",
    "ScriptedCall",
    "ScriptedProvider",
    "ServerHang",
    "StreamError",
    "Truncate",
    "VirtualTime",
    "png_bytes",
    "png_image",
    "quiet_core_settings",
]
