"""History forms and applicability (SPEC CL2, CL3, CL4): every vector's form tag is the computed
one and `conformance check` says so when it is not; a case goes to an implementation in the form
it reads, or is reported not_applicable; the conversion into the items form; what is left out
of the comparison for what an implementation announces."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fakes.suite_fixture import case, write_suite
from reasoning_replay.operations import dispatch
from reasoning_replay.suite import schemas
from reasoning_replay.suite.applicability import applicability, case_form
from reasoning_replay.suite.cases import vector_cases
from reasoning_replay.suite.check import check_suite
from reasoning_replay.suite.forms import Form, HistoryFormat, form_tags, tagged_form
from reasoning_replay.suite.implementation import Exchange
from reasoning_replay.suite.inprocess import InProcessImplementation
from reasoning_replay.suite.items_form import (
    NotNeutral,
    items_form_history,
    storage_reason,
    unanswered_tool_call,
    vector_form,
)
from reasoning_replay.suite.outcomes import Outcome
from reasoning_replay.suite.protocol import ImplementationInfo
from reasoning_replay.suite.runner import RunResult, run_cases
from reasoning_replay.suite.vectors import Case, Suite, load_bundle, make_suite

REPO = Path(__file__).resolve().parents[1]
SUITE: Suite = load_bundle(REPO / "conformance" / "vectors.bundle.json")
REPLAY = "openai-reasoning-encrypted"
CACHE_STATE = "fast-agent-responses-cache-state"
KEY = "0123456789abcdef0123456789abcdef"
ENVELOPE = (
    '{"schema":"fast-agent.openai-responses.reasoning-replay","version":1,'
    '"item":{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAA"}}'
)
ITEM = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"}
RECORD = '{"model":"gpt-6-astra","key":"' + KEY + '","effort":"low"}'
UNSET = object()


class Announcing(InProcessImplementation):
    """The reference, announcing the history forms and operations a test gives, and keeping
    every case it is sent (as sent)."""

    def __init__(
        self,
        formats: tuple[str, ...] | None,
        operations: Sequence[str] | None = None,
        answer: Any = None,
    ) -> None:
        super().__init__()
        self.formats = formats
        self.announced = operations
        self.answer = answer  # (case, output) -> output, to give wrong answers on purpose
        self.sent: list[Case] = []

    def start(self) -> ImplementationInfo:
        info = super().start()
        assert isinstance(info, ImplementationInfo)
        operations = tuple(self.announced) if self.announced is not None else info.operations
        return replace(info, history_formats=self.formats, operations=operations)

    def run_batch(self, items: Iterable[tuple[int, Case]]) -> Iterator[Exchange]:
        for seq, sent in items:
            self.sent.append(sent)
            exchange = self.run(seq, sent)
            if self.answer is not None:
                from reasoning_replay.suite.protocol import OutputReply  # noqa: PLC0415

                assert isinstance(exchange.reply, OutputReply)
                changed = self.answer(sent, dict(exchange.reply.output))
                exchange = replace(exchange, reply=OutputReply(changed))
            yield exchange


def run(impl: Announcing, *cases: Case, judged_as: HistoryFormat | None = None) -> RunResult:
    return run_cases(impl, make_suite(cases, "t", "0" * 64), cases, judged_as=judged_as)


def first(form: Form, operation: str, *, accepted: bool = True, where: Any = None) -> Case:
    return next(
        c
        for c in SUITE.cases
        if c.operation == operation
        and tagged_form(c) is form
        and (c.expect.output is not None) == accepted
        and (where is None or where(c))
    )


def has_replay_block(c: Case) -> bool:
    messages = c.input["history"]["messages"]
    return any(m.get("channels", {}).get(REPLAY) for m in messages)


# ---------------------------------------------------------------------------------------------
# The form of a vector, and the check


def test_every_vector_carries_the_form_its_history_gives() -> None:
    wrong = [
        (c.id, form_tags(c.tags), vector_form(c.operation, c.input).tag)
        for c in SUITE.cases
        if form_tags(c.tags) != (vector_form(c.operation, c.input).tag,)
    ]
    assert wrong == []


def test_check_refuses_a_form_tag_the_definition_does_not_give(tmp_path: Path) -> None:
    cases = [
        case("x/a", tags=["form:neutral"]),
        case("x/b", tags=["form:storage", "form:items"]),
        case("x/c", tags=["form:other"]),
        case("x/d"),
    ]
    conf = write_suite(tmp_path, {"x/a.yaml": cases})
    problems, _ = check_suite(conf, tmp_path / "SPEC.md")

    refused = sorted(p.where.split("[")[1].rstrip("]") for p in problems if p.kind == "form_tag")
    assert refused == ["x/a", "x/b", "x/c"]
    assert any("gives form:storage" in p.message for p in problems)


def history_case(
    case_id: str, history: dict[str, Any], operation: str = "replay"
) -> dict[str, Any]:
    doc = case(case_id, operation=operation, spec="X1")
    doc["input"] = {"history": history, "target": {"provider": "openai"}}
    doc["tags"] = [vector_form(operation, doc["input"]).tag]
    return doc


def test_check_refuses_a_history_ending_on_an_unanswered_tool_call(tmp_path: Path) -> None:
    call = {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}
    answered = {"type": "function_call_output", "call_id": "c1", "output": "ok"}
    user = {"role": "user", "items": [{"type": "message", "role": "user", "content": "u"}]}
    cases = [
        history_case(
            "x/ends-on-a-call", {"messages": [user, {"role": "assistant", "items": [call]}]}
        ),
        history_case(
            "x/custom",
            {
                "messages": [
                    {
                        "role": "assistant",
                        "items": [
                            {
                                "type": "custom_tool_call",
                                "call_id": "c9",
                                "name": "t",
                                "input": "x",
                            },
                            {
                                "type": "function_call_output",
                                "call_id": "c9",
                                "output": "wrong type",
                            },
                        ],
                    }
                ]
            },
        ),
        history_case(
            "x/answered", {"messages": [{"role": "assistant", "items": [call, answered]}]}
        ),
        history_case(
            "x/answered-later",
            {
                "messages": [
                    user,
                    {"role": "assistant", "items": [call]},
                    {"role": "user", "items": [answered]},
                ]
            },
        ),
    ]
    conf = write_suite(tmp_path, {"x/a.yaml": cases})
    problems, _ = check_suite(conf, tmp_path / "SPEC.md")

    refused = [p for p in problems if p.kind == "unanswered_tool_call"]
    assert sorted(p.where.split("[")[1].rstrip("]") for p in refused) == [
        "x/custom",
        "x/ends-on-a-call",
    ]
    assert "'c1' has no output after it" in " ".join(p.message for p in refused)
    assert all(unanswered_tool_call(c.input.get("history")) is None for c in SUITE.cases)


def test_check_refuses_an_items_form_history_of_another_shape(tmp_path: Path) -> None:
    partial = {"role": "assistant", "model": "gpt-6-astra", "items": []}
    cases = [history_case("x/partial-record", {"form": "items", "messages": [partial]})]
    conf = write_suite(tmp_path, {"x/a.yaml": cases})
    problems, _ = check_suite(conf, tmp_path / "SPEC.md")

    shape = [p for p in problems if p.kind == "items_history"]
    assert shape and all("x/partial-record" in p.where for p in shape)
    assert "'effort' is a dependency of 'model'" in " ".join(p.message for p in shape)


def test_an_untagged_vector_is_given_its_computed_form() -> None:
    tagged = first(Form.STORAGE, "replay")
    untagged = replace(tagged, tags=tuple(t for t in tagged.tags if not t.startswith("form:")))

    assert tagged_form(untagged) is None
    assert case_form(untagged) is Form.STORAGE


def channels_history(**message: Any) -> dict[str, Any]:
    """One assistant message with a resumable block and a record, then a user turn."""
    assistant = {
        "role": "assistant",
        "channels": {
            REPLAY: [{"type": "text", "text": ENVELOPE}],
            CACHE_STATE: [{"type": "text", "text": RECORD}],
        },
        "items": [{"type": "message", "role": "assistant", "content": "a"}],
    }
    assistant.update(message)
    return {"messages": [user_turn(), assistant, user_turn()]}


def user_turn() -> dict[str, Any]:
    return {"role": "user", "items": [{"type": "message", "role": "user", "content": "u"}]}


def with_channel(name: str, blocks: Any) -> dict[str, Any]:
    history = channels_history()
    history["messages"][1]["channels"][name] = blocks
    return history


@pytest.mark.parametrize(
    ("history", "because"),
    [
        (with_channel(REPLAY, [{"type": "text", "text": "{}"}]), "not resumable"),
        (with_channel(REPLAY, [{"type": "image"}]), "not a text block"),
        (channels_history(role="user"), "role is not assistant"),
        (channels_history(items=[ITEM]), "own item of type reasoning"),
        (channels_history(provider=None), "provider"),
        (channels_history(provider=""), "provider"),
        ({**channels_history(), "provider": 7}, "provider"),
        (with_channel(CACHE_STATE, [{"type": "text", "text": "{"}]), "malformed cache-state"),
        (with_channel(CACHE_STATE, "not an array"), "malformed cache-state"),
        (
            with_channel(CACHE_STATE, [{"type": "text", "text": RECORD.replace("low", "none")}]),
            "does not allow",
        ),
        (with_channel("fast-agent-tool-media-message", [{"type": "text", "text": "i"}]), "media"),
    ],
    ids=[
        "block-not-resumable",
        "block-not-text",
        "block-misplaced",
        "own-reasoning-item",
        "provider-null",
        "provider-empty",
        "history-provider-number",
        "record-malformed",
        "record-not-an-array",
        "record-effort-not-allowed",
        "staged-media",
    ],
)
def test_each_thing_the_items_form_cannot_carry_makes_a_history_storage(
    history: dict[str, Any], because: str
) -> None:
    reason = storage_reason(history, frozenset({"gpt-6-astra"}))

    assert reason is not None and because in reason
    with pytest.raises(NotNeutral, match=because):
        items_form_history(history, frozenset({"gpt-6-astra"}))


def test_what_the_items_form_drops_keeps_a_history_neutral() -> None:
    history = channels_history(provider="openai", response_id="resp_1")
    history["messages"][1]["channels"] |= {
        "reasoning": [{"type": "text", "text": "display only"}],
        "fast-agent-tool-media-message": [],
    }
    history["messages"][0]["channels"] = {CACHE_STATE: [{"type": "text", "text": RECORD}]}

    assert storage_reason(history, frozenset({"gpt-6-astra"})) is None


# ---------------------------------------------------------------------------------------------
# The conversion


def test_the_conversion_places_replay_items_first_and_copies_provider_id_and_record() -> None:
    history = {**channels_history(provider="openai", response_id="resp_1"), "provider": "codex"}
    history["messages"][1]["channels"]["reasoning"] = [{"type": "text", "text": "display"}]
    history["messages"][0]["channels"] = {CACHE_STATE: [{"type": "text", "text": RECORD}]}
    before = copy.deepcopy(history)

    converted = items_form_history(history, frozenset({"gpt-6-astra"}))

    user = {"role": "user", "items": [{"type": "message", "role": "user", "content": "u"}]}
    record = {"model": "gpt-6-astra", "effort": "low", "prompt_cache_key": KEY}
    assert converted == {
        "form": "items",
        "provider": "codex",
        "messages": [
            {**user, **record},  # read on assistant messages only (F6), but carried
            {
                "role": "assistant",
                "items": [ITEM, {"type": "message", "role": "assistant", "content": "a"}],
                "provider": "openai",
                "response_id": "resp_1",
                **record,
            },
            user,
        ],
    }
    assert history == before  # a pure function


def test_every_converted_neutral_history_has_the_shape_of_the_items_form() -> None:
    converted = vector_cases(operation=["replay", "plan"], history_formats=("items",))

    assert len(converted) == sum(
        1
        for c in SUITE.cases
        if c.operation in ("replay", "plan") and case_form(c) is not Form.STORAGE
    )
    bad = [
        (c.id, errors)
        for c in converted
        if (errors := schemas.errors(schemas.ITEMS_HISTORY, c.input["history"]))
    ]
    assert bad == []


# ---------------------------------------------------------------------------------------------
# Applicability


def test_a_storage_vector_is_not_applicable_to_an_items_only_implementation() -> None:
    storage = [first(Form.STORAGE, "read"), first(Form.STORAGE, "replay")]
    impl = Announcing(("items",))

    result = run(impl, *storage)

    assert [r.outcome for r in result.results] == [Outcome.NOT_APPLICABLE] * 2
    assert result.totals()[Outcome.SKIPPED] == 0
    assert impl.sent == []
    assert "needs the channels form" in (result.results[0].verdict.detail or "").__str__()


def test_a_neutral_vector_is_sent_in_the_items_form_to_an_items_only_implementation() -> None:
    neutral = first(Form.NEUTRAL, "replay", where=has_replay_block)
    impl = Announcing(("items",))

    result = run(impl, neutral)

    assert result.results[0].outcome is Outcome.PASS
    assert result.results[0].history_format is HistoryFormat.ITEMS
    (sent,) = impl.sent
    assert sent.input["history"]["form"] == "items"
    assert sent.input["target"] == neutral.input["target"]
    assert any(
        item.get("type") == "reasoning"
        for m in sent.input["history"]["messages"]
        for item in m["items"]
    )


def test_a_neutral_vector_goes_as_written_to_an_implementation_that_reads_channels() -> None:
    neutral = first(Form.NEUTRAL, "replay", where=has_replay_block)
    impl = Announcing(None)  # no history_formats: the channels form

    result = run(impl, neutral)

    assert result.results[0].outcome is Outcome.PASS
    assert impl.sent[0].input == neutral.input


def test_an_items_vector_is_not_applicable_to_a_channels_only_implementation() -> None:
    items = first(Form.ITEMS, "replay")

    channels_only = run(Announcing(None), items)
    both = Announcing(("channels", "items"))
    read_both = run(both, items)

    assert channels_only.results[0].outcome is Outcome.NOT_APPLICABLE
    assert read_both.results[0].outcome is Outcome.PASS
    assert both.sent[0].input == items.input


def test_judged_as_an_unannounced_form_leaves_every_history_case_not_applicable() -> None:
    cases = (first(Form.NEUTRAL, "replay"), first(Form.NEUTRAL, "dedupe"))

    result = run(Announcing(None), *cases, judged_as=HistoryFormat.ITEMS)

    assert [r.outcome for r in result.results] == [Outcome.NOT_APPLICABLE, Outcome.PASS]
    assert result.history_formats == ()


def test_applicability_follows_the_table_of_cl4() -> None:
    channels, items = (HistoryFormat.CHANNELS,), (HistoryFormat.ITEMS,)
    neutral_plan = first(Form.NEUTRAL, "plan")
    read = first(Form.STORAGE, "read")
    redact = first(Form.NEUTRAL, "redact")

    assert applicability(neutral_plan, channels).history_format is HistoryFormat.CHANNELS
    assert applicability(neutral_plan, items).history_format is HistoryFormat.ITEMS
    assert applicability(neutral_plan, (*channels, *items)).history_format is HistoryFormat.CHANNELS
    assert not applicability(neutral_plan, ()).applies
    assert not applicability(read, items).applies
    assert applicability(redact, items) == applicability(redact, channels)
    assert applicability(redact, items).history_format is None


def test_a_wrong_neutral_tag_is_not_applicable_and_names_the_check() -> None:
    storage = first(Form.STORAGE, "replay")
    mistagged = replace(
        storage, tags=(*[t for t in storage.tags if "form:" not in t], "form:neutral")
    )

    result = run(Announcing(("items",)), mistagged)

    assert result.results[0].outcome is Outcome.NOT_APPLICABLE
    assert "conformance check" in str(result.results[0].verdict.detail)


def test_the_reference_passes_every_neutral_and_items_case_in_the_items_form() -> None:
    result = run_cases(InProcessImplementation(), SUITE, SUITE.cases, judged_as=HistoryFormat.ITEMS)

    totals = result.totals()
    storage = sum(1 for c in SUITE.cases if case_form(c) is Form.STORAGE)
    assert result.ok
    assert totals[Outcome.NOT_APPLICABLE] == storage
    assert totals[Outcome.PASS] == len(SUITE.cases) - storage
    converted = [r for r in result.results if r.history_format is HistoryFormat.ITEMS]
    assert len(converted) >= 300


# ---------------------------------------------------------------------------------------------
# What is left out of the comparison (SPEC CL2)


def wrong_record(sent: Case, output: dict[str, Any]) -> dict[str, Any]:
    return {**output, "record": {"model": "x", "key": "y", "effort": "z"}}


def test_an_items_form_plan_is_judged_without_its_record() -> None:
    plan = first(Form.NEUTRAL, "plan")

    in_items = run(Announcing(("items",), answer=wrong_record), plan)
    in_channels = run(Announcing(("channels",), answer=wrong_record), plan)
    without = run(Announcing(("items",), answer=lambda s, o: {"request": o["request"]}), plan)
    wrong_request = run(
        Announcing(
            ("items",), answer=lambda s, o: {**o, "request": {**o["request"], "store": True}}
        ),
        plan,
    )

    assert in_items.results[0].outcome is Outcome.PASS
    assert in_channels.results[0].outcome is Outcome.FAIL
    assert without.profiles[0].results[0].outcome is Outcome.PASS  # verdict: no diagnostics
    assert without.results[0].outcome is Outcome.FAIL  # diagnostics: they are compared
    assert wrong_request.results[0].outcome is Outcome.FAIL


def bogus_counters(sent: Case, output: dict[str, Any]) -> dict[str, Any]:
    return {**output, "counters": {"bogus": 1}}


def test_replay_counters_are_judged_only_with_telemetry() -> None:
    replay = first(Form.NEUTRAL, "replay")
    every = Announcing(None, answer=bogus_counters)
    no_telemetry = Announcing(None, ["replay", "plan"], answer=bogus_counters)
    dropped = Announcing(
        None, ["replay"], answer=lambda s, o: {k: v for k, v in o.items() if k != "counters"}
    )

    assert run(every, replay).results[0].outcome is Outcome.FAIL
    assert run(no_telemetry, replay).results[0].outcome is Outcome.PASS
    assert run(dropped, replay).results[0].outcome is Outcome.PASS


def test_what_is_left_unjudged_is_only_what_cl2_names() -> None:
    replay = first(Form.NEUTRAL, "replay")
    wrong_input = Announcing(None, ["replay"], answer=lambda s, o: {**o, "input": []})
    dedupe = first(Form.NEUTRAL, "dedupe")
    wrong_dedupe_counters = Announcing(None, ["dedupe"], answer=bogus_counters)

    assert run(wrong_input, replay).results[0].outcome is Outcome.FAIL
    assert run(wrong_dedupe_counters, dedupe).results[0].outcome is Outcome.FAIL


def test_the_defaults_probe_is_kept_whatever_the_outcome() -> None:
    defaults = first(Form.NEUTRAL, "defaults")
    no_store = Announcing(None, answer=lambda s, o: {"request": {"prompt_cache_key": "k"}})

    result = run(no_store, defaults)

    assert result.results[0].outcome is Outcome.FAIL
    ((probed_case, probe),) = result.probes
    assert probed_case.id == defaults.id
    assert probe.to_document() == {
        "model": defaults.input["model"],
        "target_provider": defaults.input["target_provider"],
        "answer": "output",
        "key_form": "other",
    }


def test_the_reference_answers_defaults_with_p5_and_a_fresh_instance_key() -> None:
    inputs: Mapping[str, Any] = {"model": "gpt-6-astra", "target_provider": "openai"}
    first_answer, second_answer = dispatch("defaults", inputs), dispatch("defaults", inputs)

    assert first_answer.output is not None and second_answer.output is not None
    request = first_answer.output["request"]
    assert request["store"] is False
    assert request["include"] == ["reasoning.encrypted_content"]
    assert len(request["prompt_cache_key"]) == 32
    assert request["prompt_cache_key"] != second_answer.output["request"]["prompt_cache_key"]
    assert "reasoning" not in request


def test_the_framework_authors_table_has_the_suites_counts() -> None:
    """conformance/README.md's table is generated (tools/results_page.py); counted again here."""
    readme = (REPO / "conformance" / "README.md").read_text(encoding="utf-8")
    must = [c for c in SUITE.cases if c.level == "MUST"]

    def count(operation: str, form: Form) -> int:
        return sum(1 for c in must if c.operation == operation and case_form(c) is form)

    def cell(operation: str, form: Form) -> str:
        n = count(operation, form)
        rejects = sum(
            1
            for c in must
            if c.operation == operation and case_form(c) is form and c.expect.is_reject
        )
        if n and operation == "plan" and form is Form.NEUTRAL and rejects:
            return f"{n:,} ({rejects:,} of them F8 rejections)"
        return f"{n:,}" if n else "—"

    forms = (Form.NEUTRAL, Form.ITEMS, Form.STORAGE)
    operations = sorted({c.operation for c in must})
    rows = [f"| `{op}` | " + " | ".join(cell(op, f) for f in forms) + " |" for op in operations]
    applicable = sum(
        count(op, form)
        for op in ("replay", "dedupe", "plan")
        for form in (Form.NEUTRAL, Form.ITEMS)
    )
    assert [row for row in rows if row not in readme] == []
    assert f"is\njudged on {applicable:,} MUST cases" in readme
