"""``conformance validate`` on a Dask cluster (``--scheduler``, ``--workers``) and on fsspec URLs:
the reports of a local run, a file whose worker dies reported, results streamed in order.

One local cluster of two worker processes serves the module. ``memory://`` is a store of each
process's own: a worker plugin puts the same files in every worker's (and a restarted worker's),
as a shared object store would be seen; it can also make reading one file kill its worker.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

distributed = pytest.importorskip("distributed")
dask = pytest.importorskip("dask")
fsspec = pytest.importorskip("fsspec")
psutil = pytest.importorskip("psutil")

from reasoning_replay.cli.main import main  # noqa: E402
from reasoning_replay.history import distributed as engine_module  # noqa: E402
from reasoning_replay.history.distributed import (  # noqa: E402
    BATCH_FILES,
    DaskEngine,
    EngineError,
)
from reasoning_replay.history.file_results import Target  # noqa: E402
from reasoning_replay.history.report_formats import TextWriter  # noqa: E402
from reasoning_replay.history.validate_run import PROGRESS_MIN_FILES, run_validate  # noqa: E402
from reasoning_replay.record.providers import REGISTRY_ONLY  # noqa: E402
from support import envelope_text, history_of_blocks  # noqa: E402

MINIMAL = '{"type":"reasoning","encrypted_content":"gAAAA","id":"rs_old"}'
STORE = "/t"  # memory://t
POISON = "history_poison.json"


def corpus() -> dict[str, tuple[bytes, int]]:
    """Relative path -> (bytes, mode): every kind of finding, skipped and excluded files, a
    provider from session.json, and enough files for several batches."""
    xai = {
        "continuation": {"agents": {"dev": {"provider": "xai", "history_file": "history_dev.json"}}}
    }
    files: dict[str, tuple[str | bytes, int]] = {
        "sessions/s1/session.json": (json.dumps(xai), 0o644),
        "sessions/s1/history_dev.json": (
            history_of_blocks(envelope_text("rs_a", "c"), envelope_text("rs_a", "c")),
            0o600,
        ),
        "sessions/s1/history_dev_previous.json": (
            history_of_blocks(envelope_text("rs_b", "d")),
            0o644,
        ),
        "sessions/s1/compacted_1.json": (history_of_blocks(MINIMAL), 0o600),
        "sessions/s2/session.json": ('{"id": "s2"}', 0o600),
        "sessions/s2/history_ops.json": (history_of_blocks('{"schema": 1}'), 0o600),
        "exports/compacted_broken.json": ("{", 0o600),
        "exports/history_bytes.json": (b'{"messages": []}\xff', 0o600),
        "exports/package.json": ('{"name": "not-a-history"}', 0o600),
        "exports/saved.json": (history_of_blocks(envelope_text("rs_c", "e")), 0o600),
        "exports/notes.txt": ("not validated", 0o600),
        "node_modules/history_x.json": ("{", 0o600),
    }
    for i in range(2 * BATCH_FILES + 5):
        blocks = [envelope_text(f"rs_{i}_{j}", "c" * (10 + 1000 * j)) for j in range(i % 4)]
        files[f"bulk/b{i // 10}/history_{i:02}.json"] = (history_of_blocks(*blocks), 0o600)
    return {k: (v.encode() if isinstance(v, str) else v, m) for k, (v, m) in files.items()}


def write_tree(root: Path, files: dict[str, tuple[bytes, int]], *, modes: bool) -> Path:
    for name, (data, mode) in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        path.chmod(mode if modes else 0o600)
    for directory in sorted(
        {p for name in files for p in (root / name).parents if root in p.parents}
    ):
        directory.chmod(0o755 if modes and directory.name == "s1" else 0o700)
    return root


class SharedMemoryStore(distributed.WorkerPlugin):  # type: ignore[misc]
    """Puts ``files`` in the worker's ``memory://`` store; with ``poison``, reading that file
    ends the worker's process, as a crash would."""

    def __init__(self, files: dict[str, bytes], poison: str | None = None) -> None:
        self.files = files
        self.poison = poison

    def setup(self, worker: Any) -> None:
        fill_memory_store(self.files)
        memory = fsspec.implementations.memory.MemoryFileSystem
        original = getattr(memory, "_unpoisoned_cat_file", memory.cat_file)
        memory._unpoisoned_cat_file = original
        poison = self.poison

        def cat_file(fs: Any, path: str, *args: Any, **kwargs: Any) -> Any:
            if poison is not None and str(path).endswith(poison):
                os._exit(70)
            return original(fs, path, *args, **kwargs)

        memory.cat_file = cat_file


def fill_memory_store(files: dict[str, bytes]) -> None:
    fs = fsspec.filesystem("memory")
    if fs.exists(STORE):
        fs.rm(STORE, recursive=True)
    for name, data in files.items():
        fs.pipe_file(f"{STORE}/{name}", data)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """Two worker processes of one thread; a worker's death is retried once by Dask."""
    with (
        dask.config.set({"distributed.scheduler.allowed-failures": 1}),
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as local,
        distributed.Client(local, set_as_default=False) as client,
    ):
        yield client


