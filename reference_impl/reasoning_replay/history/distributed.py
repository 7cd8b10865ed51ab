"""``validate --scheduler ADDRESS`` and ``--workers N``: the files of a run validated on a Dask
cluster (SPEC §10.2), with the findings, counts and reports of a local run.

Dask schedules; this module only says what a task is and puts the results in order. The walk,
the permission policy and fixes, the totals and the report stay in the command's process
(:func:`reasoning_replay.history.validate_run.run_validate`); each task validates a batch of files
on a worker (:func:`validate_batch`, the same :func:`~reasoning_replay.history.file_results.
validate_target` a local run calls), reading them there, and returns their results: findings and
counts, never a file's bytes. The client keeps at most :attr:`DaskEngine.window` batches between
the walk and the report, takes results as they complete (``distributed.as_completed``) and yields
them in the walk's order, so its memory holds a window of results and workers' memory one batch
of files each, whatever the size of the store.

Files are named to workers as the walk found them: URLs, and local paths made absolute (a
worker's working directory is its own; local paths and ``file://`` URLs need a filesystem every
worker sees at the same path). The report names them as a local run does.

A worker that dies (a crash, its memory limit) is replaced, and Dask runs its tasks again
elsewhere; a task whose workers died more often than the scheduler's
``distributed.scheduler.allowed-failures`` (default 3) fails with ``KilledWorker``. A worker's
death fails every task it held, so a failed batch is no evidence against each of its files:
once nothing else of the run is in flight, each of its files is validated again, alone, one at
a time. A file whose worker still dies is reported ``history_unreadable`` (SPEC H3: the file
could not be read; an error, so the run exits 1), with a detail saying so: never lost, never a
pass. No new code is needed: which process dies is no property of the file a vector could pin
(SPEC §18.1), and a file a validator could not get through is, to its user, a file it could not
read.

Every task returns the version of the package that ran it; a worker whose version differs from
the command's ends the run (exit 2), since its findings need not be the same.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Final

from reasoning_replay.history.file_results import (
    FileResult,
    Target,
    unreadable_result,
    validate_target,
)
from reasoning_replay.history.store_urls import MissingExtraError
from reasoning_replay.history.validate_jobs import file_batches
from reasoning_replay.record.providers import ProviderNames
from reasoning_replay.suite import runner_version

EXTRA_HINT: Final = "pip install 'reasoning-replay[distributed]'"
BATCH_FILES: Final = 16  # a task: up to this many files ...
BATCH_BYTES: Final = 16 * 1024 * 1024  # ... or about this many bytes (~0.1 s of a core)
BATCHES_PER_THREAD: Final = 4  # batches in flight per worker thread: none idles between two
MIN_WINDOW: Final = 8
_REFRESH_S: Final = 5.0  # how often the window follows workers joining or leaving


class EngineError(Exception):
    """The cluster could not validate the files (no scheduler, a worker without the package,
    another version of it): the command exits 2."""


@cache
def _version() -> str:
    return runner_version()


@dataclass(frozen=True, slots=True)
class WorkersDied:
    """A task failed with ``KilledWorker``: each of the ``tries`` workers that ran it died."""

    tries: int


@dataclass(frozen=True, slots=True)
class BatchResult:
    """What a task returns: its files' results, and the version of the package that made them."""

    version: str
    results: list[FileResult]


def validate_batch(
    batch: Sequence[Target], provider: str, provider_names: ProviderNames, places: bool
) -> BatchResult:
    """One task, on a worker: each file read there and validated, as a local run does."""
    results = [validate_target(t, provider, provider_names, places=places) for t in batch]
    return BatchResult(_version(), results)


def _shipped(target: Target) -> Target:
    """A target as a worker opens it: a local path made absolute (the worker's working
    directory is not the command's)."""
    if target.remote:
        return target
    directory = None if target.directory is None else str(Path(target.directory).absolute())
    path = str(Path(target.path).absolute())  # not resolved: a link stays the name it was given
    return dataclasses.replace(target, path=path, directory=directory)


def _as_found(result: FileResult, target: Target) -> FileResult:
    """A worker's result named as the walk found its file."""
    if result.target == target:
        return result
    report = dataclasses.replace(result.report, file_name=target.path)
    return dataclasses.replace(result, target=target, report=report)


def _distributed() -> Any:
    try:
        import distributed  # noqa: PLC0415 - the optional extra, only for a cluster run
    except ImportError as error:
        raise MissingExtraError(f"a cluster run needs Dask distributed: {EXTRA_HINT}") from error
    return distributed


