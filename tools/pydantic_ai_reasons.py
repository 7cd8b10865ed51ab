"""pydantic-ai's reasons: the classes of difference between the request pydantic-ai sent and the
expected one, by the SPEC rule it breaks and the pydantic-ai function that makes it
(``DIFFERENCES``), and how a failing case is sorted into them.

``tools/framework_reasons.py pydantic-ai`` writes the expectations file with them; the reasons
open with ``SPEC <rules>: `` as tests/test_framework_expectations.py requires. A difference no
class explains is named by the case's own rule and the first JSON pointer where the request
differs, so it stands out for a look by hand. ``classify_plan`` is also what
tests/e2e/test_pydantic_ai_e2e.py names the differences of pydantic-ai's own requests with.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from expectation_reasons import (
    Framework,
    Reason,
    compose,
    no_diagnostics,
    of_the_two_values,
    output_classes,
    same,
)
from reasoning_replay.suite.vectors import Case

MAP: Final = "models/openai/_responses_model.py"
# The classes of difference: (rules, what pydantic-ai does, and where).
DIFFERENCES: Final[dict[str, tuple[str, str]]] = {
    "type": (
        "P2",
        "message items are rebuilt without `type` (EasyInputMessageParam: "
        f"{MAP}::OpenAIResponsesModel._map_user_prompt, _map_response_text_part)",
    ),
    "output-message": (
        "P2",
        "an assistant message with an id is rebuilt as an output message with `annotations: []` "
        f"and `status: completed` ({MAP}::_map_response_text_part)",
    ),
    "own-item": (
        "P2",
        "an own item is not sent as stored: pydantic-ai rebuilds every item from its parts "
        f"({MAP}::_map_messages)",
    ),
    "xai-message-id": (
        "D7",
        "assistant message items are sent to xAI with their `id` (no xAI policy: "
        f"{MAP}::_map_response_text_part sends the id of a message from the same provider)",
    ),
    "foreign-id-dropped": (
        "P2",
        "the ids of another provider's own items are not sent (should_send_item_id needs the "
        f"same provider: {MAP}::_map_response_part)",
    ),
    "duplicate": (
        "D2",
        "an exact duplicate reasoning item is sent again: pydantic-ai has no reasoning dedupe "
        f"({MAP}::_map_messages)",
    ),
    "merged": (
        "P2/D2",
        "consecutive reasoning items of one id in a response are merged into one item, summaries "
        f"joined ({MAP}::_map_thinking_to_reasoning_item)",
    ),
    "think-text": (
        "P4",
        "another issuer's reasoning is not dropped but sent as `<think>` text in an assistant "
        f"message ({MAP}::_map_response_thinking_part, Model.accepts_stateless_artifacts)",
    ),
    "foreign-sent": (
        "P4",
        "another issuer's reasoning item is sent: the Codex provider's canonical_system is "
        "`openai` (providers/openai_codex.py::OpenAICodexProvider.canonical_system, "
        "Model.accepts_stateless_artifacts)",
    ),
    "reasoning-missing": (
        "P2",
        f"a reasoning item is not sent ({MAP}::_map_response_thinking_part)",
    ),
    "compaction-trim": (
        "F7/P2",
        "the history before a compaction item is not sent (models/__init__.py::"
        "Model._trim_before_compaction, called by _map_messages)",
    ),
    "update-after-user": (
        "F2",
        "the configuration_update follows the user message of its turn: pydantic-ai records an "
        "effort change at the end of the step's request (_agent_graph.py::"
        f"_record_model_settings_changes, rendered in place by {MAP}::"
        "_map_model_settings_delta_part)",
    ),
    "update-on-tool-step": (
        "F4",
        "a configuration_update is sent on a tool-result step (_agent_graph.py::"
        "_record_model_settings_changes records a change on any step's request)",
    ),
    "update-other": (
        "F2",
        "the configuration_update items differ from F2's (pydantic-ai's effort state: "
        f"_agent_graph.py::_record_model_settings_changes, {MAP}::_effort_delta_request)",
    ),
    "effort": (
        "F1/F10",
        "the request-level effort differs: pydantic-ai's baseline is the window's first "
        "ModelSettingsDeltaPart, its update-capable models are those of its own profile "
        f"(profiles/openai.py::_GPT_6_MODEL_PREFIXES, {MAP}::_effort_delta_request, "
        "models/__init__.py::_effort_window_baseline)",
    ),
    "key": (
        "K2",
        "the key is the `openai_prompt_cache_key` setting; pydantic-ai keeps no key with the "
        f"history ({MAP}::_prepare_responses_create)",
    ),
    "store": (
        "P5",
        f"`store` is not sent unless configured ({MAP}::_resolve_store)",
    ),
    "missed-rejection": (
        "F8",
        "pydantic-ai has no such check: it sends the request "
        f"({MAP}::_build_responses_request_params)",
    ),
    "refused": (
        "P2",
        "pydantic-ai raises before sending (the `raised` reply's message says what)",
    ),
    "no-diagnostics": (
        "P2",
        "pydantic-ai reports no diagnostics and has no codes (the verdict is met)",
    ),
    "no-conflict": (
        "D3",
        "pydantic-ai detects no id/ciphertext conflict: both items are kept as plain items "
        f"({MAP}::_map_messages)",
    ),
}


def message_like(item: Mapping[str, Any]) -> bool:
    return item.get("type", "message") == "message" and "role" in item


def canonical(item: Mapping[str, Any]) -> tuple[dict[str, Any], set[str]]:
    """The item with pydantic-ai's form differences undone, and which were undone."""
    undone: set[str] = set()
    out = dict(item)
    if message_like(out) and "type" not in out:
        out["type"] = "message"
        undone.add("type")
    if message_like(out) and out.get("status") == "completed":
        del out["status"]
        undone.add("output-message")
    content = out.get("content")
    if message_like(out) and isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, Mapping) and part.get("annotations") == []:
                undone.add("output-message")
                parts.append({k: v for k, v in part.items() if k != "annotations"})
            else:
                parts.append(part)
        out["content"] = parts
    return out, undone


