"""Scripts in real containers on the real engine: the hardening flags as Docker applied
them, Python and bash runs, timeouts, output caps, and what a script cannot do."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import docker
import pytest

from beamclaw_sandbox import Sandbox
from beamclaw_sandbox.hardening import KEY_LABEL, OWNER_LABEL, SANDBOX_LABEL

pytestmark = pytest.mark.docker

KEY = "session:s-1"
PROCESSES = (
    "import os\nprint(sorted(open(f'/proc/{p}/comm').read().strip() "
    "for p in os.listdir('/proc') if p.isdigit()))"
)
"""A script printing the names of the container's processes."""


def inspect(sandbox: Sandbox, key: str = KEY) -> dict[str, Any]:
    assert sandbox.pool is not None
    name = sandbox.pool.spec(key).name
    client = docker.DockerClient(base_url="unix:///var/run/docker.sock")
    try:
        return client.api.inspect_container(name)
    finally:
        client.close()


async def test_the_hardening_flags_are_what_docker_applied(
    make_sandbox: Callable[..., Any],
) -> None:
    sandbox: Sandbox = await make_sandbox(memory_mb=128, cpus=0.5, pids_limit=64)
    assert (await sandbox.run(KEY, "print('up')", "python", 10)).stdout == "up\n"
    info = inspect(sandbox)
    host = info["HostConfig"]
    assert host["CapDrop"] == ["ALL"] and not host["CapAdd"]
    assert host["ReadonlyRootfs"] is True
    assert host["SecurityOpt"] == ["no-new-privileges:true"]
    assert host["Privileged"] is False
    assert "noexec" in host["Tmpfs"]["/tmp"] and "size=64m" in host["Tmpfs"]["/tmp"]
    assert "uid=65534" in host["Tmpfs"]["/work"]
    assert host["Memory"] == host["MemorySwap"] == 128 * 1024 * 1024
    assert host["NanoCpus"] == 500_000_000
    assert host["PidsLimit"] == 64
    assert host["NetworkMode"] == "none"
    assert host["Init"] is True
    assert not host["Binds"]  # no bind mount at all, so no Docker socket
    assert all(m["Type"] == "tmpfs" for m in info["Mounts"])
    assert info["Config"]["User"] == "65534:65534"
    assert info["Config"]["WorkingDir"] == "/work"
    labels = info["Config"]["Labels"]
    assert labels[SANDBOX_LABEL] == "1"
    assert labels[OWNER_LABEL] == sandbox.owner and labels[KEY_LABEL] == KEY


async def test_python_and_bash_run_with_their_exit_status(
    make_sandbox: Callable[..., Any],
) -> None:
    sandbox: Sandbox = await make_sandbox()
    py = await sandbox.run(
        KEY, "import sys\nprint(sum(range(10)))\nprint('warn', file=sys.stderr)", "python", 10
    )
    assert (py.exit_status, py.stdout, py.stderr, py.timed_out) == (0, "45\n", "warn\n", False)
    sh = await sandbox.run(KEY, 'echo "$((6*7))" > answer; cat answer; exit 3', "bash", 10)
    assert (sh.exit_status, sh.stdout) == (3, "42\n")
    # the work directory lives as long as the container: a later run sees the file
    again = await sandbox.run(KEY, "print(open('answer').read().strip())", "python", 10)
    assert again.stdout == "42\n"
    broken = await sandbox.run(KEY, "def f(:\n", "python", 10)
    assert broken.exit_status == 1 and "SyntaxError" in broken.stderr


async def test_a_timeout_kills_the_script_and_its_children(
    make_sandbox: Callable[..., Any],
) -> None:
    sandbox: Sandbox = await make_sandbox()
    script = "sleep 300 & sleep 300 & echo started; wait"
    outcome = await sandbox.run(KEY, script, "bash", 1.5)
    assert outcome.timed_out and not outcome.hung
    assert outcome.stdout == "started\n"
    assert 1.5 <= outcome.seconds < 5
    # nothing of it is left: only init, sleep infinity and this run's own processes
    left = await sandbox.run(KEY, PROCESSES, "python", 10)
    assert "sleep" in left.stdout  # the container's own `sleep infinity`
    assert left.stdout.count("'sleep'") == 1, left.stdout


async def test_large_output_is_cut_with_an_explicit_marker(
    make_sandbox: Callable[..., Any],
) -> None:
    sandbox: Sandbox = await make_sandbox(max_output_chars=1000)
    outcome = await sandbox.run(
        KEY, "for i in range(200000): print(f'line {i}')\nprint('THE END')", "python", 30
    )
    assert outcome.exit_status == 0
    assert outcome.stdout_bytes > 2_000_000
    assert "[... truncated:" in outcome.stdout and "bytes omitted ...]" in outcome.stdout
    assert outcome.stdout.startswith("line 0\n")
    assert outcome.stdout.rstrip().endswith("THE END")
    assert len(outcome.stdout) < 1200


async def test_a_script_printing_forever_is_stopped_by_its_timeout(
    make_sandbox: Callable[..., Any],
) -> None:
    sandbox: Sandbox = await make_sandbox(max_output_chars=500)
    outcome = await sandbox.run(KEY, "yes 'spam'", "bash", 2)
    assert outcome.timed_out
    assert outcome.stdout_bytes > 1_000_000 and len(outcome.stdout) < 700


