"""The sandbox's pure parts: settings rules, the image recipe, the container spec, the
stream framing and capture, result formatting and the skill file format."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from beamclaw_sandbox import SandboxSettings
from beamclaw_sandbox.hardening import ContainerSpec, container_environment, container_name
from beamclaw_sandbox.recipe import RECIPE_LABEL, ImageRecipe
from beamclaw_sandbox.runner import RunOutcome, exec_command
from beamclaw_sandbox.skills import SkillError, load_skill, save_skill
from beamclaw_sandbox.streams import CappedCapture, FrameReader
from beamclaw_sandbox.tool import ExecArgs, format_outcome


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "GITHUB_TOKEN", "DB_PASSWORD", "MY_SECRET"])
def test_credential_like_names_are_refused_in_the_allowlist(name: str) -> None:
    with pytest.raises(ValidationError, match="credential"):
        SandboxSettings(env_allow=[name])
    with pytest.raises(ValidationError, match="credential"):
        SandboxSettings(env={name: "x"})


def test_the_host_network_is_refused() -> None:
    with pytest.raises(ValidationError, match="host"):
        SandboxSettings(network="host")
    assert SandboxSettings(network="bridge").network == "bridge"


def test_the_environment_is_the_allowlist_only() -> None:
    settings = SandboxSettings(env_allow=["TZ", "LANG_X"], env={"A": "1"})
    host = {"TZ": "UTC", "OPENAI_API_KEY": "sk-1", "PATH": "/host/bin"}
    assert container_environment(settings, host) == {"TZ": "UTC", "A": "1"}


def test_the_recipe_digest_follows_the_contents_not_the_mirror() -> None:
    base = ImageRecipe.from_settings(SandboxSettings())
    mirror = ImageRecipe.from_settings(SandboxSettings(debian_mirror="http://local/debian"))
    more = ImageRecipe.from_settings(SandboxSettings(extra_packages=["jq"]))
    other_suite = ImageRecipe.from_settings(SandboxSettings(debian_suite="trixie"))
    assert base.digest == mirror.digest
    assert len({base.digest, more.digest, other_suite.digest}) == 3
    assert more.packages == ("python3", "bash", "coreutils", "jq")
    changes = base.import_changes()
    assert "USER 65534:65534" in changes and "WORKDIR /work" in changes
    assert f"LABEL {RECIPE_LABEL}={base.digest}" in changes
    assert base.debootstrap_command("/r")[:3] == [
        "debootstrap",
        "--variant=minbase",
        "--include=python3,bash,coreutils",
    ]
    assert (base.repository, base.tag) == ("beamclaw-sandbox", "1")


def test_the_container_spec_is_hardened_whatever_the_settings() -> None:
    settings = SandboxSettings(memory_mb=64, cpus=2, pids_limit=32, network="bridge")
    spec = ContainerSpec("img", container_name("o", "k"), {"l": "1"}, {"TZ": "UTC"}, settings)
    kw = spec.create_kwargs()
    assert kw["cap_drop"] == ["ALL"] and kw["read_only"] is True
    assert kw["security_opt"] == ["no-new-privileges:true"]
    assert kw["user"] == "65534:65534" and kw["init"] is True
    assert kw["mem_limit"] == kw["memswap_limit"] == "64m"
    assert kw["nano_cpus"] == 2_000_000_000 and kw["pids_limit"] == 32
    assert kw["network_mode"] == "bridge"
    assert "noexec" in kw["tmpfs"]["/tmp"]
    assert kw["volumes"] == {} and "privileged" not in kw
    bridged = ContainerSpec("i", "n", {}, {}, settings, binds={"/h/s": "/run/beamclaw"})
    assert bridged.create_kwargs()["volumes"] == {"/h/s": {"bind": "/run/beamclaw", "mode": "ro"}}
    assert ContainerSpec("i", "n", {}, {}, SandboxSettings(network="mynet")).create_kwargs()[
        "network"
    ] == ("mynet")


def test_the_exec_command_passes_the_script_on_stdin() -> None:
    argv = exec_command("python", 2.5, "/tmp/g")
    assert argv[:2] == ["sh", "-c"] and argv[3:] == ["sandbox", "python3", "2.5", "/tmp/g"]
    assert 'cat >"$f"' in argv[2]


def frame(stream: int, payload: bytes) -> bytes:
    return bytes([stream, 0, 0, 0]) + len(payload).to_bytes(4, "big") + payload


@given(st.lists(st.tuples(st.sampled_from([1, 2]), st.binary(max_size=50))), st.integers(1, 7))
def test_frames_survive_any_split(frames: list[tuple[int, bytes]], step: int) -> None:
    wire = b"".join(frame(s, p) for s, p in frames)
    reader = FrameReader()
    got: list[tuple[int, bytes]] = []
    for i in range(0, len(wire), step):
        got.extend(reader.feed(wire[i : i + step]))
    assert got == frames and reader.pending == 0


@given(st.lists(st.binary(max_size=40)), st.integers(3, 60))
def test_capture_keeps_everything_or_says_how_much_it_cut(chunks: list[bytes], limit: int) -> None:
    capture = CappedCapture(limit)
    for chunk in chunks:
        capture.add(chunk)
    whole = b"".join(chunks)
    assert capture.total == len(whole)
    if len(whole) <= limit:
        assert capture.text() == whole.decode(errors="replace") and not capture.truncated
    else:
        assert capture.truncated
        assert f"of {len(whole)} bytes omitted" in capture.text()


def outcome(**kw: object) -> RunOutcome:
    base: dict[str, object] = {
        "exit_status": 0,
        "stdout": "",
        "stderr": "",
        "stdout_bytes": 0,
        "stderr_bytes": 0,
        "timed_out": False,
        "hung": False,
        "seconds": 0.1,
    }
    base.update(kw)
    return RunOutcome(**base)  # type: ignore[arg-type]


def test_results_name_the_exit_status_or_the_timeout() -> None:
    ok = format_outcome(outcome(stdout="42\n"), 10)
    assert ok.content == "[exit status 0]\nstdout:\n42" and not ok.is_error
    failed = format_outcome(outcome(exit_status=2, stderr="boom\n"), 10)
    assert (
        failed.is_error
        and "[exit status 2]" in failed.content
        and "stderr:\nboom" in failed.content
    )
    late = format_outcome(outcome(exit_status=124, timed_out=True), 3)
    assert late.is_error and "[timed out after 3 s" in late.content
    assert format_outcome(outcome(), 1).content.endswith("(no output)")


def test_exec_args_need_exactly_one_source() -> None:
    with pytest.raises(ValidationError):
        ExecArgs()
    with pytest.raises(ValidationError):
        ExecArgs(script="print(1)", skill="x")
    with pytest.raises(ValidationError):
        ExecArgs(script="print(1)", language="ruby")  # type: ignore[arg-type]
    assert ExecArgs(skill="x").language == "python"


def test_a_saved_skill_loads_back_and_a_tampered_one_is_refused(tmp_path: Path) -> None:
    path = save_skill(tmp_path, "count-lines", "Counts: lines", "bash", "wc -l < /etc/os-release\n")
    assert path == tmp_path / "skills" / "count-lines" / "SKILL.md"
    text = path.read_text()
    assert "type: sandbox_script" in text and "language: bash" in text
    assert 'description: "Counts: lines"' in text
    assert load_skill(tmp_path, "count-lines") == ("bash", "wc -l < /etc/os-release\n")
    (path.parent / "script.sh").write_text("rm -rf /work\n")
    with pytest.raises(SkillError, match="hash mismatch"):
        load_skill(tmp_path, "count-lines")
    with pytest.raises(SkillError, match="no sandbox skill"):
        load_skill(tmp_path, "absent")
    with pytest.raises(SkillError, match="letters"):
        save_skill(tmp_path, "../escape", "", "python", "1")


def test_pii_tokens_are_stable_and_only_known_values_come_back() -> None:
    from beamclaw_sandbox.pii import PiiTokenizer, custom_patterns

    tok = PiiTokenizer()
    script = "send('ann@example.com', key='sk-abcdefghijklmnop1234', card='4111 1111 1111 1111')"
    tokens = tok.tokenize(script, known=True)
    assert "ann@example.com" not in tokens and "sk-abcdef" not in tokens and "4111" not in tokens
    assert "PII_EMAIL_" in tokens and "PII_KEY_" in tokens and "PII_CARD_" in tokens
    assert tok.tokenize("again ann@example.com", known=True).endswith(tokens.split("'")[1])
    assert tok.detokenize(tokens, only_known=True) == script
    # a value first seen in a tool result stays a token for the model, not for tools
    result = tok.tokenize("call +44 20 7946 0958 or bob@example.org", known=False)
    assert "+44" not in result and "bob@" not in result
    assert tok.detokenize(result, only_known=True) == result
    assert tok.detokenize(result, only_known=False) == "call +44 20 7946 0958 or bob@example.org"
    assert tok.detokenize_value({"to": [result]}) == {
        "to": ["call +44 20 7946 0958 or bob@example.org"]
    }
    # ordinary numbers and never-issued tokens are left alone
    assert tok.tokenize("x = 1234567890123; y = 42", known=True) == "x = 1234567890123; y = 42"
    assert tok.detokenize("PII_EMAIL_999", only_known=False) == "PII_EMAIL_999"
    custom = PiiTokenizer(custom_patterns({"employee": r"EMP-\d{6}"}))
    assert custom.tokenize("id EMP-123456", known=True) == "id PII_EMPLOYEE_1"


def test_pii_patterns_must_compile() -> None:
    with pytest.raises(ValidationError, match="not a regular expression"):
        SandboxSettings(pii_patterns={"bad": "("})