def use_store(client: Any, files: dict[str, tuple[bytes, int]], poison: str | None = None) -> None:
    """The same ``memory://t`` in this process and in every worker."""
    data = {name: content for name, (content, _) in files.items()}
    fill_memory_store(data)
    client.register_plugin(SharedMemoryStore(data, poison), name="memory-store")


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["validate", "--no-progress", *argv])
    return status, out.getvalue(), err.getvalue()


ARGS = ("--exclude", "node_modules")


# --- the reports of a local run -----------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_a_cluster_run_of_a_file_url_is_byte_for_byte_the_local_run(
    cluster: Any, tmp_path: Path, fmt: str
) -> None:
    root = write_tree(tmp_path, corpus(), modes=True)
    local = run("--format", fmt, *ARGS, str(root))
    on_cluster = run(
        "--format", fmt, *ARGS, "--scheduler", cluster.scheduler.address, f"file://{root}"
    )
    assert (
        local[0] == 1 and "file_mode_too_open" in local[1] and "directory_mode_too_open" in local[1]
    )
    assert on_cluster == local


def _as_store(report: str, root: Path) -> str:
    return report.replace(f"file://{root}", "memory://t").replace(str(root), "memory://t")


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_a_store_url_reports_as_a_local_run_named_by_url_with_permissions_not_checked(
    cluster: Any, tmp_path: Path, fmt: str
) -> None:
    files = corpus()
    root = write_tree(tmp_path, files, modes=False)
    use_store(cluster, files)
    local = run("--format", fmt, *ARGS, str(root))
    in_process = run("--format", fmt, *ARGS, "memory://t")
    on_cluster = run("--format", fmt, *ARGS, "--scheduler", cluster.scheduler.address, "memory://t")
    assert on_cluster == in_process
    status, out, err = on_cluster
    assert (status, err) == (local[0], local[2]) == (1, "")
    expected = _as_store(local[1], root)
    validated = 6 + 3 + 2 * BATCH_FILES + 5  # histories and session.json files
    if fmt == "text":
        # The one line about each session.json and the summary row say what was not checked.
        remote = "(session metadata: permissions not checked, the store has no POSIX modes)"
        expected = expected.replace("(session metadata: permissions only)", remote)
        what = "files on stores without POSIX modes: permissions not checked (SPEC H4)"
        row = f"  no modes {validated}  {what}\n"
        expected = expected.replace("FAILED: error findings", row + "FAILED: error findings")
        assert out == expected
    elif fmt == "json":
        document = json.loads(out)
        assert document["summary"].pop("permissions_not_checked") == validated
        assert document == json.loads(expected)
    else:
        log = json.loads(out)
        (note,) = log["runs"][0]["invocations"][0].pop("toolExecutionNotifications")
        assert note["level"] == "note" and "permissions not checked" in note["message"]["text"]
        assert log["runs"][0]["properties"]["summary"].pop("permissions_not_checked") == validated
        uris = {
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in log["runs"][0]["results"]
        }
        assert uris and all(uri.startswith("memory://t/") for uri in uris)
        assert log == json.loads(expected)


def test_workers_start_a_local_cluster_and_leave_no_process_behind(tmp_path: Path) -> None:
    root = write_tree(tmp_path, corpus(), modes=True)
    before = children()
    assert run("--workers", "2", *ARGS, str(root)) == run(*ARGS, str(root))
    assert children() <= before


def children() -> set[int]:
    """This process's descendants, less multiprocessing's resource tracker: one per
    interpreter, started with the first worker process, it ends with this process."""
    return {
        p.pid
        for p in psutil.Process().children(recursive=True)
        if p.is_running() and "resource_tracker" not in " ".join(p.cmdline())
    }


# --- a worker that dies -------------------------------------------------------------------------


def test_a_file_whose_worker_dies_is_retried_then_reported_unreadable(cluster: Any) -> None:
    files = corpus()
    files[f"bulk/b0/{POISON}"] = (history_of_blocks(envelope_text("rs_p", "p")).encode(), 0o600)
    use_store(cluster, files, poison=POISON)
    status, out, _ = run(
        "--format", "json", *ARGS, "--scheduler", cluster.scheduler.address, "memory://t"
    )
    document = json.loads(out)
    by_path = {entry["path"]: entry for entry in document["files"]}
    (finding,) = by_path[f"memory://t/bulk/b0/{POISON}"]["findings"]
    assert finding["code"] == "history_unreadable" and finding["severity"] == "error"
    assert "worker process validating it died, 2 times alone" in finding["message"]
    # Every other file is validated as a run without the poisoned file validates it.
    del files[f"bulk/b0/{POISON}"]
    use_store(cluster, files)
    clean = json.loads(run("--format", "json", *ARGS, "memory://t")[1])
    del by_path[f"memory://t/bulk/b0/{POISON}"]
    assert list(by_path.values()) == clean["files"]
    assert status == 1 and document["summary"]["files"] == clean["summary"]["files"] + 1


