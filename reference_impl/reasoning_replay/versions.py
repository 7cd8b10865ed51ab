"""Every version line of the project (SPEC §19), read from ``versions.json``, which states them.

The specification parts, the schemas, the code registry, the conformance suite, the adapter
protocol and the two packages each have a version; ``conformance --version`` prints them and the
README shows them (a test keeps both equal to the file).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache

from .resources import data_path

NPM_PACKAGE_NAME = "reasoning-replay-conformance"


@dataclass(frozen=True, slots=True)
class VersionLine:
    """One row of the table: what is versioned, its version as people write it, where it lives."""

    part: str
    version: str
    where: str


@dataclass(frozen=True, slots=True)
class Versions:
    package: str
    npm_package: str
    # The specification parts, as major.minor (SPEC §19); each part's heading in SPEC.md states it.
    record_spec: str
    configuration_update_ordering_spec: str
    stored_history_profile: str
    schema: int
    codes_registry: int
    suite: str
    protocol: int
    # The project's future public URL, planned and not served yet: named here and nowhere else.
    public_url: str

    def lines(self) -> tuple[VersionLine, ...]:
        return (
            VersionLine("record spec", self.record_spec, "SPEC.md#part-record"),
            VersionLine(
                "configuration-update ordering spec",
                self.configuration_update_ordering_spec,
                "SPEC.md#part-ordering",
            ),
            VersionLine(
                "stored-history profile", self.stored_history_profile, "SPEC.md#part-history"
            ),
            VersionLine(
                "schemas", f"v{self.schema}", f"urn:reasoning-replay:schema:*.v{self.schema}"
            ),
            VersionLine(
                "diagnostic-code registry",
                f"v{self.codes_registry}",
                f"schema/diagnostic-codes.v{self.codes_registry}.json",
            ),
            VersionLine("conformance suite", self.suite, "conformance/VERSION"),
            VersionLine("adapter protocol", str(self.protocol), "conformance/PROTOCOL.md"),
            VersionLine("Python package", self.package, "reasoning-replay"),
            VersionLine("npm package", self.npm_package, NPM_PACKAGE_NAME),
        )


@cache
def versions() -> Versions:
    """The table of ``versions.json``, read once."""
    raw = json.loads(data_path("versions.json").read_text(encoding="utf-8"))
    spec = raw["spec"]
    return Versions(
        package=raw["package"],
        npm_package=raw["npm_package"],
        record_spec=spec["record"],
        configuration_update_ordering_spec=spec["configuration_update_ordering"],
        stored_history_profile=spec["stored_history_profile"],
        schema=raw["schema"],
        codes_registry=raw["codes_registry"],
        suite=raw["suite"],
        protocol=raw["protocol"],
        public_url=raw["public_url"]["url"],
    )


def spec_url(anchor: str) -> str:
    """Where a SPEC anchor will be read at the project's public URL (versions.json, the one
    place that names it): ``<public url>SPEC.md#<anchor>``."""
    base = versions().public_url
    return f"{base if base.endswith('/') else base + '/'}SPEC.md#{anchor}"


def versions_text(table: Versions) -> str:
    """The table as ``conformance --version`` prints it: one aligned line per part."""
    lines = table.lines()
    part_width = max(len(line.part) for line in lines)
    version_width = max(len(line.version) for line in lines)
    return "\n".join(
        f"{line.part:<{part_width}}  {line.version:<{version_width}}  {line.where}"
        for line in lines
    )


def versions_markdown(table: Versions) -> str:
    """The table as the README shows it."""
    rows = [f"| {line.part} | {line.version} | `{line.where}` |" for line in table.lines()]
    return "\n".join(["| part | version | where |", "| --- | --- | --- |", *rows])