class DaskEngine:
    """A connected Dask client, as a :class:`reasoning_replay.history.validate_run.Engine`."""

    def __init__(self, client: Any, *, window: int | None = None) -> None:
        self._client = client
        self._fixed_window = window
        self._window = window or MIN_WINDOW
        self._window_at = -_REFRESH_S
        self._killed_worker: type[BaseException] = _distributed().KilledWorker

    @property
    def window(self) -> int:
        """Batches in flight or awaiting their turn in the report, at most: four per worker
        thread of the cluster (re-read every few seconds), at least eight."""
        now = time.monotonic()
        if self._fixed_window is None and now - self._window_at >= _REFRESH_S:
            threads = sum(self._client.nthreads().values())
            self._window = max(MIN_WINDOW, BATCHES_PER_THREAD * threads)
            self._window_at = now
        return self._window

    def validate(
        self,
        targets: Iterable[Target],
        provider: str,
        provider_names: ProviderNames,
        *,
        places: bool,
    ) -> Iterator[FileResult]:
        """Every target's result, in the order of ``targets``."""
        task = (provider, provider_names, places)
        batches = enumerate(file_batches(targets, BATCH_FILES, BATCH_BYTES))
        completed = _distributed().as_completed(loop=self._client.loop)
        in_flight: dict[Any, tuple[int, list[Target]]] = {}
        ready: dict[int, list[FileResult]] = {}
        suspects: list[tuple[int, list[Target]]] = []  # batches whose workers died
        emitted = submitted = 0
        exhausted = False
        while True:
            while not exhausted and not suspects and submitted - emitted < self.window:
                item = next(batches, None)
                if item is None:
                    exhausted = True
                    break
                future = self._submit(item[1], task)
                in_flight[future] = item
                completed.add(future)
                submitted += 1
            if in_flight:
                future = next(completed)
                index, batch = in_flight.pop(future)
                results = self._results(future)
                if isinstance(results, WorkersDied):
                    suspects.append((index, batch))
                else:
                    ready[index] = [_as_found(r, t) for r, t in zip(results, batch, strict=True)]
            elif suspects:  # nothing else in flight: each file alone
                for index, batch in suspects:
                    ready[index] = [self._alone(target, task) for target in batch]
                suspects = []
            elif exhausted:
                return
            while emitted in ready:
                yield from ready.pop(emitted)
                emitted += 1

    def _submit(self, batch: Sequence[Target], task: tuple[str, ProviderNames, bool]) -> Any:
        shipped = [_shipped(t) for t in batch]
        # pure=False: a batch validated again is a new task, not the failed one's key.
        return self._client.submit(validate_batch, shipped, *task, pure=False)

    def _results(self, future: Any) -> list[FileResult] | WorkersDied:
        """A finished task's results, or how often its workers died (``KilledWorker``)."""
        try:
            done: BatchResult = future.result()
        except self._killed_worker as error:
            return WorkersDied(int(getattr(error, "allowed_failures", 0)) + 1)
        except Exception as error:
            # Not the data: the validation never raises on a file. The package missing on a
            # worker, a lost scheduler, a cancelled run.
            raise EngineError(f"the cluster failed: {type(error).__name__}: {error}") from error
        if done.version != _version():
            raise EngineError(
                f"a worker runs reasoning-replay {done.version}, this command {_version()}: "
                "install the same version on every worker"
            )
        return done.results

    def _alone(self, target: Target, task: tuple[str, ProviderNames, bool]) -> FileResult:
        """One file validated with nothing else of the run in flight; if its worker dies
        again, a ``history_unreadable`` finding that says so (SPEC H3)."""
        results = self._results(self._submit([target], task))
        if not isinstance(results, WorkersDied):
            return _as_found(results[0], target)
        detail = (
            f"not validated: the worker process validating it died, {results.tries} times "
            "alone (a crash, or the worker's memory limit)"
        )
        return unreadable_result(target, detail, task[0])


@contextlib.contextmanager
def dask_engine(
    *, scheduler: str | None = None, workers: int | None = None
) -> Iterator[DaskEngine]:
    """A client of the scheduler at ``scheduler`` (``tcp://host:8786``), or of a local cluster
    of ``workers`` worker processes started here and stopped on exit. Connection timeouts and
    retries are Dask's settings (``distributed.comm.timeouts.connect``,
    ``distributed.scheduler.allowed-failures``)."""
    distributed = _distributed()
    with contextlib.ExitStack() as stack:
        try:
            if scheduler is not None:
                client = distributed.Client(scheduler, set_as_default=False)
            else:
                cluster = distributed.LocalCluster(
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=":0",  # any free port: 8787 may be taken
                )
                stack.enter_context(cluster)
                client = distributed.Client(cluster, set_as_default=False)
        except (OSError, TimeoutError) as error:
            where = scheduler if scheduler is not None else f"a local cluster of {workers}"
            raise EngineError(f"cannot connect to {where}: {error}") from error
        stack.enter_context(client)
        yield DaskEngine(client)
