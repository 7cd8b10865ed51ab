"""The C accelerators under AddressSanitizer and UndefinedBehaviorSanitizer, fed by the fuzzer.

```sh
python tools/sanitize.py [--seconds 60] [--iterations N] [--seed 20261201] [--corpus DIR] \
    [--build-dir DIR] [--no-leaks]
```

1. Compiles ``reasoning_replay._canonical``, ``._strict`` and ``._history`` from
   ``reference_impl/`` with ``-fsanitize=address,undefined -fno-sanitize-recover=all`` into a
   scratch directory (or ``--build-dir``); the installed modules are not touched.
2. Starts a child Python with ``libasan`` preloaded (an uninstrumented interpreter needs the
   runtime first) and ``PYTHONMALLOC=malloc`` (so that ASan sees every Python object's memory
   too), loads those builds under their own names and puts them in the reader's place
   (``record._fast.canonical._accelerator``, ``record._fast.general._accelerator`` and
   ``._envelope_accelerator``, ``history.history_files._accelerator`` and ``._strict_parse``).
3. Reads every ``read`` vector and ``--corpus`` file, as characters and as bytes, then runs
   ``tools/fuzz.py`` in-process (every kind of input, without the JavaScript adapter) for the
   budget, which compares the sanitized builds with the Python statement on every input.

It prints the executions and the sanitizer errors (0, or each report) and exits 1 on any error,
or on any reader or capture finding of the fuzzer, or any finding of the C readings of history
files (an instrumented build must read alike). The other history findings are left to
``tools/fuzz.py``. LeakSanitizer runs at the child's exit and every
leak it reports is an error (the ones whose allocation stack passes through the accelerators'
sources are marked); ``--no-leaks`` turns it off, for an interpreter that leaks at exit itself.
The child checks that the ASan runtime is mapped and that the modules it reads with are the
sanitized builds, so a run that silently used the installed ones fails.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.machinery
import importlib.util
import json
import os
import re
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

REPO: Final = Path(__file__).resolve().parents[1]
SOURCE: Final = REPO / "reference_impl" / "reasoning_replay"
MODULES: Final = ("_canonical", "_strict", "_history")
SANITIZE_FLAGS: Final = (
    "-fsanitize=address,undefined",
    "-fno-sanitize-recover=all",
    "-fno-omit-frame-pointer",
    "-g",
    "-O1",
)
ERROR_LINE: Final = re.compile(r"ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:")
OUR_SOURCES: Final = re.compile(
    r"_canonical\.c|_strict\.c|_history\.c|_json_strings\.h|_json_values\.h|_envelope_literals\.h"
)
HEADERS: Final = ("_json_strings.h", "_json_values.h", "_envelope_literals.h")
RESULT_PREFIX: Final = "sanitize-result: "


def build(build_dir: Path) -> list[Path]:
    """Compile both accelerators with the sanitizers into ``build_dir``; return the modules."""
    # Imported here, as hatch_build.py does: setuptools is needed to build, never to run.
    setuptools: Any = importlib.import_module("setuptools")
    build_ext: Any = importlib.import_module("setuptools.command.build_ext").build_ext

    extensions = [
        setuptools.Extension(
            f"reasoning_replay.{name}",
            sources=[str(SOURCE / f"{name}.c")],
            depends=[str(SOURCE / header) for header in HEADERS],
            extra_compile_args=list(SANITIZE_FLAGS),
            extra_link_args=["-fsanitize=address,undefined"],
        )
        for name in MODULES
    ]
    distribution = setuptools.Distribution({"name": "sanitized", "ext_modules": extensions})
    command = build_ext(distribution)
    command.build_lib = str(build_dir / "lib")
    command.build_temp = str(build_dir / "temp")
    command.force = True
    command.ensure_finalized()
    command.run()
    return [Path(command.get_ext_fullpath(f"reasoning_replay.{name}")) for name in MODULES]


def runtime_library(name: str) -> str:
    """The path of a sanitizer runtime as the compiler that built the modules finds it."""
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    found = subprocess.run(
        [compiler, f"-print-file-name={name}"], capture_output=True, text=True, check=True
    ).stdout.strip()
    if not Path(found).is_file():
        raise SystemExit(f"sanitize: {compiler} has no {name} (install the sanitizer runtime)")
    return found


# --- the child: the sanitized accelerators in the reader's place -------------------------------


def _load(path: Path, name: str) -> Any:
    loader = importlib.machinery.ExtensionFileLoader(f"reasoning_replay.{name}", str(path))
    spec = importlib.util.spec_from_file_location(f"reasoning_replay.{name}", path, loader=loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def child(args: argparse.Namespace) -> int:
    sys.path.insert(0, str(REPO / "tools"))
    import fuzz  # noqa: PLC0415 - tools/ is on the path only now
    from reasoning_replay.history import history_files  # noqa: PLC0415
    from reasoning_replay.record._fast import canonical as canonical_path  # noqa: PLC0415
    from reasoning_replay.record._fast import general  # noqa: PLC0415

    paths = [Path(p) for p in args.child]
    canonical, strict, history = (
        _load(path, name) for path, name in zip(paths, MODULES, strict=True)
    )
    assert canonical.__file__ != getattr(canonical_path, "__file__", None)
    canonical_path._accelerator = canonical.read_canonical
    general._accelerator = strict.parse
    general._envelope_accelerator = strict.read_envelope
    history_files._accelerator = history.read_history
    history_files._strict_parse = strict.parse

    started = time.monotonic()
    targets = fuzz.Targets()
    seeds = fuzz.read_seeds(args.corpus)
    seed_findings = 0
    for text in seeds:
        forms: list[str | bytes] = [text]
        if isinstance(text, str):
            forms.append(text.encode("utf-8", "surrogatepass"))
        for form in forms:
            seed_findings += len(fuzz.read_failures(targets, form))
    config = fuzz.Config(
        seed=args.seed, seconds=args.seconds, iterations=args.iterations, js=None, reduce=False
    )
    fuzzer = fuzz.Fuzzer(config, targets)
    fuzzer.run()
    report = fuzzer.report(time.monotonic() - started)
    # Reader and capture findings, and the history ones of the C readings of history files
    # (_history's, and _strict's parse of a whole file): the rest of the history findings are the
    # tools', left to tools/fuzz.py.
    reader_findings = [
        f
        for f in report["findings"]
        if f["check"] in ("read", "capture")
        or "_history" in f["signature"]
        or "the C reading" in f["signature"]
    ]
    maps = Path("/proc/self/maps").read_text()
    sanitized = "libasan" in maps and all(
        canonical_path._accelerator is canonical.read_canonical and str(path) in maps
        for path in paths
    )
    result = {
        "sanitized": sanitized
        and general._accelerator is strict.parse
        and general._envelope_accelerator is strict.read_envelope
        and history_files._accelerator is history.read_history
        and history_files._strict_parse is strict.parse,
        "seed_texts": len(seeds),
        "seed_findings": seed_findings,
        "executions": report["executions"] + len(seeds),
        "executions_by_kind": report["executions_by_kind"],
        "reader_findings": reader_findings,
        "history_findings": len(report["findings"]) - len(reader_findings),
        "seconds": report["seconds"],
    }
    print(RESULT_PREFIX + json.dumps(result, ensure_ascii=True), flush=True)
    return 0


# --- the parent ---------------------------------------------------------------------------------


def sanitizer_errors(stderr: str) -> list[str]:
    """The sanitizer reports in ``stderr``: each ASan or UBSan error and each leak."""
    reports: list[str] = []
    for block in re.split(r"\n(?=(?:Direct|Indirect) leak of )", stderr):
        if block.startswith(("Direct leak", "Indirect leak")):
            stack = block.split("\n\n")[0]
            mark = " (in the accelerators)" if OUR_SOURCES.search(stack) else ""
            reports.append(block.split("\n")[0].strip() + mark)
    reports.extend(
        line.strip()
        for line in stderr.splitlines()
        if ERROR_LINE.search(line) and "LeakSanitizer" not in line
    )
    return reports


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--iterations", type=int)
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--corpus", type=Path)
    parser.add_argument("--build-dir", type=Path, help="build here and keep it (default: temp)")
    parser.add_argument("--no-leaks", action="store_true", help="no LeakSanitizer")
    parser.add_argument("--child", nargs=len(MODULES), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args)

    with tempfile.TemporaryDirectory(prefix="reasoning-replay-asan-") as scratch:
        build_dir = args.build_dir or Path(scratch)
        built = build(build_dir)
        command = [sys.executable, str(Path(__file__).resolve()), "--child", *map(str, built)]
        command += ["--seconds", str(args.seconds), "--seed", str(args.seed)]
        if args.iterations is not None:
            command += ["--iterations", str(args.iterations)]
        if args.corpus is not None:
            command += ["--corpus", str(args.corpus)]
        env = {
            **os.environ,
            "LD_PRELOAD": runtime_library("libasan.so"),
            "PYTHONMALLOC": "malloc",
            "ASAN_OPTIONS": f"detect_leaks={int(not args.no_leaks)}:abort_on_error=0"
            ":halt_on_error=1:exitcode=99",
            "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1:exitcode=99",
        }
        env.pop("REASONING_REPLAY_PURE_PYTHON", None)
        done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    result_lines = [line for line in done.stdout.splitlines() if line.startswith(RESULT_PREFIX)]
    errors = sanitizer_errors(done.stderr)
    if not result_lines:
        print(done.stdout[-4000:], done.stderr[-8000:], sep="\n", file=sys.stderr)
        print(f"sanitize: the child stopped with status {done.returncode}", file=sys.stderr)
        return 1
    result = json.loads(result_lines[-1].removeprefix(RESULT_PREFIX))
    by_kind = ", ".join(f"{kind} {count}" for kind, count in result["executions_by_kind"].items())
    print(
        f"sanitize: ASan+UBSan builds of {', '.join(MODULES)}: {result['executions']} executions "
        f"({result['seed_texts']} seed texts, {by_kind}) in {result['seconds']} s, "
        f"{len(errors)} sanitizer errors, {len(result['reader_findings'])} reader findings "
        f"(leaks {'not checked' if args.no_leaks else 'checked'})"
    )
    for error in errors:
        print(f"  {error}")
    for finding in result["reader_findings"]:
        print(f"  FINDING {finding['signature']}: {json.dumps(finding['reproducer'])[:2000]}")
    if not result["sanitized"]:
        print("sanitize: the child did not read with the sanitized builds", file=sys.stderr)
    failed = errors or result["reader_findings"] or result["seed_findings"]
    failed = failed or done.returncode != 0 or not result["sanitized"]
    if done.returncode != 0 and not errors:
        print(done.stderr[-4000:], file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
