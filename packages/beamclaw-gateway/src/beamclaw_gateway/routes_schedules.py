"""``/api/schedules``: durable scheduled jobs (create, list, get, delete, pause, resume),
token-guarded.

A job is created with ``prompt`` and exactly one of ``every_seconds``, ``at`` (ISO-8601
with offset), ``cron`` (5 fields, in ``timezone``) or ``random_in``
(``{"between": "HH:MM-HH:MM"}``). Every refusal is a 422 in the API's error shape naming
the field (``param``); an unknown id is 404; with ``[scheduler] enabled = false`` every
route answers 503 ``scheduler_disabled``. Times are ISO-8601 in UTC.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from beamclaw_gateway.auth_scheme import require_token
from beamclaw_gateway.errors import ApiError
from beamclaw_gateway.openai_models import error_responses
from beamclaw_gateway.services import services_of
from beamclaw_scheduler import (
    InvalidScheduleError,
    Job,
    JobRequest,
    Scheduler,
    UnknownJobError,
    describe,
)

router = APIRouter(prefix="/api", tags=["schedules"], dependencies=[Depends(require_token)])

JobId = Path(min_length=1, max_length=64, description="A scheduled job's id.")


class ScheduleCreate(BaseModel):
    """A job to schedule."""

    model_config = ConfigDict(extra="forbid")

    prompt: str = Field(min_length=1, max_length=16_000)
    every_seconds: int | None = Field(default=None, ge=1)
    at: str | None = Field(default=None, max_length=64)
    cron: str | None = Field(default=None, max_length=256)
    random_in: dict[str, Any] | None = None
    timezone: str | None = Field(default=None, max_length=64)
    agent_id: str | None = Field(default=None, min_length=1, max_length=128)
    session_id: str | None = Field(default=None, min_length=1, max_length=128)
    session: Literal["shared", "isolated"] | None = None
    deliver_to: str | None = Field(default=None, min_length=1, max_length=320)
    approval_mode: Literal["deny", "wait"] | None = None
    max_errors: int | None = Field(default=None, ge=1, le=1000)


class ScheduleOut(BaseModel):
    id: str
    prompt: str
    kind: str
    next_run_at: str | None
    last_run_at: str | None
    fire_count: int
    error_count: int
    status: str
    last_error: str | None
    max_errors: int
    agent_id: str
    user_id: str
    session: str
    session_id: str | None
    deliver_to: str
    approval_mode: str
    created_at: str
    every_seconds: int | None = None
    at: str | None = None
    cron: str | None = None
    timezone: str | None = None
    random_in: dict[str, Any] | None = None

    @classmethod
    def of(cls, job: Job) -> ScheduleOut:
        return cls(
            id=job.id,
            prompt=job.prompt,
            kind=job.kind,
            next_run_at=_iso(job.next_run_at),
            last_run_at=_iso(job.last_run_at),
            fire_count=job.fire_count,
            error_count=job.error_count,
            status=job.status,
            last_error=job.last_error,
            max_errors=job.max_errors,
            agent_id=job.agent_id,
            user_id=job.user_id,
            session=job.session_mode,
            session_id=job.session_id,
            deliver_to=job.deliver_to,
            approval_mode=job.approval_mode,
            created_at=_iso(job.created_at) or "",
            **describe(job.spec),  # pyright: ignore[reportArgumentType]
        )


class ScheduleList(BaseModel):
    schedules: list[ScheduleOut]


def _iso(instant: float | None) -> str | None:
    return None if instant is None else datetime.fromtimestamp(instant, UTC).isoformat()


def _scheduler(request: Request) -> Scheduler:
    scheduler = services_of(request).scheduler
    if scheduler is None:
        raise ApiError(
            503,
            "the scheduler is off ([scheduler] enabled = false)",
            type="api_error",
            code="scheduler_disabled",
        )
    return scheduler


def _invalid(exc: InvalidScheduleError) -> ApiError:
    return ApiError(422, exc.message, param=exc.field, code="invalid_schedule")


def _unknown(exc: UnknownJobError) -> ApiError:
    return ApiError(404, str(exc), code="schedule_not_found", param="id")


@router.post(
    "/schedules",
    status_code=201,
    response_model=ScheduleOut,
    responses=error_responses(401, 422, 429, 503),
)
async def create_schedule(request: Request, body: ScheduleCreate) -> ScheduleOut:
    """Schedule a job; 201 with the job (its ``id``, ``next_run_at``)."""
    scheduler = _scheduler(request)
    try:
        job = await scheduler.create(JobRequest(**body.model_dump()))
    except InvalidScheduleError as exc:
        raise _invalid(exc) from exc
    return ScheduleOut.of(job)


@router.get("/schedules", response_model=ScheduleList, responses=error_responses(401, 429, 503))
async def list_schedules(
    request: Request, agent_id: str | None = Query(default=None, min_length=1, max_length=128)
) -> ScheduleList:
    """Every job (of one agent), oldest first."""
    jobs = await _scheduler(request).list(agent_id=agent_id)
    return ScheduleList(schedules=[ScheduleOut.of(j) for j in jobs])


@router.get(
    "/schedules/{job_id}", response_model=ScheduleOut, responses=error_responses(401, 404, 429, 503)
)
async def get_schedule(request: Request, job_id: str = JobId) -> ScheduleOut:
    try:
        return ScheduleOut.of(await _scheduler(request).get(job_id))
    except UnknownJobError as exc:
        raise _unknown(exc) from exc


@router.delete(
    "/schedules/{job_id}", status_code=204, responses=error_responses(401, 404, 429, 503)
)
async def delete_schedule(request: Request, job_id: str = JobId) -> Response:
    """Delete the job: it never fires again (a fire already running finishes)."""
    try:
        await _scheduler(request).cancel(job_id)
    except UnknownJobError as exc:
        raise _unknown(exc) from exc
    return Response(status_code=204)


@router.post(
    "/schedules/{job_id}/pause",
    response_model=ScheduleOut,
    responses=error_responses(401, 404, 422, 429, 503),
)
async def pause_schedule(request: Request, job_id: str = JobId) -> ScheduleOut:
    """Stop firing until resumed."""
    try:
        return ScheduleOut.of(await _scheduler(request).pause(job_id))
    except UnknownJobError as exc:
        raise _unknown(exc) from exc
    except InvalidScheduleError as exc:
        raise _invalid(exc) from exc


@router.post(
    "/schedules/{job_id}/resume",
    response_model=ScheduleOut,
    responses=error_responses(401, 404, 422, 429, 503),
)
async def resume_schedule(request: Request, job_id: str = JobId) -> ScheduleOut:
    """Fire again from the next time after now; error count reset."""
    try:
        return ScheduleOut.of(await _scheduler(request).resume(job_id))
    except UnknownJobError as exc:
        raise _unknown(exc) from exc
    except InvalidScheduleError as exc:
        raise _invalid(exc) from exc
