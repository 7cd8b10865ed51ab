"""fast-agent 0.10.48's own agent loop against a loopback Responses server, end to end.

Each conversation runs fast-agent as users do (its public API, in its own environment, one
process per run, later runs resuming the session from disk) against ``responses_server``, over
SSE and over the default ``auto`` transport (WebSocket). Then: ``conformance validate`` on the
session directory fast-agent wrote finds every replay block resumable and only the named
findings (SPEC H3, H4); and for every request fast-agent sent, the reference planner, given the
history as it stood, plans the same ``input``, configuration updates, effort and
``prompt_cache_key`` (SPEC §9), or differs only as a SPEC §14 row says. docs/fast-agent-e2e.md
describes the run and its numbers.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "aiohttp", reason="aiohttp is not importable: pip install -c constraints/ci.txt '.[sdk]'"
)

from conversations import (
    ASTRA_RUNS,
    BAD_ITEMS,
    BAD_TURNS,
    CONVERSATIONS,
    EXPLICIT_KEY,
    astra_turns,
    bad_streams,
    compaction_switch,
    other_model,
)
from e2e_harness import (
    FAST_AGENT_PYTHON,
    Conversation,
    Outcome,
    plan_requests,
    route_of,
    run,
)
from fast_agent_history import ID_DEDUPE, SUMMARY_AUTO
from reasoning_replay.diagnostics import Code
from reasoning_replay.history.persistence import make_session_directory, write_private_atomic
from reasoning_replay.record.capture import canonicalize_completed_reasoning_output_item
from reasoning_replay.record.reader import parse_reasoning_replay_envelope
from reasoning_replay.record.writer import serialize_reasoning_replay_envelope

pytestmark = pytest.mark.skipif(
    not FAST_AGENT_PYTHON.exists(),
    reason="fast-agent is not installed: python tools/install_fast_agent.py makes .fast-agent-env/",
)

REPLAY_CHANNEL = "openai-reasoning-encrypted"
# fast-agent creates its session directories 0755 (SPEC §14): expected in every session.
DIRECTORY_FINDING = Code.DIRECTORY_MODE_TOO_OPEN.value
FLAGS = ("--format", "json", "--no-progress")


@pytest.fixture(scope="module", params=sorted(CONVERSATIONS))
def outcome(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    name = request.param
    return run(CONVERSATIONS[name], tmp_path_factory.mktemp(name))


def validate(directory: Path) -> list[dict[str, Any]]:
    """``conformance validate --format json`` on a directory: its one JSON document as a flat
    list, each file's findings (``type`` ``finding``) then the file (``type`` ``file``), and the
    summary (``type`` ``summary``)."""
    done = subprocess.run(
        [sys.executable, "-m", "reasoning_replay.cli.main", "validate", str(directory), *FLAGS],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    document = json.loads(done.stdout)
    lines: list[dict[str, Any]] = []
    for entry in document["files"]:
        lines += [{"type": "finding", **finding} for finding in entry["findings"]]
        lines.append({"type": "file", **{k: v for k, v in entry.items() if k != "findings"}})
    return [*lines, {"type": "summary", **document["summary"]}]


def findings(lines: Sequence[Mapping[str, Any]]) -> list[tuple[str, str, Any, Any]]:
    return sorted(
        (Path(line["path"]).name, line["code"], line.get("message_index"), line.get("block_index"))
        for line in lines
        if line["type"] == "finding"
    )


def block_counts(lines: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    summary = next(line for line in lines if line["type"] == "summary")
    counts: dict[str, int] = summary["blocks"]
    return counts


def replay_blocks(history: Path) -> Iterator[str]:
    saved = json.loads(history.read_text(encoding="utf-8"))
    for raw in saved["messages"]:
        for block in (raw.get("channels") or {}).get(REPLAY_CHANNEL, []):
            yield block["text"]


def test_fast_agent_ran_every_step_and_used_the_transport(outcome: Outcome) -> None:
    replies = [step["reply"] for result in outcome.results for step in result["steps"]]
    assert not [r for r in replies if r is not None and r.startswith("error")], replies
    transports = {received.transport for received in outcome.received}
    expected = "sse" if outcome.conversation.transport == "sse" else "websocket"
    assert transports == {expected}
    # every request carries what the checked facts say (SPEC §14 lists summary: auto)
    # a replayed tool call carries an id derived from its call id, not the provider's item id
    calls = {
        (item["id"], item["call_id"])
        for received in outcome.received
        for item in received.body["input"]
        if item.get("type") == "function_call"
    }
    assert calls == {("fc_Q9vUe3", "call_Q9vUe3")}  # the server sent the item as fc_68f1a0c2
    for received in outcome.received:
        assert received.body["store"] is False
        assert received.body["include"] == ["reasoning.encrypted_content"]
        assert received.body["reasoning"]["summary"] == "auto"


def test_session_json_records_the_route_name_and_validate_maps_it(outcome: Outcome) -> None:
    """fast-agent records its route (``responses``), not an issuer, in ``session.json``; the
    validator maps it to ``openai`` by the provider-name registry (SPEC P4, §18.2, H3)."""
    session = json.loads((outcome.session_dir / "session.json").read_text(encoding="utf-8"))
    recorded = session["continuation"]["agents"]["agent"]["provider"]
    assert recorded == route_of(outcome.conversation.model) == "responses"
    file_lines = [line for line in validate(outcome.session_dir) if line["type"] == "file"]
    history = next(line for line in file_lines if line["path"].endswith("history_agent.json"))
    assert history["provider"] == "responses"
    assert history["provider_mismatch"] == 0


def test_session_validates_with_only_the_named_findings(outcome: Outcome) -> None:
    lines = validate(outcome.session_dir)
    # every stored block is resumable (C2 envelopes); the one finding is the 0755 directory
    # fast-agent creates (§14)
    counts = block_counts(lines)
    assert counts["legacy"] == counts["redacted"] == counts["malformed"] == 0
    assert counts["resumable"] > 0
    assert [code for _, code, _, _ in findings(lines)] == [DIRECTORY_FINDING]
    # each block is byte-identical to what the reference writer makes of it (C3)
    for history in outcome.session_dir.glob("history_*.json"):
        for text in replay_blocks(history):
            read = parse_reasoning_replay_envelope(text)
            assert read.item is not None, (text, read.code)
            assert serialize_reasoning_replay_envelope(read.item) == text


def test_the_history_before_clear_shows_the_scripted_duplicate_and_conflict(
    outcome: Outcome,
) -> None:
    """``clear()`` leaves no file of the history before it: its snapshot is validated instead.

    After the resume, the "again" turn (message 11) repeats ``rs_bye`` exactly (D2) and reuses
    ``rs_thanks`` with a new ciphertext (D3): fast-agent stores both, and validate names both.
    """
    before_clear = outcome.workdir / "snapshots" / "1-1.json"
    assert findings(validate(before_clear)) == [
        ("1-1.json", Code.DEDUPE_EXACT_DUPLICATE.value, 11, 0),
        ("1-1.json", Code.DEDUPE_ID_CIPHERTEXT_CONFLICT.value, 11, 1),
    ]


def test_every_request_is_planned_alike_or_differs_by_a_section_14_row(outcome: Outcome) -> None:
    planned = plan_requests(outcome)
    assert len(planned) == len(outcome.received)
    unexplained = [p.comparison for p in planned if p.comparison.differences]
    assert not unexplained, [(c.label, c.differences) for c in unexplained] + [
        (p.plan.request, p.received.body) for p in planned if p.comparison.differences
    ][:1]
    explanations = {row for p in planned for row in p.comparison.explained.values()}
    assert explanations <= {SUMMARY_AUTO, ID_DEDUPE}
    # the scripted id reuse (D3) shows in a full replay, and is the §14 dedupe row; a
    # WebSocket continuation sends only the new items, so it never shows there
    assert (ID_DEDUPE in explanations) is (outcome.conversation.transport == "sse")


def _updates(request: Mapping[str, Any]) -> list[str]:
    return [
        item["reasoning"]["effort"]
        for item in request["input"]
        if item.get("type") == "configuration_update"
    ]


def test_effort_changes_travel_as_configuration_updates(outcome: Outcome) -> None:
    sent = [received.body for received in outcome.received]
    assert {body["reasoning"]["effort"] for body in sent[:7]} == {"low"}  # F1: the baseline
    updates = [_updates(body) for body in sent]
    if outcome.conversation.transport == "sse":
        # hello, weather (tool call, tool result), thanks, bye | again, more | fresh, after
        assert updates == [
            [],
            ["high"],
            ["high"],
            ["high"],
            ["high", "low"],
            ["high", "low"],
            ["high", "low", "xhigh"],
            [],
            ["medium"],
        ]
    else:  # F9: a continuation sends only what follows the last assistant message
        assert [body.get("previous_response_id") is not None for body in sent] == [
            False,
            True,
            True,
            False,  # a new prompt_cache_key: fast-agent starts a new chain
            True,
            False,  # a new process: a new connection, a full replay
            True,
            False,  # clear: a new chain
            True,
        ]
        assert updates == [
            [],
            ["high"],
            [],
            ["high"],
            ["low"],
            ["high", "low"],
            ["xhigh"],
            [],
            ["medium"],
        ]


@pytest.mark.parametrize("transport", ["sse", None], ids=["sse", "websocket"])
def test_bad_streams_leave_histories_that_validate_and_plan_alike(
    transport: str | None, tmp_path: Path
) -> None:
    conversation = bad_streams(transport)
    outcome = run(conversation, tmp_path)
    lines = validate(outcome.session_dir)
    assert [code for _, code, _, _ in findings(lines)] == [DIRECTORY_FINDING]
    counts = block_counts(lines)
    assert counts["legacy"] == counts["redacted"] == counts["malformed"] == 0
    stored = {
        json.loads(text)["item"]["id"]
        for history in outcome.session_dir.glob("history_agent.json")
        for text in replay_blocks(history)
    }
    # C1/C2: neither fast-agent nor the reference keeps an unfinished or uncoded item
    assert stored.isdisjoint({"rs_unfinished", "rs_no_cipher", "rs_cut"})
    for item, code in [
        (BAD_ITEMS["in progress"], Code.CAPTURE_NOT_COMPLETED),
        (BAD_ITEMS["no ciphertext"], Code.ITEM_CIPHERTEXT_INVALID),
        (BAD_ITEMS["incomplete"], Code.CAPTURE_NOT_COMPLETED),
    ]:
        assert canonicalize_completed_reasoning_output_item(item).code is code
    assert {"rs_coded", "rs_surprise", "rs_final"} <= stored
    planned = plan_requests(outcome)
    assert [p.comparison.label for p in planned if p.comparison.differences] == []
    # the truncated stream fails its turn, and fast-agent keeps neither its user message nor
    # any item of it; every other request is planned
    assert [r.body["input"][-1]["content"][0]["text"] for r in outcome.failed] == ["truncated"]
    assert len(planned) == len(BAD_TURNS) - 1


def test_a_history_the_reference_wrote_resumes_like_fast_agents_own(tmp_path: Path) -> None:
    """SPEC C3, H5: the reference's writer and persistence, read back by fast-agent's resume."""
    first = Conversation(
        name="writer",
        model="responses.gpt-6-astra?reasoning=low",
        effort="low",
        transport="sse",
        turns=astra_turns(),
        runs=ASTRA_RUNS[:1],
    )
    original = run(first, tmp_path / "original")
    written = tmp_path / "written" / original.session_dir.name
    make_session_directory(written)
    for source in sorted(original.session_dir.iterdir()):
        saved = json.loads(source.read_bytes())
        for raw in saved.get("messages", ()):
            for block in (raw.get("channels") or {}).get(REPLAY_CHANNEL, []):
                read = parse_reasoning_replay_envelope(block["text"])
                assert read.item is not None
                block["text"] = serialize_reasoning_replay_envelope(read.item)
        write_private_atomic(written / source.name, json.dumps(saved, indent=1).encode())
    resumed = Conversation(
        name="resumed",
        model=first.model,
        effort="high",
        transport="sse",
        turns=astra_turns(),
        runs=[[{"send": "again", "effort": "high"}]],
    )
    ours = run(resumed, tmp_path / "ours", resume_from=original.session_dir)
    theirs = run(resumed, tmp_path / "theirs", resume_from=written)
    assert [r.body for r in ours.received] == [r.body for r in theirs.received]
    assert ours.received[0].body["input"][-2] == {
        "type": "configuration_update",
        "reasoning": {"effort": "high"},
    }
    # and the session the reference wrote validates clean: 0700 and 0600 (H4, H5)
    assert findings(validate(written)) == []


def test_summary_compaction_rebaselines_and_a_switch_to_xai_and_back_replays_every_issuer(
    tmp_path: Path,
) -> None:
    """fast-agent's own summary compaction (F1 re-baseline), then a switch of provider.

    The switch records, for a later decision, what fast-agent sends when an agent moves from
    ``responses.gpt-6-astra`` to ``xai.grok-4.5`` in mid-session and back: it replays the OpenAI
    reasoning items to xAI, and xAI's to OpenAI (SPEC §14, P4: its histories record no issuer).
    """
    conversation = compaction_switch()
    outcome = run(conversation, tmp_path)
    lines = validate(outcome.session_dir)
    assert [code for _, code, _, _ in findings(lines)] == [DIRECTORY_FINDING]
    assert any(Path(line["path"]).name.startswith("compacted_") for line in lines)
    counts = block_counts(lines)
    assert counts["legacy"] == counts["redacted"] == counts["malformed"] == 0
    planned = plan_requests(outcome)
    assert [(p.comparison.label, p.comparison.differences) for p in planned] == [
        (p.comparison.label, ()) for p in planned
    ]
    assert len(outcome.side) == 1  # the summary request, answered by the scripted summary
    first = outcome.session_dir / "history_agent.json"
    assert "Asked about Oslo." in json.loads(first.read_text())["messages"][0]["content"][0]["text"]
    after_compaction = planned[4].received.body
    # F1: the first surviving record (the "thanks" turn, at high) is the new baseline
    assert after_compaction["reasoning"]["effort"] == "high"
    assert _updates(after_compaction) == ["medium"]
    xai = [p.received for p in planned if p.received.body["model"] == "grok-4.5"]
    assert [r.transport for r in xai] == ["websocket", "websocket"]
    assert all(r.body.get("previous_response_id") is None for r in xai)  # stateless full replay
    replayed = [i["id"] for i in xai[0].body["input"] if i.get("type") == "reasoning"]
    assert replayed == ["rs_thanks", "rs_bye"]  # OpenAI's reasoning, sent to xAI
    assert xai[0].body["reasoning"] == {"effort": "low"}  # no summary: auto for xAI
    assert xai[0].body["prompt_cache_key"] != after_compaction["prompt_cache_key"]
    back = [p.received for p in planned if p.received.body["model"] == "gpt-6-astra"][-1]
    replayed_back = [i["id"] for i in back.body["input"] if i.get("type") == "reasoning"]
    assert "rs_grok" in replayed_back  # xAI's reasoning, sent back to OpenAI


def test_a_model_without_updates_changes_effort_per_request(tmp_path: Path) -> None:
    """F10, K2, K3 on ``responses.gpt-5.4``: no update ever; the explicit key persists."""
    outcome = run(other_model(), tmp_path)
    assert [code for _, code, _, _ in findings(validate(outcome.session_dir))] == [
        DIRECTORY_FINDING
    ]
    planned = plan_requests(outcome)
    assert [p.comparison.differences for p in planned] == [()] * len(outcome.received)
    sent = [received.body for received in outcome.received]
    assert [body["reasoning"]["effort"] for body in sent] == [
        "low",
        "high",
        "high",
        "high",
        "medium",
    ]
    assert [_updates(body) for body in sent] == [[]] * 5
    keys = [body["prompt_cache_key"] for body in sent]
    assert (
        keys[3:] == [EXPLICIT_KEY, EXPLICIT_KEY] and keys[0] == keys[1] == keys[2] != EXPLICIT_KEY
    )
