"""``beamclaw skills list|status|show|install``: skills an agent can use (docs/skills.md).

Skills are discovered bundled → ``$BEAMCLAW_HOME/skills`` → the agent's own, later
overriding earlier; eligibility checks binaries, environment variables and the OS on
this machine. ``install`` runs a skill's install specs (apt/brew/npm/pip/download) until
one succeeds, with a spinner on a terminal; exit code 1 when none did.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import typer

from beamclaw_cli.errors import BeamclawCliError

if TYPE_CHECKING:
    from beamclaw_core.skills import Discovery, Eligibility, InstallReport, Skill

_JSON = typer.Option(False, "--json", help="Machine-readable output.")
_AGENT = typer.Option(
    None, "--agent", "-a", help="Include this agent's own skills (default: [core] default_agent)."
)


class SkillNotFoundError(BeamclawCliError):
    pass


def _agent(agent: str | None) -> str:
    if agent is not None:
        return agent
    from beamclaw_gateway import load_config

    return load_config(None).settings.core.default_agent


def _discover(agent: str | None) -> Discovery:
    from beamclaw_core.skills import discover_skills

    return discover_skills(_agent(agent))


def _find(discovery: Discovery, name: str) -> Skill:
    skill = discovery.get(name)
    if skill is None:
        known = ", ".join(s.name for s in discovery.skills) or "none"
        raise SkillNotFoundError(f"no skill {name!r} (known: {known})")
    return skill


def skill_json(skill: Skill, verdict: Eligibility) -> dict[str, Any]:
    return {
        "name": skill.name,
        "description": skill.description,
        "source": skill.source.value,
        "path": str(skill.path) if skill.path else None,
        "emoji": skill.metadata.emoji,
        "always": skill.metadata.always,
        "eligible": verdict.eligible,
        "reasons": list(verdict.reasons),
        "install": [s.key for s in skill.metadata.install],
    }


def report_json(report: InstallReport) -> dict[str, Any]:
    return {
        "skill": report.skill,
        "ok": report.ok,
        "message": report.message,
        "attempts": [
            {
                "spec": a.spec.key,
                "ok": a.ok,
                "command": list(a.command),
                "exit_status": a.exit_status,
                "skipped": a.skipped,
                "timed_out": a.timed_out,
                "output": a.output,
            }
            for a in report.attempts
        ],
    }


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="Discover, check and install skills.", no_args_is_help=True)
    app.add_typer(group, name="skills")

    @group.command("list")
    def list_(agent: str | None = _AGENT, as_json: bool = _JSON) -> None:
        """List the skills visible to an agent, with whether each can be used here."""
        from beamclaw_core.skills import check_eligibility

        discovery = _discover(agent)
        rows = [(s, check_eligibility(s)) for s in discovery.skills]
        if as_json:
            print(json.dumps([skill_json(s, v) for s, v in rows], indent=2))
            return
        if not rows:
            print("no skills found")
        for skill, verdict in rows:
            mark = "ok " if verdict.eligible else "-- "
            print(f"{mark} {skill.name:<22} {skill.source.value:<8} {skill.description}")

    @group.command("status")
    def status(agent: str | None = _AGENT, as_json: bool = _JSON) -> None:
        """Eligibility of every skill (what is missing), plus skipped and overridden files."""
        from beamclaw_core.skills import check_eligibility

        discovery = _discover(agent)
        verdicts = [check_eligibility(s) for s in discovery.skills]
        if as_json:
            print(
                json.dumps(
                    {
                        "agent": _agent(agent),
                        "eligible": sum(v.eligible for v in verdicts),
                        "total": len(verdicts),
                        "skills": [skill_json(v.skill, v) for v in verdicts],
                        "skipped": [
                            {"path": str(s.path), "reason": s.reason} for s in discovery.skipped
                        ],
                        "overridden": [
                            {"name": s.name, "source": s.source.value, "path": str(s.path)}
                            for s in discovery.overridden
                        ],
                    },
                    indent=2,
                )
            )
            return
        eligible = sum(v.eligible for v in verdicts)
        print(f"{eligible} of {len(verdicts)} skills eligible for agent {_agent(agent)}")
        for v in verdicts:
            if v.eligible:
                print(f"[ok]   {v.skill.name}")
            else:
                hint = " (try `beamclaw skills install`)" if v.skill.metadata.install else ""
                print(f"[warn] {v.skill.name}: {'; '.join(v.reasons)}{hint}")
        for s in discovery.skipped:
            print(f"[fail] {s.path}: {s.reason}")
        for s in discovery.overridden:
            print(f"[info] {s.name} ({s.source.value}) is overridden by a later source")

    @group.command("show")
    def show(
        name: str = typer.Argument(..., help="Skill name."),
        agent: str | None = _AGENT,
        as_json: bool = _JSON,
    ) -> None:
        """Show a skill: metadata, requirements, install specs and its instructions."""
        from beamclaw_core.skills import check_eligibility

        skill = _find(_discover(agent), name)
        verdict = check_eligibility(skill)
        if as_json:
            data = skill_json(skill, verdict)
            data["homepage"] = skill.homepage
            data["requires"] = skill.metadata.requires.model_dump(mode="json")
            data["install"] = [
                s.model_dump(mode="json", exclude_none=True) for s in skill.metadata.install
            ]
            data["body"] = skill.content()
            print(json.dumps(data, indent=2, ensure_ascii=False))
            return
        title = f"{skill.metadata.emoji} {skill.name}" if skill.metadata.emoji else skill.name
        print(f"# {title}  ({skill.source.value}: {skill.path})")
        print(skill.description)
        if skill.homepage:
            print(f"homepage: {skill.homepage}")
        state = "eligible" if verdict.eligible else "not eligible: " + "; ".join(verdict.reasons)
        print(state)
        for spec in skill.metadata.install:
            print(f"install [{spec.key}]: {spec.describe()}")
        print()
        print(skill.content().rstrip())

    @group.command("install")
    def install(
        name: str = typer.Argument(..., help="Skill name."),
        agent: str | None = _AGENT,
        spec: str | None = typer.Option(None, "--spec", help="Only this install spec (id/kind)."),
        as_json: bool = _JSON,
        timeout: float = typer.Option(600.0, "--timeout", help="Seconds per install command."),
    ) -> None:
        """Install what a skill needs (its install specs, in order, until one works)."""
        from beamclaw_cli.output import progress
        from beamclaw_core.skills import SkillInstaller, check_eligibility

        skill = _find(_discover(agent), name)
        installer = SkillInstaller(timeout_seconds=timeout)
        with progress(f"installing requirements of {skill.name}…"):
            import asyncio

            report = asyncio.run(installer.install(skill, spec))
        if as_json:
            print(json.dumps(report_json(report), indent=2))
        else:
            print(report.describe())
            if report.ok:
                verdict = check_eligibility(skill)
                if verdict.eligible:
                    print(f"{skill.name} is now eligible")
                else:
                    print(f"{skill.name} is still not eligible: {'; '.join(verdict.reasons)}")
        if not report.ok:
            raise typer.Exit(1)
