"""What ``scale.py`` measures while a phase runs: the process tree's memory and CPU (``Sampler``)
and the latency of ``ls``/``status`` polled from a process of its own (``Poller``)."""

from __future__ import annotations

import multiprocessing
import os
import resource
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

try:
    import psutil
except ImportError:  # RSS and CPU then come from getrusage (scale.py's module doc)
    psutil = None

POLL_S, SAMPLE_S = 0.5, 0.25
SLOW_MS = 200  # issue 14: ls/status must answer within this while a build runs
MB = 1024 * 1024


def proportional(proc, rss: int) -> int:
    """``proc``'s proportional set size (Linux: each shared page split among the processes
    mapping it); its ``rss`` where that cannot be read (another user's process, no PSS on
    this system), so a process never drops out of the RSS sum for want of its PSS."""
    try:
        return int(getattr(proc.memory_full_info(), "pss", rss))
    except psutil.Error:
        return rss


class Sampler(threading.Thread):
    """Peak summed RSS and CPU seconds of this process tree and the ``servers`` (module doc)."""

    def __init__(self, servers: list[int], exclude: set[int]) -> None:
        super().__init__(daemon=True)
        self.servers, self.exclude = servers, exclude
        self.halt = threading.Event()
        self.rss = self.main = self.pss = 0
        self.pss_top: list[str] = []  # the largest processes at the PSS peak
        self.base: dict[int, float] | None = None
        self.last: dict[int, float] = {}

    def processes(self) -> list:
        procs = [psutil.Process()]
        for pid in self.servers:
            try:
                procs.append(psutil.Process(pid))
            except psutil.Error:
                pass
        tree = procs + [child for p in procs for child in p.children(recursive=True)]
        return [p for p in tree if p.pid not in self.exclude]

    def sample(self) -> None:
        rss, pss, cpu, parts = 0, 0, {}, []
        for proc in self.processes():
            try:
                with proc.oneshot():
                    mem, times, name = proc.memory_info().rss, proc.cpu_times(), proc.name()
            except psutil.Error:
                continue
            own = proportional(proc, mem)
            rss += mem
            pss += own
            parts.append((own, name))
            cpu[proc.pid] = times.user + times.system
            if proc.pid == os.getpid():
                self.main = max(self.main, mem)
        self.rss = max(self.rss, rss)
        if pss > self.pss:
            self.pss = pss
            self.pss_top = [f"{name} {own / MB:.0f}" for own, name in sorted(parts, reverse=True)[:6]]
        if self.base is None:
            self.base = dict(cpu)
        self.last.update(cpu)

    def run(self) -> None:
        while not self.halt.is_set():
            self.sample()
            self.halt.wait(SAMPLE_S)

    def finish(self) -> dict[str, float]:
        self.halt.set()
        self.join()
        self.sample()
        cpu = sum(t - (self.base or {}).get(pid, 0.0) for pid, t in self.last.items())
        return {
            "cpu_s": cpu,
            "rss_mb": self.rss / MB,
            "main_mb": self.main / MB,
            "pss_mb": self.pss / MB,
            "pss_top": self.pss_top,
        }


def rusage_memory() -> dict[str, float]:
    own, children = (
        resource.getrusage(who).ru_maxrss / 1024 for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    )
    return {"cpu_s": float("nan"), "rss_mb": own + children, "main_mb": own}


def poll(root: str, overrides: dict, conn, nice: int | None = None) -> None:
    """In its own process: between "start" and "stop", time ``documents()`` and ``status()``
    every POLL_S seconds and send the times back; at niceness ``nice`` when given."""
    from docgraph import Workspace

    if nice is not None:
        try:
            os.setpriority(os.PRIO_PROCESS, 0, nice)
        except PermissionError:  # lowering the niceness needs privileges
            print(
                f"the ls/status poller stays at niceness {os.getpriority(os.PRIO_PROCESS, 0)} (asked for {nice}: "
                "not permitted)",
                file=sys.stderr,
                flush=True,
            )

    with Workspace(root, overrides=overrides) as ws:
        ws.documents(), ws.status()  # cold: imports, connections
        conn.send("ready")
        while conn.recv() == "start":
            times: dict[str, list[float]] = {"ls": [], "status": []}
            while True:
                for key, call in (("ls", ws.documents), ("status", ws.status)):
                    started = time.perf_counter()
                    call()
                    times[key].append(time.perf_counter() - started)
                if conn.poll(POLL_S):
                    break
            conn.recv()  # "stop"
            conn.send(times)


class Poller:
    """One polling process per backend (module doc), like a long-running web app's."""

    def __init__(self, root: Path, overrides: dict, nice: int | None = None) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        readonly = {k: v for k, v in overrides.items() if k != "ray"}
        self.process = ctx.Process(target=poll, args=(str(root), readonly, child, nice), daemon=True)
        self.process.start()
        if not (self.conn.poll(300) and self.conn.recv() == "ready"):
            raise RuntimeError("the ls/status poller did not start; its error is above")

    def window(self, work: Callable[[], Any]) -> dict[str, list[float]]:
        """Run ``work`` while polling; [p50, p95, max] ms of ``ls`` and ``status``."""
        self.conn.send("start")
        try:
            work()
        finally:
            self.conn.send("stop")
        times = self.conn.recv() if self.conn.poll(300) else {}
        out: dict[str, list[float]] = {f"{key}_ms": quantiles(values) for key, values in times.items()}
        out.update(
            {f"{key}_slow": [sum(v * 1000 > SLOW_MS for v in values), len(values)] for key, values in times.items()}
        )
        return out

    def close(self) -> None:
        self.conn.send("quit")
        self.process.join(30)


def quantiles(seconds: list[float]) -> list[float]:
    """[p50, p95, max] in ms ([] without samples)."""
    if not seconds:
        return []
    ms = np.asarray(seconds) * 1000
    return [float(np.percentile(ms, 50)), float(np.percentile(ms, 95)), float(ms.max())]


def measured(poller: Poller, servers: list[int], work: Callable[[], Any]) -> dict[str, Any]:
    """Run ``work`` while sampling memory/CPU and polling ls/status; its measurements."""
    sampler = Sampler(servers, {poller.process.pid}) if psutil else None
    if sampler:
        sampler.start()
    wall: list[float] = []

    def timed() -> None:
        started = time.perf_counter()
        work()
        wall.append(time.perf_counter() - started)

    load = os.getloadavg()[0]
    latencies = poller.window(timed)
    return {
        "wall_s": wall[0],
        **(sampler.finish() if sampler else rusage_memory()),
        **latencies,
        "load": (load + os.getloadavg()[0]) / 2,
    }
