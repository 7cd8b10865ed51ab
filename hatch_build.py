"""Hatch build hook: compile the optional C accelerators of the reader and of history files.

``reasoning_replay._canonical`` (``_canonical.c``) reads a canonically written envelope,
``reasoning_replay._strict`` (``_strict.c``) parses any JSON text by SPEC E4 and reads an envelope
in any layout, and ``reasoning_replay._history`` (``_history.c``) reads a history file's messages
(SPEC H1), all in ``reference_impl/reasoning_replay/`` and sharing its headers (``_json_strings.h``,
``_json_values.h``, ``_envelope_literals.h``). They only make the reader and the history tools
faster; they change no verdict, and the package falls back to the same reading in Python when
they are missing. So a build that cannot compile them (no C compiler, no Python headers, no
setuptools) warns and goes on with a pure-Python wheel instead of failing.

``REASONING_REPLAY_BUILD`` says what a wheel holds:

- ``native`` (the default: ``pip install .``, the sdist, an editable install): the modules on the
  full C API, for this interpreter and platform only, the fastest build;
- ``abi3``: the modules on the limited API of CPython 3.11 (:data:`LIMITED_API`), one wheel for
  every CPython from 3.11 on (tag ``cp311-abi3-<platform>``), which tools/release.py publishes.
  It reads bytes and ASCII text as fast as ``native``, other text through its UTF-8 form, about
  as fast as no accelerator (tools/bench_abi3.py; ARCHITECTURE.md says why both exist);
- ``pure``: no compiled module, tagged ``py3-none-any``, for any other Python (PyPy, a
  free-threaded CPython) and platform.

An editable install gets the modules compiled next to their source, where it imports the package
from (``reference_impl/``); those files are ignored by git. They are compiled by setuptools'
``build_ext``, which knows every platform's compiler and flags.
"""

from __future__ import annotations

import importlib
import os
import shutil
import tempfile
import weakref
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

PACKAGE_SOURCE = Path("reference_impl", "reasoning_replay")
MODULES = ("reasoning_replay._canonical", "reasoning_replay._strict", "reasoning_replay._history")
HEADERS = tuple(
    PACKAGE_SOURCE / name for name in ("_json_strings.h", "_json_values.h", "_envelope_literals.h")
)
LIMITED_API = "0x030B0000"  # CPython 3.11, the oldest the package supports (requires-python)
ABI3_INTERPRETER = "cp311"  # the wheel tag's interpreter: the version LIMITED_API names
BUILD_VARIABLE = "REASONING_REPLAY_BUILD"
BUILDS = ("native", "abi3", "pure")


def requested_build() -> str:
    """What ``REASONING_REPLAY_BUILD`` asks for (see the module docstring); ``native`` unset."""
    build = os.environ.get(BUILD_VARIABLE, "") or "native"
    if build not in BUILDS:
        raise ValueError(f"{BUILD_VARIABLE}={build!r}: expected one of {', '.join(BUILDS)}")
    return build


def abi3_tag() -> str:
    """``cp311-abi3-<platform>``, the platform chosen as hatchling chooses it for a native wheel
    (the first of this interpreter's tags that is not a manylinux or musllinux one)."""
    tags = importlib.import_module("packaging.tags")
    platform = next(
        t.platform
        for t in tags.sys_tags()
        if "manylinux" not in t.platform and "musllinux" not in t.platform
    )
    return f"{ABI3_INTERPRETER}-abi3-{platform}"


def source_of(module: str) -> Path:
    """The C source of an accelerator module, relative to the project root."""
    return PACKAGE_SOURCE / (module.rpartition(".")[2] + ".c")


def compile_extensions(
    root: Path, build_lib: Path, build_temp: Path, *, limited_api: bool = False
) -> list[Path]:
    """Compile every module of :data:`MODULES` under ``build_lib``; return their paths. With
    ``limited_api``, on the limited API of :data:`LIMITED_API` (one ``.abi3.so`` for every CPython
    from that version on)."""
    # Imported here: setuptools is needed to build, never to run the package.
    setuptools = importlib.import_module("setuptools")
    build_ext = importlib.import_module("setuptools.command.build_ext").build_ext

    extensions = [
        setuptools.Extension(
            module,
            sources=[str(root / source_of(module))],
            depends=[str(root / header) for header in HEADERS],
            py_limited_api=limited_api,
            define_macros=[("Py_LIMITED_API", LIMITED_API)] if limited_api else [],
        )
        for module in MODULES
    ]
    distribution = setuptools.Distribution({"name": "reasoning-replay", "ext_modules": extensions})
    command = build_ext(distribution)
    command.build_lib = str(build_lib)
    command.build_temp = str(build_temp)
    command.inplace = False
    command.ensure_finalized()
    command.run()
    built = [Path(command.get_ext_fullpath(module)) for module in MODULES]
    for path in built:
        if not path.is_file():
            raise RuntimeError(f"build_ext reported no error but wrote no {path}")
    return built


class AcceleratorHook(BuildHookInterface):  # type: ignore[type-arg,unused-ignore]
    """Adds the compiled accelerators to wheels and editable installs (see the module docstring)."""

    PLUGIN_NAME = "custom"
    _remove_scratch: weakref.finalize | None = None  # type: ignore[type-arg,unused-ignore]

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":  # the sdist ships the C source as it is
            return
        build = requested_build()
        if build == "pure":
            return
        root = Path(self.root)
        # Removed in finalize(), once the wheel holds the modules, or at exit if the build fails.
        scratch = Path(tempfile.mkdtemp(prefix="reasoning-replay-build-"))
        self._remove_scratch = weakref.finalize(self, shutil.rmtree, scratch, ignore_errors=True)
        try:
            built = compile_extensions(
                root, scratch / "lib", scratch / "temp", limited_api=build == "abi3"
            )
        except Exception as error:  # any failure, a missing compiler first: build without them
            self.app.display_warning(
                f"reasoning-replay: the C accelerators {', '.join(MODULES)} were not compiled "
                f"({error}); building a pure-Python wheel, whose reader is correct but slower"
            )
            return
        for path in built:
            if version == "editable":
                # Replaced, not rewritten in place: a running process may have the old one mapped.
                target = root / PACKAGE_SOURCE / path.name
                staged = target.with_name(target.name + ".new")
                shutil.copyfile(path, staged)
                staged.replace(target)
            else:
                build_data["force_include"][str(path)] = f"reasoning_replay/{path.name}"
        # Compiled modules: the wheel holds code for this platform, and for this interpreter only
        # unless they are on the limited API.
        build_data["pure_python"] = False
        if build == "abi3":
            build_data["tag"] = abi3_tag()
        else:
            build_data["infer_tag"] = True

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        if self._remove_scratch is not None:
            self._remove_scratch()
