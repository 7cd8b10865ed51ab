"""Provider input (SPEC §5): replay items, and a request's ``input`` built from a history."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final

from reasoning_replay.diagnostics import Code, Diagnostic

from .dedupe import DedupeDecision, decide, reasoning_replay_dedupe_key
from .envelope import ReasoningReplayItem, check_item_value
from .history import HistoryMessage
from .item_types import is_message
from .providers import REGISTRY_ONLY, ProviderNames
from .reader import parse_reasoning_replay_envelope
from .telemetry import ReplayTelemetry, replay_telemetry

XAI: Final = "xai"  # SPEC D7


def reasoning_replay_item_to_provider_input(item: ReasoningReplayItem) -> dict[str, Any]:
    """SPEC P1: the envelope's item, exactly, with no envelope member and nothing added."""
    return item.to_provider_input()


class Transport(StrEnum):
    SSE = "sse"
    WEBSOCKET = "websocket"


class ConflictPolicy(StrEnum):
    """SPEC D3: keep a same-id/new-ciphertext item and report it, or reject the request."""

    KEEP = "keep"
    REJECT = "reject"


@dataclass(frozen=True, slots=True)
class ReplayTarget:
    """Where the request goes: the provider (its issuer is also the issuer of items whose issuer
    is unknown, SPEC P4), the transport, and the names by which providers map to issuers."""

    provider: str
    transport: Transport = Transport.SSE
    conflict_policy: ConflictPolicy = ConflictPolicy.KEEP
    provider_names: ProviderNames = REGISTRY_ONLY

    @property
    def issuer(self) -> str:
        """SPEC P4: the target provider's issuer."""
        return self.provider_names.issuer_of(self.provider)


@dataclass(frozen=True, slots=True)
class ReplayRequestInput:
    """A request's ``input`` array with what building it found (SPEC P2, D2–D3, T1).

    ``by_message`` holds each message's part of ``input`` (its replay items, then its own items),
    for callers that insert items at message boundaries (SPEC F2). ``rejected`` is set only under
    ``ConflictPolicy.REJECT``; the input is then empty.
    """

    by_message: tuple[tuple[dict[str, Any], ...], ...]
    diagnostics: tuple[Diagnostic, ...]
    deduplicated_exact: int
    id_ciphertext_conflicts: int
    rejected: Code | None = None

    @property
    def input(self) -> tuple[dict[str, Any], ...]:
        return tuple(item for items in self.by_message for item in items)

    def telemetry(self) -> ReplayTelemetry:
        return replay_telemetry(
            self.input,
            deduplicated_exact=self.deduplicated_exact,
            id_ciphertext_conflicts=self.id_ciphertext_conflicts,
        )


@dataclass(frozen=True, slots=True)
class _ReplayBlock:
    message_index: int
    block_index: int
    item: ReasoningReplayItem
    provider: str


def _block_text(block: object) -> str | None:
    if isinstance(block, Mapping) and block.get("type") == "text":
        text = block.get("text")
        if isinstance(text, str):
            return text
    return None


def _own_items(message: HistoryMessage, target: ReplayTarget) -> list[dict[str, Any]]:
    items = [dict(item) for item in message.items]
    if target.issuer == XAI:  # SPEC D7: xAI reuses assistant-message ids across turns
        for item in items:
            if is_message(item, "assistant"):  # SPEC §1.2: the short form too
                item.pop("id", None)
    return items


@dataclass(frozen=True, slots=True)
class ReplayRead:
    """What SPEC P2 finds in a history's replay blocks, before any input is built: the provider
    input of each replayed block by message index, and what building the input reports. For a
    message in the items form (SPEC CL3), ``withheld`` holds the indexes of its reasoning items
    that are not sent (another issuer's, a duplicate, not a replay item)."""

    replayed: Mapping[int, Sequence[dict[str, Any]]]
    diagnostics: tuple[Diagnostic, ...]
    deduplicated_exact: int
    id_ciphertext_conflicts: int
    withheld: Mapping[int, frozenset[int]] = field(default_factory=dict)


def _replay_sources(
    message: HistoryMessage,
) -> Iterator[tuple[int, ReasoningReplayItem | Code]]:
    """A message's replay material with its block index: each replay block read (SPEC P2), or,
    in the items form, each reasoning item at its index among the message's items (SPEC CL3)."""
    if message.reasoning_in_items:
        for index, item in enumerate(message.items):
            if item.get("type") == "reasoning":
                yield index, check_item_value(item)
        return
    for block_index, block in enumerate(message.replay_blocks):
        if message.role != "assistant":
            yield block_index, Code.REPLAY_CHANNEL_MISPLACED
            continue
        text = _block_text(block)
        if text is None:
            yield block_index, Code.BLOCK_NOT_TEXT
            continue
        read = parse_reasoning_replay_envelope(text)
        if read.item is None:
            assert read.code is not None
            yield block_index, read.code
            continue
        yield block_index, read.item


