"""Deduplication of replay items (SPEC §6): the dedupe identity and the keep/drop decisions."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from .envelope import ReasoningReplayItem
from .telemetry import utf8_bytes


@dataclass(frozen=True, slots=True)
class DedupeIdentity:
    """SPEC D1: (provider, id, lowercase hex SHA-256 of the UTF-8 ciphertext)."""

    provider: str
    id: str
    ciphertext_sha256: str


def ciphertext_sha256(encrypted_content: str) -> str:
    """Lowercase hex SHA-256 of the UTF-8 bytes, a lone surrogate hashed as U+FFFD (SPEC U1)."""
    return hashlib.sha256(utf8_bytes(encrypted_content)).hexdigest()


def reasoning_replay_dedupe_key(item: ReasoningReplayItem, provider: str) -> DedupeIdentity:
    """The dedupe identity of ``item`` produced by ``provider`` (SPEC D1)."""
    return DedupeIdentity(provider, item.id, ciphertext_sha256(item.encrypted_content))


class DedupeDecision(StrEnum):
    """What happens to one replay item (SPEC D2–D5)."""

    KEEP = "keep"
    DROP_DUPLICATE = "drop_duplicate"  # SPEC D2
    KEEP_CONFLICT = "keep_conflict"  # SPEC D3


def decide(identities: Iterable[DedupeIdentity]) -> list[DedupeDecision]:
    """One decision per identity, in order (SPEC D2–D6); depends on nothing but the sequence."""
    kept: set[DedupeIdentity] = set()
    kept_ids: set[tuple[str, str]] = set()
    decisions = []
    for identity in identities:
        provider_id = (identity.provider, identity.id)
        if identity in kept:
            decisions.append(DedupeDecision.DROP_DUPLICATE)
            continue
        # SPEC D3: a new ciphertext under a known id is new state: keep it, but say so.
        decisions.append(
            DedupeDecision.KEEP_CONFLICT if provider_id in kept_ids else DedupeDecision.KEEP
        )
        kept.add(identity)
        kept_ids.add(provider_id)
    return decisions


def decide_items(items: Sequence[ReasoningReplayItem], provider: str) -> list[DedupeDecision]:
    """:func:`decide` for ``items`` all produced by ``provider``, hashing only where it matters.

    SPEC D2 and D3 only ever compare items with the same provider and ``id`` (equal identities
    have equal ids), so an item whose ``id`` occurs once is kept whatever its ciphertext, and
    the decisions of one ``id``'s items do not depend on the others (D6). Only the items of a
    repeated ``id`` need the SHA-256 of D1; the decisions are exactly those of :func:`decide`.
    """
    decisions = [DedupeDecision.KEEP] * len(items)
    counts = Counter([item.id for item in items])
    if len(counts) == len(items):  # every id once: the common case, and no hash at all
        return decisions
    repeated = [index for index, item in enumerate(items) if counts[item.id] > 1]
    identities = (reasoning_replay_dedupe_key(items[index], provider) for index in repeated)
    for index, decision in zip(repeated, decide(identities), strict=True):
        decisions[index] = decision
    return decisions
