"""``beamclaw scheduler list|add|cancel|pause|resume``: the running gateway's scheduled jobs.

Jobs fire in the gateway, so every command goes through its ``/api/schedules``; without a
running gateway the command says so (``beamclaw start``) instead of changing a database
nobody runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from beamclaw_cli.errors import BeamclawCliError
from beamclaw_cli.home_access import gateway_request

_CONFIG = typer.Option(None, "--config", "-c", help="Config file.", exists=True, dir_okay=False)


def _call(config: Path | None, method: str, path: str, body: Any = None) -> Any:
    from beamclaw_cli.daemon import running_pid
    from beamclaw_obs import beamclaw_home

    pid = running_pid(beamclaw_home())
    if pid is None:
        raise BeamclawCliError(
            "no gateway is running: scheduled jobs live in it (beamclaw start, or beamclaw serve)"
        )
    response = gateway_request(config, method, path, pid, body)
    if response.status_code >= 400:
        error = response.json().get("error", {})
        param = f" ({error['param']})" if error.get("param") else ""
        raise BeamclawCliError(f"{error.get('message', response.text)}{param}")
    return None if response.status_code == 204 else response.json()


def _when(job: dict[str, Any]) -> str:
    kind = job["kind"]
    if kind == "every":
        return f"every {job['every_seconds']}s"
    if kind == "at":
        return f"at {job['at']}"
    if kind == "cron":
        return f"cron {job['cron']!r} {job['timezone']}"
    return f"random {job['random_in']['between']} {job['timezone']}"


def _line(job: dict[str, Any]) -> str:
    prompt = job["prompt"] if len(job["prompt"]) <= 40 else job["prompt"][:39] + "…"
    return (
        f"{job['id']}  {job['status']:<9} {_when(job):<32} next {job['next_run_at'] or '-'}  "
        f"fired {job['fire_count']}  errors {job['error_count']}  → {job['deliver_to']}  "
        f"{prompt!r}"
    )


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        help="Scheduled jobs of the running gateway (list, add, cancel, pause, resume).",
        no_args_is_help=True,
    )
    app.add_typer(group, name="scheduler")

    @group.command("list")
    def list_jobs(
        agent: str | None = typer.Option(None, "--agent", help="Only this agent's jobs."),
        as_json: bool = typer.Option(False, "--json", help="Print JSON."),
        config: Path | None = _CONFIG,
    ) -> None:
        """Every job with its status, next fire and counts."""
        path = "/api/schedules" + (f"?agent_id={agent}" if agent else "")
        jobs = _call(config, "GET", path)["schedules"]
        if as_json:
            print(json.dumps(jobs, indent=2))
        elif not jobs:
            print("no scheduled jobs")
        else:
            for job in jobs:
                print(_line(job))

    @group.command("add")
    def add(
        prompt: str = typer.Argument(..., help="What the agent is told when the job fires."),
        every: int | None = typer.Option(None, "--every", help="Repeat every N seconds."),
        at: str | None = typer.Option(None, "--at", help="Once, at an ISO-8601 time with offset."),
        cron: str | None = typer.Option(None, "--cron", help="5-field cron expression."),
        random: str | None = typer.Option(
            None, "--random", help="Once a day at a random time in HH:MM-HH:MM."
        ),
        timezone: str | None = typer.Option(None, "--timezone", help="IANA zone (cron, random)."),
        agent: str | None = typer.Option(None, "--agent", help="Agent (default: the default)."),
        deliver_to: str | None = typer.Option(
            None, "--deliver-to", help="silent, telegram:<chat>, webhook:<name>…"
        ),
        session_id: str | None = typer.Option(
            None, "--session-id", help="Run in this session (default: a session of its own)."
        ),
        config: Path | None = _CONFIG,
    ) -> None:
        """Schedule a job; prints its id."""
        body: dict[str, Any] = {"prompt": prompt}
        optional = {
            "every_seconds": every,
            "at": at,
            "cron": cron,
            "random_in": {"between": random} if random is not None else None,
            "timezone": timezone,
            "agent_id": agent,
            "deliver_to": deliver_to,
            "session_id": session_id,
        }
        body.update({k: v for k, v in optional.items() if v is not None})
        job = _call(config, "POST", "/api/schedules", body)
        print(f"scheduled {job['id']}: {_when(job)}, next {job['next_run_at']}")

    @group.command("cancel")
    def cancel(job_id: str = typer.Argument(..., help="The job."), config: Path | None = _CONFIG):
        """Delete a job: it never fires again."""
        _call(config, "DELETE", f"/api/schedules/{job_id}")
        print(f"cancelled {job_id}")

    @group.command("pause")
    def pause(job_id: str = typer.Argument(..., help="The job."), config: Path | None = _CONFIG):
        """Stop firing until resumed."""
        job = _call(config, "POST", f"/api/schedules/{job_id}/pause")
        print(f"paused {job['id']}")

    @group.command("resume")
    def resume(job_id: str = typer.Argument(..., help="The job."), config: Path | None = _CONFIG):
        """Fire again from the next time after now (errors forgotten)."""
        job = _call(config, "POST", f"/api/schedules/{job_id}/resume")
        print(f"resumed {job['id']}: next {job['next_run_at']}")