# --- streaming, versions, progress ---------------------------------------------------------------


def test_results_stream_in_walk_order_with_a_bounded_window(cluster: Any) -> None:
    files = corpus()
    use_store(cluster, files)
    names = sorted(name for name in files if name.endswith(".json"))
    pulled = 0
    ahead = []

    def targets() -> Iterator[Target]:
        nonlocal pulled
        for name in names:
            pulled += 1
            yield Target(f"memory://t/{name}", 10, remote=True)

    results = []
    for result in DaskEngine(cluster, window=1).validate(
        targets(), "openai", REGISTRY_ONLY, places=False
    ):
        results.append(result.target.path)
        ahead.append(pulled - len(results))
    assert results == [f"memory://t/{name}" for name in names]
    assert max(ahead) < 2 * BATCH_FILES  # one batch in flight, and the one being cut


def test_a_worker_of_another_version_ends_the_run(
    cluster: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_store(cluster, corpus())
    monkeypatch.setattr(engine_module, "_version", lambda: "0.0.0-other")
    engine = DaskEngine(cluster)
    with pytest.raises(EngineError, match="runs reasoning-replay"):
        list(
            engine.validate(
                [Target("memory://t/exports/saved.json", 1, remote=True)],
                "openai",
                REGISTRY_ONLY,
                places=False,
            )
        )


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_shows_files_done_on_a_cluster(cluster: Any, tmp_path: Path) -> None:
    root = write_tree(tmp_path, corpus(), modes=False)
    terminal, out = Terminal(), io.StringIO()
    totals = run_validate(
        [str(root)], writer=TextWriter(out), progress_stream=terminal, engine=DaskEngine(cluster)
    )
    assert totals.files >= PROGRESS_MIN_FILES
    done = re.findall(r"(\d+)/(\d+) files", terminal.getvalue())
    assert done and done[-1][0] == done[-1][1] == str(totals.files + totals.skipped)


# --- usage errors -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--scheduler", "tcp://127.0.0.1:1", "--workers", "2"], "exclude each other"),
        (["--workers", "0"], "--workers must be at least 1"),
        (["--workers", "2", "--jobs", "2"], "--jobs is for local worker processes"),
        (["--fix-permissions"], "store without POSIX modes"),
    ],
)
def test_cluster_options_that_cannot_work_are_usage_errors(
    cluster: Any, argv: list[str], message: str
) -> None:
    use_store(cluster, corpus())
    status, out, err = run(*argv, "memory://t")
    assert (status, out) == (2, "") and message in err and len(err.splitlines()) == 1


def test_a_url_that_names_nothing_is_a_usage_error(cluster: Any) -> None:
    use_store(cluster, {"exports/package.json": (b"{}", 0o600)})
    assert run("memory://t/missing")[0:2] == (2, "")
    assert "no such file or directory: memory://t/missing" in run("memory://t/missing")[2]
    assert "Protocol not known" in run("nope://bucket/x")[2]
    assert "names a local absolute path" in run("file://elsewhere/x")[2]
    status, out, err = run("memory://t")  # only a JSON file that is not a history
    assert (status, out) == (2, "") and "nothing to validate" in err


def test_an_unreachable_scheduler_is_one_line_and_exit_2(tmp_path: Path) -> None:
    root = write_tree(tmp_path, corpus(), modes=False)
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        status, out, err = run("--scheduler", "tcp://127.0.0.1:1", str(root))
    assert (status, out) == (2, "") and "cannot connect to tcp://127.0.0.1:1" in err
    assert len(err.splitlines()) == 1


# --- the benchmark --------------------------------------------------------------------------------


def test_the_cluster_benchmark_reports_scaling_memory_load_and_ten_tb(tmp_path: Path) -> None:
    """tools/bench_distributed.py at a tiny size: the figures' shape, never a speed."""
    tool = Path(__file__).resolve().parent.parent / "tools" / "bench_distributed.py"
    figures = tmp_path / "figures.json"
    argv = ["--size-mb", "3", "--rounds", "1", "--dir", str(tmp_path / "store")]
    done = subprocess.run(
        [sys.executable, str(tool), *argv, "--json", str(figures)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    document = json.loads(figures.read_text(encoding="utf-8"))
    assert set(document["methods"]) == {"workers1", "workers2"}
    for row in document["methods"].values():
        assert row["mb_per_s"]["median"] > 0 and row["ten_tb"]["hours_1_worker"] > 0
    assert document["scaling_2_vs_1"]["goal"] == 1.8 and document["scaling_2_vs_1"]["median"] > 0
    assert document["memory"]["largest_file_mb"] > 0
    assert len(document["harness"]["machine"]["load_average_start"]) == 3
    assert "2 workers vs 1:" in done.stdout
