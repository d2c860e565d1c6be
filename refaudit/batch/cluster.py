"""`refaudit batch --engine ray`: the batch on Ray actors, one rate limiter per live source.

One actor per worker runs `audit_one` on each input sent to it, as the local
engine does. Before each request a worker's source clients ask their source's
`RateLimiter` actor for a slot (the `shared_pacer` hook of
`refaudit.sources.pacing`), so however many workers and machines there are, the
cluster as a whole keeps to each API's published rate as one polite client. A
worker opens its own mirror connection (`--mirror`): SQLite on a shared file
system, or PostgreSQL, ideally a read replica per group of workers.
"""

from __future__ import annotations

import asyncio
import re
import socket
import time
from collections import deque
from collections.abc import Iterator
from typing import Any

from refaudit.batch.job import BatchLine, audit_one
from refaudit.collector import collect_less
from refaudit.config import Settings
from refaudit.errors import RefauditError
from refaudit.sources import registry

LIMITER_PREFIX = "refaudit-limiter-"


class RateLimiter:
    """One source's rate across a cluster: a generic cell-rate algorithm per pool rate.

    `reserve` books the next slot and returns how long the caller must wait for it;
    a burst of `burst` requests may go at once, then one per 1/rps seconds.
    """

    def __init__(self) -> None:
        self._due: dict[tuple[float, int], float] = {}
        self.reserved = 0

    def reservations(self) -> int:
        """How many requests this limiter has paced (for `status` and tests)."""
        return self.reserved

    def reserve(self, rps: float, burst: int) -> float:
        self.reserved += 1
        now = time.monotonic()
        interval = 1.0 / rps
        due = max(self._due.get((rps, burst), now), now)
        wait = max(0.0, due - (max(burst, 1) - 1) * interval - now)
        self._due[(rps, burst)] = due + interval
        return wait


def ray_module() -> Any:
    """The `ray` package, or a clear error naming the extra that installs it."""
    try:
        import ray
    except ImportError as exc:
        raise RefauditError(
            "the Ray engine needs Ray", hint='pip install "refaudit-cli[ray]"'
        ) from exc
    return ray


#: The Ray a batch starts for itself runs its workers at the command's own priority, as
#: the local engine's are: Ray lowers them to nice 15 by default, behind every other
#: process on the machine, so on a busy one a second worker added next to nothing.
OWN_RAY: dict[str, Any] = {"_system_config": {"worker_niceness": 0}}


def run_on_ray(
    jobs: list[tuple[str, str]], settings: Settings, workers: int, address: str | None
) -> Iterator[BatchLine]:
    """Audit `jobs` on `workers` Ray actors, an input at a time each; yield lines as they end.

    Ray is started (or joined) before this returns, so a cluster that cannot be reached
    fails the command before any results file is begun.
    """
    ray = ray_module()
    started_here = not ray.is_initialized()
    if started_here:
        _start_or_join(ray, address, workers)
    return _audit_on_ray(ray, jobs, settings, workers, stop=started_here)


def _audit_on_ray(
    ray: Any, jobs: list[tuple[str, str]], settings: Settings, workers: int, *, stop: bool
) -> Iterator[BatchLine]:
    auditors: list[Any] = []
    try:
        live = [name for name in settings.sources if name in registry.SOURCE_NAMES]
        actor = ray.remote(num_cpus=0)(RateLimiter)
        limiters = {
            name: actor.options(name=LIMITER_PREFIX + name, get_if_exists=True).remote()
            for name in live
        }
        # A worker that dies (its node lost) comes back, and the input it had is sent again.
        auditor = ray.remote(num_cpus=1, max_restarts=3, max_task_retries=3)(Auditor)
        auditors = [auditor.remote(settings, limiters) for _ in range(max(1, workers))]
        # Each input goes to the first worker that is free, never queued behind a busy
        # one: a long input then holds up nothing but itself.
        queue, idle = deque(jobs), deque(auditors)
        running: dict[Any, Any] = {}
        while queue or running:
            while queue and idle:
                worker = idle.popleft()
                running[worker.audit.remote(*queue.popleft())] = worker
            finished, _ = ray.wait(list(running), num_returns=1)
            idle.append(running.pop(finished[0]))
            yield ray.get(finished[0])
    finally:
        for worker in auditors:
            ray.kill(worker)
        if stop:
            ray.shutdown()


def _start_or_join(ray: Any, address: str | None, workers: int) -> None:
    """Start a Ray of `workers` CPUs here, or join the cluster at `address`.

    Without an address Ray itself would join the last cluster `ray start` made on
    this machine (or `RAY_ADDRESS`), even one long stopped: "local" always starts one.
    """
    if address:
        _refuse_silent_address(address)
    try:
        ray.init(
            address=address or "local",
            num_cpus=None if address else workers,
            include_dashboard=False,
            logging_level="warning",
            log_to_driver=False,
            **({} if address else OWN_RAY),
        )
    except ConnectionError as exc:
        if not address:
            raise RefauditError(f"could not start Ray on this machine: {exc}") from exc
        # A cluster that wants a token and a client without one fail alike: Ray says
        # only that it could not connect.
        raise RefauditError(f"could not join the Ray cluster at {address}", hint=AUTH_HINT) from exc


def _refuse_silent_address(address: str, timeout_s: float = 5.0) -> None:
    """Fail at once when nothing listens at `host:port`: Ray would retry for a minute."""
    found = re.fullmatch(r"(?:ray://)?\[?([^\[\]/]+?)\]?:(\d+)", address.strip())
    if not found:
        return  # "auto" and the like: Ray finds the cluster itself
    host, port = found.group(1), int(found.group(2))
    hint = "start the cluster there (`ray start --head`) or name its head's address"
    if not 0 < port < 65536:
        raise RefauditError(f"the Ray address {address} names no TCP port", hint=hint)
    try:
        socket.create_connection((host, port), timeout=timeout_s).close()
    except (OSError, ValueError) as exc:  # ValueError: a name no resolver takes (too long)
        reason = getattr(exc, "strerror", None) or exc
        raise RefauditError(
            f"nothing answers at the Ray address {address} ({reason})", hint=hint
        ) from None


#: Ray turns token authentication on for a head that finds a token, but never for a
#: client given an address: both must say so, with the same token.
AUTH_HINT = (
    "is `ray start` running there? If the cluster uses token authentication, set "
    "RAY_AUTH_MODE=token here too, with its token in RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH "
    "or ~/.ray/auth_token"
)


class Auditor:
    """One Ray worker's process, auditing the inputs sent to it one after another.

    The process stays for the whole batch, so what its first input built (imports,
    the LTWA abbreviator, the matchers' caches) serves every later one, and the
    settings cross to it once.
    """

    def __init__(self, settings: Settings, limiters: dict[str, Any]) -> None:
        collect_less()
        self._settings = settings
        self._limiters = limiters

    def audit(self, source: str, report_file: str) -> BatchLine:
        return _audit_task(source, self._settings, report_file, self._limiters)


def _audit_task(
    source: str, settings: Settings, report_file: str, limiters: dict[str, Any]
) -> BatchLine:
    """One input on a Ray worker, its requests paced by the shared limiters."""
    from refaudit.sources.pacing import shared_pacer

    async def pace(name: str, rps: float, burst: int) -> None:
        limiter = limiters.get(name)
        if limiter is not None:
            await asyncio.sleep(await limiter.reserve.remote(rps, burst))

    shared_pacer.set(pace)
    return audit_one(source, settings, report_file)