async def test_the_network_is_unreachable(make_sandbox: Callable[..., Any]) -> None:
    sandbox: Sandbox = await make_sandbox()
    script = """
import socket
try:
    socket.create_connection(("1.1.1.1", 53), timeout=3)
    print("CONNECTED")
except OSError as e:
    print("refused:", e.errno)
print(sorted(l.split(":")[0].strip() for l in open("/proc/net/dev").readlines()[2:]))
"""
    outcome = await sandbox.run(KEY, script, "python", 10)
    assert "CONNECTED" not in outcome.stdout
    assert "refused: 101" in outcome.stdout  # ENETUNREACH
    assert outcome.stdout.strip().endswith("['lo']")


async def test_the_root_is_read_only_and_tmp_is_noexec(
    make_sandbox: Callable[..., Any],
) -> None:
    sandbox: Sandbox = await make_sandbox()
    script = """
for target in /usr/bin/evil /etc/passwd /root/x /x; do
  if echo x >> "$target" 2>/dev/null; then echo "WROTE $target"; else echo "refused $target"; fi
done
cp /bin/true /tmp/t && chmod +x /tmp/t && { /tmp/t && echo "EXECUTED /tmp" || echo "noexec /tmp"; }
cp /bin/true /work/t && chmod +x /work/t && /work/t && echo "work is usable"
"""
    outcome = await sandbox.run(KEY, script, "bash", 10)
    assert "WROTE" not in outcome.stdout and "EXECUTED" not in outcome.stdout
    assert outcome.stdout.count("refused") == 4
    assert "noexec /tmp" in outcome.stdout and "work is usable" in outcome.stdout


async def test_escape_attempts_fail(make_sandbox: Callable[..., Any]) -> None:
    sandbox: Sandbox = await make_sandbox()
    script = r"""
id -u
mount -t tmpfs none /work/m 2>/dev/null && echo "MOUNTED" || echo "no mount"
chown 0:0 /work 2>/dev/null && echo "CHOWNED" || echo "no chown"
touch /work/f && chown 0 /work/f 2>/dev/null && echo "CHOWNED FILE" || echo "no chown file"
ls /var/run/docker.sock 2>/dev/null && echo "SOCKET" || echo "no socket"
grep -E '^(CapEff|CapBnd|NoNewPrivs)' /proc/self/status
echo x > /proc/sys/kernel/hostname 2>/dev/null && echo "SYSCTL" || echo "no sysctl"
"""
    outcome = await sandbox.run(KEY, script, "bash", 10)
    out = outcome.stdout
    assert out.splitlines()[0] == "65534"
    for breach in ("MOUNTED", "CHOWNED", "SOCKET", "SYSCTL"):
        assert breach not in out, out
    assert "CapEff:\t0000000000000000" in out and "CapBnd:\t0000000000000000" in out
    assert "NoNewPrivs:\t1" in out


async def test_a_fork_bomb_hits_the_pid_limit_and_the_sandbox_recovers(
    make_sandbox: Callable[..., Any],
) -> None:
    sandbox: Sandbox = await make_sandbox(pids_limit=64)
    bomb = await sandbox.run(KEY, "bomb() { bomb | bomb & }; bomb; sleep 3", "bash", 3)
    assert bomb.timed_out or bomb.exit_status != 0
    assert inspect(sandbox)["HostConfig"]["PidsLimit"] == 64
    # nothing of the bomb is left: the same container answers, with only its own processes
    after = await sandbox.run(KEY, PROCESSES, "python", 20)
    assert after.exit_status == 0, after.stderr
    assert after.stdout.count("'bash'") == 0, after.stdout


async def test_only_allowlisted_variables_reach_the_container(
    make_sandbox: Callable[..., Any],
) -> None:
    sandbox: Sandbox = await make_sandbox(env_allow=["TZ"], env={"GREETING": "hello"})
    outcome = await sandbox.run(KEY, "env | sort", "bash", 10)
    names = {line.split("=", 1)[0] for line in outcome.stdout.splitlines()}
    assert "TZ=Europe/Paris" in outcome.stdout and "GREETING=hello" in outcome.stdout
    assert "sk-host-provider-key" not in outcome.stdout
    assert "gateway-token-on-host" not in outcome.stdout
    assert "HOME=/work" in outcome.stdout  # the image's, not the host's /root
    assert not names & {"OPENAI_API_KEY", "BEAMCLAW_GATEWAY_TOKEN"}


async def test_filling_tmp_or_memory_hurts_only_the_script(
    make_sandbox: Callable[..., Any],
) -> None:
    sandbox: Sandbox = await make_sandbox(tmp_size_mb=8, memory_mb=64)
    fill = await sandbox.run(KEY, "head -c 20000000 /dev/zero > /tmp/big", "bash", 20)
    assert fill.exit_status != 0 and "No space left on device" in fill.stderr
    hog = await sandbox.run(
        KEY, "x = bytearray(512 * 1024 * 1024)\nprint('ALLOCATED')", "python", 20
    )
    assert hog.exit_status != 0 and "ALLOCATED" not in hog.stdout
    after = await sandbox.run(KEY, "rm -f /tmp/big; echo fine", "bash", 10)
    assert after.stdout == "fine\n"
