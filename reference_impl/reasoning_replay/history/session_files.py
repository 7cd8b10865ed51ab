"""A session directory's files (SPEC H1): the names that make a file a history or a session's
``session.json``, and the provider each history file was written with as ``session.json`` records it
(SPEC H3, P4). Used by the walks (:mod:`.walk`, :mod:`.store_walk`) and by the validation of one
file (:mod:`.validation`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePath
from typing import Final

from .safe_files import open_regular

SESSION_FILE_NAME: Final = "session.json"  # SPEC H1: metadata, checked for permissions only
SESSION_FILE_MAX_BYTES: Final = 16 * 1024 * 1024  # session.json is metadata: kilobytes


def is_history_name(name: str) -> bool:
    """SPEC H1: the names of a session directory's files, ``session.json`` included."""
    return name == SESSION_FILE_NAME or (
        name.endswith(".json") and name.startswith(("history_", "compacted_"))
    )


def is_session_dir(names: Iterable[str]) -> bool:
    """Whether a directory whose entries have these names is a session directory (SPEC H1)."""
    return any(
        n == SESSION_FILE_NAME or (n.startswith("history_") and n.endswith(".json")) for n in names
    )


def is_session_file(file_name: str | None) -> bool:
    """``session.json`` is metadata, private all the same (SPEC H1, H4)."""
    return file_name is not None and PurePath(file_name).name == SESSION_FILE_NAME


def session_providers(session: object) -> dict[str, str]:
    """SPEC H3, D1: the provider each history file of a session directory was written with, as
    its ``session.json`` records it (fast-agent: ``continuation.agents.<name>.provider``, with
    ``history_file`` naming the agent's file), keyed by file name and by agent name. Anything
    that is not of that shape records nothing."""
    continuation = session.get("continuation") if isinstance(session, dict) else None
    agents = continuation.get("agents") if isinstance(continuation, dict) else None
    providers: dict[str, str] = {}
    if not isinstance(agents, dict):
        return providers
    for name, agent in agents.items():
        provider = agent.get("provider") if isinstance(agent, dict) else None
        if not isinstance(provider, str):
            continue
        providers.setdefault(f"agent:{name}", provider)
        history_file = agent.get("history_file")
        if isinstance(history_file, str):
            providers.setdefault(f"file:{PurePath(history_file).name}", provider)
    return providers


def provider_of_file(file_name: str, providers: Mapping[str, str]) -> str | None:
    """The recorded provider of ``history_<agent>.json`` or ``history_<agent>_previous.json``
    (:func:`session_providers`): by the agent's ``history_file``, else by the agent name in the
    file name; None when nothing matches (the validator's configured provider applies)."""
    by_file = providers.get(f"file:{file_name}")
    if by_file is not None:
        return by_file
    if not (file_name.startswith("history_") and file_name.endswith(".json")):
        return None
    agent = file_name.removeprefix("history_").removesuffix(".json").removesuffix("_previous")
    current = providers.get(f"file:history_{agent}.json")
    return current if current is not None else providers.get(f"agent:{agent}")


def read_session_providers(directory: str) -> Mapping[str, str]:
    """The providers a session directory's ``session.json`` records, by history file name; an
    empty mapping when it cannot be read or says nothing usable (then ``--provider`` applies)."""
    try:
        with open_regular(Path(directory, SESSION_FILE_NAME)) as handle:
            data = handle.read(SESSION_FILE_MAX_BYTES + 1)
        if len(data) > SESSION_FILE_MAX_BYTES:
            return {}
        return session_providers(json.loads(data))
    except (OSError, ValueError, RecursionError):
        return {}