def kinds(item: Mapping[str, Any]) -> str:
    return str(item.get("type", "message"))


def classify_input(expected: Sequence[Any], actual: Sequence[Any]) -> set[str]:
    found: set[str] = set()
    canon_actual = []
    for item in actual:
        c, undone = canonical(item)
        canon_actual.append(c)
        found |= undone
    canon_expected = [canonical(item)[0] for item in expected]
    if same(canon_expected, canon_actual):
        return found
    found |= updates(canon_expected, canon_actual)
    rest_e = [i for i in canon_expected if kinds(i) != "configuration_update"]
    rest_a = [i for i in canon_actual if kinds(i) != "configuration_update"]
    if same(rest_e, rest_a):
        return found
    found |= reasoning(rest_e, rest_a)
    others_e = [i for i in rest_e if kinds(i) != "reasoning"]
    others_a = [
        i
        for i in rest_a
        if kinds(i) != "reasoning" and not str(i.get("content", "")).startswith("<think>")
    ]
    if not same(others_e, others_a):
        if len(others_a) < len(others_e) and any(kinds(i) == "compaction" for i in others_a):
            found.add("compaction-trim")
        elif len(others_a) == len(others_e) and all(
            same(e, {k: v for k, v in a.items() if k != "id"})
            for e, a in zip(others_e, others_a, strict=True)
        ):
            found.add("xai-message-id")
        elif len(others_a) == len(others_e) and all(
            same({k: v for k, v in e.items() if k != "id"}, a)
            for e, a in zip(others_e, others_a, strict=True)
        ):
            found.add("foreign-id-dropped")
        else:
            found.add("own-item")
    return found


def updates(expected: Sequence[Mapping[str, Any]], actual: Sequence[Mapping[str, Any]]) -> set[str]:
    def positions(items: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
        out = []
        for index, item in enumerate(items):
            if kinds(item) == "configuration_update":
                before = kinds(items[index - 1]) if index else "start"
                role = str(items[index - 1].get("role", "")) if index else ""
                out.append((before + ":" + role, json.dumps(item, sort_keys=True)))
        return out

    want, got = positions(expected), positions(actual)
    if want == got:
        return set()
    found: set[str] = set()
    for place, _ in got:
        if place == "message:user":
            found.add("update-after-user")
        elif place.startswith(("function_call_output", "custom_tool_call_output")):
            found.add("update-on-tool-step")
    return found or {"update-other"}


def reasoning(
    expected: Sequence[Mapping[str, Any]], actual: Sequence[Mapping[str, Any]]
) -> set[str]:
    found: set[str] = set()
    want = [i for i in expected if kinds(i) == "reasoning"]
    got = [i for i in actual if kinds(i) == "reasoning"]
    if any(str(i.get("content", "")).startswith("<think>") for i in actual):
        found.add("think-text")
    keys_want = [(i.get("id"), i.get("encrypted_content")) for i in want]
    keys_got = [(i.get("id"), i.get("encrypted_content")) for i in got]
    if len(keys_got) > len(set(keys_got)):
        found.add("duplicate")
    if any(k not in keys_want for k in keys_got):
        found.add("foreign-sent")
    if any(k not in keys_got for k in keys_want):
        found.add("reasoning-missing")
    joined = {k for k, i in zip(keys_got, got, strict=True) if len(i.get("summary", [])) > 0}
    if any(
        k in joined and len(g.get("summary", [])) > len(w.get("summary", []))
        for k, g in zip(keys_got, got, strict=True)
        for w in want
        if (w.get("id"), w.get("encrypted_content")) == k
    ):
        found.add("merged")
    if not found and not same(want, got):
        found.add("own-item")
    return found


def classify_plan(expected: Mapping[str, Any], actual: Mapping[str, Any]) -> set[str]:
    found = classify_input(expected.get("input") or [], actual.get("input") or [])
    if (expected.get("reasoning") or {}).get("effort") != (actual.get("reasoning") or {}).get(
        "effort"
    ):
        found.add("effort")
    if expected.get("prompt_cache_key") != actual.get("prompt_cache_key"):
        found.add("key")
    if expected.get("store") != actual.get("store"):
        found.add("store")
    return found


CLASSIFIERS: Final = of_the_two_values(classify_input, classify_plan)


def verdict_reason(case: Case, result: Mapping[str, Any]) -> Reason:
    """The reason of a case failing in the verdict profile."""
    outcome = result["profiles"]["verdict"]["outcome"]
    detail = result["detail"]
    if outcome == "missed_rejection":
        classes = {"missed-rejection"}
    elif outcome == "false_rejection":
        classes = {"refused"}
    else:
        classes = output_classes(case, detail, CLASSIFIERS)
    if not classes:
        text = f"SPEC {case.spec}: the request differs at {detail.get('pointer')}"
        return Reason(text, explained=False)
    return Reason(compose(DIFFERENCES, classes, detail))


PYDANTIC_AI: Final = Framework(
    name="pydantic-ai", verdict=verdict_reason, diagnostics=no_diagnostics(DIFFERENCES)
)
