"""``/api/methods``, ``/api/build`` and ``/api/jobs``: the methods, building them in the
background, and the live progress of builds and ingestions."""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from fastapi import APIRouter, Depends, HTTPException
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from ...methods.base import available_methods, get_method
from ...methods.capabilities import GraphBrowse, label_of, modes_of, ordered_methods, scoped
from ..jobs import Job, LiveProgress, json_scalar
from ..state import ServerState, server_state

log = logging.getLogger(__name__)
router = APIRouter(prefix="/api", tags=["build"])


def method_modes(name: str) -> list[str]:
    """Retrieval modes a method accepts as ``mode=`` (``methods.capabilities.HasModes``)."""
    return list(modes_of(name))


def method_status(state: ServerState) -> dict[str, dict[str, Any]]:
    """Each method's build status; a method whose status fails reports the error instead."""
    ctx = state.ws.context()
    out: dict[str, dict[str, Any]] = {}
    for name in ordered_methods():
        try:
            out[name] = dict(get_method(name).status(ctx))
        except Exception as exc:  # one broken method must not hide the others
            log.exception("status of %s failed", name)
            out[name] = {"error": f"{type(exc).__name__}: {exc}"}
    return out


def require_method(name: str) -> str:
    if name not in available_methods():
        raise HTTPException(
            status_code=400, detail=f"unknown method {name!r}; available: {', '.join(ordered_methods())}"
        )
    return name


@router.get(
    "/methods",
    summary="Methods that can be built and asked, with their labels, modes and whether they answer "
    "from chosen documents (scoped)",
)
def list_methods() -> list[dict[str, Any]]:
    return [
        {
            "name": n,
            "label": label_of(n),
            "modes": method_modes(n),
            "graph": isinstance(get_method(n), GraphBrowse),
            "scoped": scoped(n),
        }
        for n in ordered_methods()
    ]


class BuildRequest(BaseModel):
    method: str = Field("kg4vd", description="a registered method name (see /api/methods)")


def build_job(state: ServerState, method: str):
    """The job body: build ``method`` and keep its report (scalar stats only)."""

    def run(progress: LiveProgress) -> dict[str, Any]:
        report = state.ws.build(method, progress=progress)
        data = dataclasses.asdict(report)
        data["stats"] = {k: json_scalar(v) for k, v in report.stats.items() if not isinstance(v, (dict, list))}
        return data

    return run


@router.post("/build", status_code=202, summary="Start building a method in the background")
def start_build(body: BuildRequest, state: ServerState = Depends(server_state)) -> JSONResponse:
    """Queues the build (jobs run one at a time). A build of the same method that is already
    queued or running is returned instead of starting a second one (``created`` false)."""
    method = require_method(body.method)
    job, created = state.jobs.submit(
        "build",
        f"build:{method}",
        f"build {label_of(method)}",
        build_job(state, method),
        method=method,
    )
    return JSONResponse({**state.jobs.snapshot(job), "created": created}, status_code=202)


@router.get("/build", summary="Build status per method with the live progress of its latest build")
def build_status(state: ServerState = Depends(server_state)) -> dict[str, Any]:
    """``methods``: per method its stored status and ``job``, the latest build job started by
    this server (live progress: pages done/total, rounds, calls, tokens, ETA) or null."""
    latest: dict[str, Job] = {}
    for job in state.jobs.jobs():
        if job.kind == "build" and job.method:
            latest[job.method] = job
    methods = method_status(state)
    for name, info in methods.items():
        built = latest.get(name)
        info["job"] = state.jobs.snapshot(built) if built else None
    return {"methods": methods, "busy": state.jobs.busy()}


@router.get("/jobs", summary="Builds and ingestions started by this server, newest first")
def list_jobs(state: ServerState = Depends(server_state)) -> list[dict[str, Any]]:
    return [state.jobs.snapshot(j) for j in reversed(state.jobs.jobs())]


@router.get("/jobs/{job_id}", summary="One job with its live progress")
def get_job(job_id: str, state: ServerState = Depends(server_state)) -> dict[str, Any]:
    job = state.jobs.get(job_id)
    if job is None:
        raise HTTPException(status_code=404, detail=f"no job {job_id!r} (jobs are kept while the server runs)")
    return state.jobs.snapshot(job)
