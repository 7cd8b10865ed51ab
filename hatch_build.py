"""Hatch build hook: compile the reader's optional C accelerator, ``reasoning_replay._canonical``.

The accelerator (``reference_impl/reasoning_replay/_canonical.c``) only makes the strict reader
faster; it changes no verdict, and the package falls back to the same reading in Python when it
is missing. So a build that cannot compile it (no C compiler, no Python headers, no setuptools)
warns and goes on with a pure-Python wheel instead of failing.

- A regular wheel gets the compiled module and is tagged for this interpreter and platform.
- An editable install gets it compiled next to its source, where the editable install imports the
  package from (``reference_impl/``); that file is ignored by git.

It is compiled by setuptools' ``build_ext``, which knows every platform's compiler and flags.
"""

from __future__ import annotations

import importlib
import shutil
import tempfile
import weakref
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

MODULE = "reasoning_replay._canonical"
SOURCE = Path("reference_impl", "reasoning_replay", "_canonical.c")


def compile_extension(source: Path, build_lib: Path, build_temp: Path) -> Path:
    """Compile ``source`` as :data:`MODULE` under ``build_lib``; return the module's path."""
    # Imported here: setuptools is needed to build, never to run the package.
    setuptools = importlib.import_module("setuptools")
    build_ext = importlib.import_module("setuptools.command.build_ext").build_ext

    extension = setuptools.Extension(MODULE, sources=[str(source)])
    distribution = setuptools.Distribution({"name": "reasoning-replay", "ext_modules": [extension]})
    command = build_ext(distribution)
    command.build_lib = str(build_lib)
    command.build_temp = str(build_temp)
    command.inplace = False
    command.ensure_finalized()
    command.run()
    built = Path(command.get_ext_fullpath(MODULE))
    if not built.is_file():
        raise RuntimeError(f"build_ext reported no error but wrote no {built}")
    return built


class CanonicalAcceleratorHook(BuildHookInterface):  # type: ignore[type-arg,unused-ignore]
    """Adds the compiled accelerator to wheels and editable installs (see the module docstring)."""

    PLUGIN_NAME = "custom"
    _remove_scratch: weakref.finalize | None = None  # type: ignore[type-arg,unused-ignore]

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":  # the sdist ships the C source as it is
            return
        root = Path(self.root)
        # Removed in finalize(), once the wheel holds the module, or at exit if the build fails.
        scratch = Path(tempfile.mkdtemp(prefix="reasoning-replay-build-"))
        self._remove_scratch = weakref.finalize(self, shutil.rmtree, scratch, ignore_errors=True)
        try:
            built = compile_extension(root / SOURCE, scratch / "lib", scratch / "temp")
        except Exception as error:  # any failure, a missing compiler first: build without it
            self.app.display_warning(
                f"reasoning-replay: the C accelerator {MODULE} was not compiled ({error}); "
                "building a pure-Python wheel, whose reader is correct but slower"
            )
            return
        if version == "editable":
            # Replaced, not rewritten in place: a running process may have the old one mapped.
            target = root / SOURCE.parent / built.name
            staged = target.with_name(target.name + ".new")
            shutil.copyfile(built, staged)
            staged.replace(target)
        else:
            build_data["force_include"][str(built)] = f"reasoning_replay/{built.name}"
        # A compiled module: the wheel holds code for this interpreter and platform only.
        build_data["pure_python"] = False
        build_data["infer_tag"] = True

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        if self._remove_scratch is not None:
            self._remove_scratch()
