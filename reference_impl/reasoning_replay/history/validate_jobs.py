"""The jobs of a ``validate`` run (``--jobs``): every file's result in the walk's order, validated
in this process or by a process pool of at most ``jobs`` workers, never more than usable CPUs or
batches of files; memory holds one file's contents per worker.
"""

from __future__ import annotations

import itertools
import os
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Final

from reasoning_replay.history.file_results import FileResult, Target, validate_target
from reasoning_replay.record.providers import REGISTRY_ONLY, ProviderNames

_CHUNK_FILES: Final = 8  # a pool task: up to this many files ...
_CHUNK_BYTES: Final = 8 * 1024 * 1024  # ... or about this many bytes


def _validate_chunk(
    chunk: Sequence[Target], provider: str, provider_names: ProviderNames, places: bool
) -> list[FileResult]:
    return [validate_target(target, provider, provider_names, places=places) for target in chunk]


def file_batches(
    targets: Iterable[Target], max_files: int, max_bytes: int
) -> Iterator[list[Target]]:
    """Targets in the walk's order, cut into tasks of ``max_files`` files or about ``max_bytes``
    bytes (a local pool's chunks, a cluster's batches)."""
    batch: list[Target] = []
    size = 0
    for target in targets:
        batch.append(target)
        size += target.size
        if len(batch) >= max_files or size >= max_bytes:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def usable_cpus() -> int:
    """The CPUs this process may run on: its affinity mask where the system has one (a
    container or ``taskset`` may allow fewer than the machine has), else the machine's count."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def worker_count(jobs: int, batches: int, cpus: int) -> int:
    """How many worker processes ``--jobs jobs`` starts: never more than asked, than usable
    CPUs, or than batches of files to give them (a batch holds at least one file); 1 means none
    (the files are validated in the calling process)."""
    return max(1, min(jobs, cpus, batches))


def validate_all(
    targets: Iterable[Target],
    provider: str,
    jobs: int,
    provider_names: ProviderNames = REGISTRY_ONLY,
    *,
    places: bool = False,
) -> Iterator[FileResult]:
    """Every target's result, in the order of ``targets``, whatever the number of workers.

    With more than one worker (:func:`worker_count`), a process pool validates batches of files;
    at most ``4 * workers`` batches are in flight, so neither the pending files nor the finished
    reports pile up. Only the first ``min(jobs, CPUs)`` batches are read ahead to count them.
    """
    batches = file_batches(targets, _CHUNK_FILES, _CHUNK_BYTES)
    wanted = min(jobs, usable_cpus())
    ahead = list(itertools.islice(batches, wanted)) if wanted > 1 else []
    workers = worker_count(jobs, len(ahead), wanted)
    if workers <= 1:
        for chunk in itertools.chain(ahead, batches):
            for target in chunk:
                yield validate_target(target, provider, provider_names, places=places)
        return
    with ProcessPoolExecutor(max_workers=workers) as pool:
        pending: deque[Future[list[FileResult]]] = deque()
        for chunk in itertools.chain(ahead, batches):
            pending.append(pool.submit(_validate_chunk, chunk, provider, provider_names, places))
            if len(pending) >= 4 * workers:
                yield from pending.popleft().result()
        while pending:
            yield from pending.popleft().result()