def read_replay_blocks(messages: Sequence[HistoryMessage], target: ReplayTarget) -> ReplayRead:
    """SPEC P2, D1–D3: read, attribute and deduplicate every replay block of a history.

    Never raises on data: every block that is not replayed is reported with its code.
    """
    diagnostics: list[Diagnostic] = []
    blocks: list[_ReplayBlock] = []
    target_issuer, names = target.issuer, target.provider_names
    withheld: dict[int, set[int]] = {}
    for message_index, message in enumerate(messages):
        for block_index, read in _replay_sources(message):
            if isinstance(read, Code):
                diagnostics.append(Diagnostic(read, message_index, block_index))
                withheld.setdefault(message_index, set()).add(block_index)
                continue
            # SPEC P4: names map to issuers, an unknown issuer is the target's; another issuer's
            # item is never sent and takes no part in dedupe (after the verdict, before D1-D3).
            recorded = message.provider
            issuer = target_issuer if recorded is None else names.issuer_of(recorded)
            if issuer != target_issuer:
                diagnostics.append(
                    Diagnostic(Code.REPLAY_PROVIDER_MISMATCH, message_index, block_index)
                )
                withheld.setdefault(message_index, set()).add(block_index)
                continue
            blocks.append(_ReplayBlock(message_index, block_index, read, issuer))

    decisions = decide(reasoning_replay_dedupe_key(b.item, b.provider) for b in blocks)
    replayed: dict[int, list[dict[str, Any]]] = {}
    exact = conflicts = 0
    for block, decision in zip(blocks, decisions, strict=True):
        if decision is DedupeDecision.DROP_DUPLICATE:
            exact += 1
            diagnostics.append(
                Diagnostic(Code.DEDUPE_EXACT_DUPLICATE, block.message_index, block.block_index)
            )
            withheld.setdefault(block.message_index, set()).add(block.block_index)
            continue
        if decision is DedupeDecision.KEEP_CONFLICT:
            conflicts += 1
            diagnostics.append(
                Diagnostic(
                    Code.DEDUPE_ID_CIPHERTEXT_CONFLICT, block.message_index, block.block_index
                )
            )
        replayed.setdefault(block.message_index, []).append(block.item.to_provider_input())

    diagnostics.sort(key=lambda d: (d.message_index, d.block_index))
    frozen = {index: frozenset(indexes) for index, indexes in withheld.items()}
    return ReplayRead(replayed, tuple(diagnostics), exact, conflicts, frozen)


def message_inputs(
    messages: Sequence[HistoryMessage], target: ReplayTarget, read: ReplayRead
) -> Iterator[tuple[dict[str, Any], ...]]:
    """SPEC P2: each message's part of ``input``, its replay items then its own items, one
    message at a time (a caller that consumes them as they come keeps no object per message).
    In the items form (SPEC CL3), its items in order, each reasoning item at its position unless
    it is withheld."""
    for index, message in enumerate(messages):
        if message.reasoning_in_items:
            withheld = read.withheld.get(index, frozenset())
            own = _own_items(message, target)
            yield tuple(item for at, item in enumerate(own) if at not in withheld)
            continue
        yield (*read.replayed.get(index, ()), *_own_items(message, target))


def build_replay_input(
    messages: Sequence[HistoryMessage], target: ReplayTarget
) -> ReplayRequestInput:
    """SPEC P2: the request ``input`` for a history, reasoning before each message's own items,
    only the target's own reasoning items replayed (SPEC P4).

    Never raises on data: every block that is not replayed is reported with its code.
    """
    read = read_replay_blocks(messages, target)
    exact, conflicts = read.deduplicated_exact, read.id_ciphertext_conflicts
    if conflicts and target.conflict_policy is ConflictPolicy.REJECT:
        return ReplayRequestInput(
            (), read.diagnostics, exact, conflicts, rejected=Code.DEDUPE_ID_CIPHERTEXT_CONFLICT
        )
    by_message = tuple(message_inputs(messages, target, read))
    return ReplayRequestInput(by_message, read.diagnostics, exact, conflicts)
