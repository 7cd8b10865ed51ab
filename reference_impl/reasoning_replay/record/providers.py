"""Provider names and their issuers (SPEC P4 and the provider-name registry of SPEC §18.2).

A history names providers by the names routes write (fast-agent's ``session.json`` records
``responses``); whether a replay item may be sent is decided on issuers. Each name is mapped
once, by the registry extended by the caller's mapping, and the issuers are then compared as
exact strings.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

# SPEC §18.2, in the table's order; schema/provider-names.v1.json holds the same as data.
PROVIDER_NAME_REGISTRY: Final[Mapping[str, str]] = MappingProxyType(
    {
        "openai": "openai",
        "codex": "codex",
        "xai": "xai",
        "responses": "openai",
        "codexresponses": "codex",
        "openai-codex": "codex",
        "openai.responses": "openai",
    }
)


@dataclass(frozen=True, slots=True)
class ProviderNames:
    """SPEC P4: the registry, with the caller's mapping (name → issuer) extending it; a caller's
    entry replaces the registry's entry for its name. The mapping is a plain dict, never
    changed after construction, so that a process pool can send it to its workers."""

    caller: Mapping[str, str] = field(default_factory=dict)

    def issuer_of(self, name: str) -> str:
        """The issuer of ``name``: mapped once (an issuer is never mapped again); a name that
        neither the caller nor the registry lists is its own issuer."""
        mapped = self.caller.get(name)
        if mapped is not None:
            return mapped
        return PROVIDER_NAME_REGISTRY.get(name, name)


REGISTRY_ONLY: Final = ProviderNames()


class ProviderNamesError(Exception):
    """A caller's mapping that is not an object of non-empty names to non-empty issuers."""


def provider_names_from_json(value: object) -> ProviderNames:
    """The caller's ``provider_names`` (PROTOCOL.md): absent or ``null`` adds nothing."""
    if value is None:
        return REGISTRY_ONLY
    if not isinstance(value, Mapping):
        raise ProviderNamesError("provider_names must be an object")
    for name, issuer in value.items():
        if not (isinstance(name, str) and name and isinstance(issuer, str) and issuer):
            raise ProviderNamesError("provider_names maps non-empty names to non-empty issuers")
    return ProviderNames(dict(value))


def provider_names_from_pairs(pairs: list[str]) -> ProviderNames:
    """The caller's mapping from ``NAME=ISSUER`` words (the ``--provider-name`` option)."""
    mapping: dict[str, str] = {}
    for pair in pairs:
        name, sep, issuer = pair.partition("=")
        if not sep or not name or not issuer:
            raise ProviderNamesError(f"--provider-name {pair!r}: expected NAME=ISSUER")
        if mapping.get(name, issuer) != issuer:
            raise ProviderNamesError(f"--provider-name {name!r} is given two issuers")
        mapping[name] = issuer
    return ProviderNames(mapping) if mapping else REGISTRY_ONLY
