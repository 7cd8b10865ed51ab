"""langchain-openai's and the Vercel AI SDK's reasons: the classes of difference between the
request each sent and the expected one, by SPEC rule and the framework's function that makes it.

Both frameworks rebuild a request from their own message types, so one classifier serves both:
it compares the two inputs item by item after putting each item in a canonical form that forgets
only what a class names (``canonical``); each framework has its own table of classes
(``LANGCHAIN``, ``VERCEL``). A difference no class explains is named by the case's own rule and
the first JSON pointer where the request differs, so it stands out for a look by hand.
``tools/framework_reasons.py`` writes the expectations files with them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from expectation_reasons import (
    Differences,
    Framework,
    Reason,
    compose,
    no_diagnostics,
    of_the_two_values,
    output_classes,
    same,
)
from reasoning_replay.suite.vectors import Case

LC: Final = "langchain_openai/chat_models/base.py"
LC_INPUT: Final = f"{LC}::_construct_responses_api_input"
LC_RESULT: Final = f"{LC}::_construct_lc_result_from_responses_api"
LANGCHAIN: Final[Differences] = {
    "type-added": (
        "P2",
        f"a message item stored without `type` is sent with `type: message` ({LC_INPUT})",
    ),
    "assistant-rebuilt": (
        "P2",
        "an assistant message is rebuilt from its text blocks as `output_text` parts with "
        f"`annotations: []` ({LC_RESULT} keeps text blocks, {LC_INPUT} rebuilds the message)",
    ),
    "assistant-id-dropped": (
        "P2",
        "under `store=False` an assistant message's `id` is not sent, for every target "
        f"({LC_INPUT})",
    ),
    "status-added": (
        "P2",
        "an item's `status` is kept from the output item and sent "
        f"({LC_RESULT} stores the raw item)",
    ),
    "developer-as-system": (
        "P2",
        "a system or developer message is rebuilt with another role "
        f"({LC}::_convert_message_to_dict)",
    ),
    "empty-message-dropped": (
        "P2",
        "a message whose content is empty is not sent (a user message with no content block, "
        f"an assistant message with no text block: {LC_INPUT})",
    ),
    "extra-body": (
        "F8/F11",
        "`extra_body` members are merged over the request's own fields, `model` included "
        f"({LC}::BaseChatOpenAI.extra_body, passed to the openai client)",
    ),
    "duplicate": (
        "D2",
        "an exact duplicate reasoning item is sent again: langchain-openai has no reasoning "
        f"dedupe ({LC_INPUT} appends every reasoning block)",
    ),
    "no-conflict": (
        "D3",
        "langchain-openai detects no id/ciphertext conflict: both items are kept as plain "
        f"items ({LC_INPUT})",
    ),
    "foreign-sent": (
        "P4",
        "another issuer's reasoning item is sent: an AIMessage records no issuer and the "
        f"request builder has no issuer check ({LC_INPUT})",
    ),
    "reasoning-missing": (
        "P2",
        f"a reasoning item is not sent ({LC_INPUT} keeps only blocks with encrypted_content "
        "under store=False)",
    ),
    "reasoning-rebuilt": ("P1", f"a reasoning item is sent with other members ({LC_INPUT})"),
    "compaction-moved": (
        "P2",
        "a compaction item is sent in another place: langchain-openai keeps compaction only in an "
        f"AIMessage ({LC_INPUT})",
    ),
    "update-sent": (
        "F2",
        "a stored configuration_update is sent where it stands: langchain-openai keeps no effort "
        f"state and sends every block a user attached ({LC_INPUT})",
    ),
    "update-missing": (
        "F2/F3",
        "no configuration_update is planned at a turn whose effort differs: langchain-openai keeps "
        "no effort state; an update is a block the user attaches by hand "
        f"({LC}::BaseChatOpenAI.reasoning_effort, {LC_INPUT})",
    ),
    "effort": (
        "F1/F10",
        "the request-level effort is the configured one, not the history's baseline: "
        "langchain-openai sends `reasoning_effort` as given "
        f"({LC}::_construct_responses_api_payload)",
    ),
    "reasoning-members": (
        "F11",
        "`reasoning` differs from the expected members "
        f"({LC}::_construct_responses_api_payload sends the `reasoning` field as given)",
    ),
    "key": (
        "K2",
        "the key is the `prompt_cache_key` the user passes; langchain-openai keeps no key with "
        f"the history ({LC}::BaseChatOpenAI._get_request_payload)",
    ),
    "continuation": (
        "F9",
        "the continuation differs: `use_previous_response_id` sends the messages after the last "
        f"AIMessage with a response id ({LC}::_get_last_messages)",
    ),
    "store": (
        "P5",
        "`store` and `include` are not sent unless configured "
        f"({LC}::BaseChatOpenAI._default_params)",
    ),
    "missed-rejection": (
        "F8",
        "langchain-openai has no such check: it sends the request "
        f"({LC}::_construct_responses_api_payload)",
    ),
    "refused": (
        "P2",
        "langchain-openai raises before sending (the `raised` reply's message says what): "
        f"{LC}::BaseChatOpenAI._generate",
    ),
    "no-diagnostics": (
        "P2",
        "langchain-openai reports no diagnostics and has no codes (the verdict is met): "
        f"{LC_INPUT}",
    ),
}

AI: Final = "@ai-sdk/openai/src/responses/convert-to-openai-responses-input.ts"
AI_INPUT: Final = f"{AI}::convertToOpenAIResponsesInput"
AI_MODEL: Final = "@ai-sdk/openai/src/responses/openai-responses-language-model.ts"
AI_PREPARE: Final = f"{AI_MODEL}::OpenAIResponsesLanguageModel.prepareRequest"
AI_GENERATE: Final = f"{AI_MODEL}::OpenAIResponsesLanguageModel.doGenerate"
VERCEL: Final[Differences] = {
    "type-dropped": (
        "P2",
        f"message items are rebuilt without `type` (explicitMessageItemType is off: {AI_INPUT})",
    ),
    "user-content-parts": (
        "P2",
        "a user message's string content is rebuilt as `input_text` parts (ai's "
        f"convertToLanguageModelPrompt makes text parts, {AI_INPUT} maps them)",
    ),
    "assistant-rebuilt": (
        "P2",
        "an assistant message is rebuilt from its text parts, one message per output text with "
        f"string content ({AI_GENERATE} stores text parts, {AI_INPUT} rebuilds them)",
    ),
    "assistant-id-dropped": (
        "P2",
        "under `store: false` an assistant message's `id` is not sent, for every target "
        f"({AI_INPUT})",
    ),
    "function-call-id-dropped": (
        "P2",
        "a function call is sent without its `id` (the item id is kept in "
        f"providerOptions.openai.itemId, but {AI_INPUT} never sends it)",
    ),
    "arguments-rebuilt": (
        "P2",
        "a function call's `arguments` are re-serialised from the parsed input "
        f"({AI_INPUT}, serializeToolCallArguments)",
    ),
    "developer-as-system": (
        "P2",
        "a system or developer message is sent with the role of the model's "
        f"systemMessageMode ({AI_PREPARE})",
    ),
    "duplicate": (
        "D2",
        "an exact duplicate reasoning item is sent again: the SDK merges reasoning parts by "
        f"item id within one assistant message only ({AI_INPUT}, reasoningMessages)",
    ),
    "merged": (
        "P2/D2",
        "two reasoning items of one id in one assistant message are merged into one item, "
        f"summaries joined ({AI_INPUT}, reasoningMessages)",
    ),
    "no-conflict": (
        "D3",
        "the SDK detects no id/ciphertext conflict: both items are kept as plain items "
        f"({AI_INPUT})",
    ),
    "foreign-sent": (
        "P4",
        "another issuer's reasoning item is sent: every part is stored under the `openai` "
        "namespace whatever the base URL, and the request builder has no issuer check "
        f"({AI_PREPARE}, providerOptionsName)",
    ),
    "reasoning-missing": (
        "P2",
        f"a reasoning item is not sent ({AI_INPUT})",
    ),
    "reasoning-rebuilt": (
        "P1",
        "a reasoning item is rebuilt from its parts: its `content` (raw reasoning text) and any "
        f"member the SDK does not model are not sent ({AI_GENERATE}, {AI_INPUT})",
    ),
    "compaction-moved": (
        "P2",
        f"a compaction item is sent in another place or form ({AI_INPUT})",
    ),
    "update-sent": (
        "F2",
        "a stored configuration_update is sent where it stands: the SDK keeps no effort state and "
        f"sends every reasoningEffortUpdate a user attached ({AI_INPUT})",
    ),
    "update-missing": (
        "F2/F3",
        "no configuration_update is planned at a turn whose effort differs: the SDK keeps no "
        "effort state; an update is a system message the user attaches by hand "
        f"({AI_INPUT}, reasoningEffortUpdate)",
    ),
    "effort": (
        "F1/F10",
        "the request-level effort is the configured `reasoningEffort`, not the history's baseline "
        f"({AI_PREPARE}, resolveOpenAIReasoningEffort)",
    ),
    "reasoning-members": (
        "F11",
        "`reasoning` differs from the expected members: the SDK adds `summary: detailed` or drops "
        f"the effort of a model its catalog says does not reason ({AI_PREPARE})",
    ),
    "key": (
        "K2",
        "the key is the `promptCacheKey` option; the SDK keeps no key with the history "
        f"({AI_PREPARE})",
    ),
    "continuation": (
        "F9",
        "with `previousResponseId` the SDK re-sends the history's items: only reasoning items "
        f"(and stored provider tool calls) are left out ({AI_INPUT}, hasPreviousResponseId)",
    ),
    "store": (
        "P5",
        "`store` is not sent unless configured, and the include entry is added only with "
        f"`store: false` for a model the SDK's catalog says reasons ({AI_PREPARE})",
    ),
    "missed-rejection": (
        "F8",
        f"the SDK has no such check: it sends the request ({AI_PREPARE})",
    ),
    "refused": (
        "P2",
        "the SDK throws before sending (the `raised` reply's message says what): it validates "
        f"its provider options in {AI_PREPARE} and the prompt in "
        "ai/src/prompt/standardize-prompt.ts::standardizePrompt",
    ),
    "no-diagnostics": (
        "P2",
        f"the SDK reports no diagnostics and has no codes (the verdict is met): {AI_INPUT}",
    ),
}


def kind(item: Mapping[str, Any]) -> str:
    return str(item.get("type", "message"))


def text_of(content: Any) -> Any:
    """A message's content with its form forgotten: the text of its text parts, or the parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(
        isinstance(p, Mapping) and p.get("type") in ("input_text", "output_text", "text")
        for p in content
    ):
        return "".join(str(p.get("text")) for p in content)
    return content


def canonical(item: Mapping[str, Any]) -> dict[str, Any]:
    """An item with every form-only difference a class names forgotten."""
    if kind(item) == "message":
        role = item.get("role")
        return {
            "type": "message",
            "role": "system" if role == "developer" else role,
            "content": text_of(item.get("content")),
        }
    if kind(item) == "function_call":
        try:
            arguments = json.loads(item.get("arguments", ""))
        except ValueError:
            arguments = item.get("arguments")
        return {
            "type": "function_call",
            "call_id": item.get("call_id"),
            "name": item.get("name"),
            "arguments": arguments,
        }
    if kind(item) == "reasoning":
        return {"type": "reasoning", "id": item.get("id"), "cipher": item.get("encrypted_content")}
    return {k: v for k, v in item.items() if k != "status"}


def form_classes(expected: Mapping[str, Any], actual: Mapping[str, Any]) -> set[str]:
    """What differs between two items of the same canonical form."""
    found: set[str] = set()
    if kind(expected) == "message":
        if "type" in expected and "type" not in actual:
            found.add("type-dropped")
        if "type" not in expected and "type" in actual:
            found.add("type-added")
        if expected.get("role") != actual.get("role"):
            found.add("developer-as-system")
        if not same(expected.get("content"), actual.get("content")):
            role = expected.get("role")
            found.add("assistant-rebuilt" if role == "assistant" else "user-content-parts")
        if "id" in expected and "id" not in actual:
            found.add("assistant-id-dropped")
    elif kind(expected) == "function_call":
        if "id" in expected and "id" not in actual:
            found.add("function-call-id-dropped")
        if expected.get("arguments") != actual.get("arguments"):
            found.add("arguments-rebuilt")
    elif kind(expected) == "reasoning":
        if len(actual.get("summary") or []) > len(expected.get("summary") or []):
            found.add("merged")
        if {k: v for k, v in actual.items() if k != "summary"} != {
            k: v for k, v in expected.items() if k != "summary"
        } or len(actual.get("summary") or []) < len(expected.get("summary") or []):
            found.add("reasoning-rebuilt")
    if "status" in actual and "status" not in expected:
        found.add("status-added")
    rest_e = {k: v for k, v in expected.items() if k not in ("type", "id", "status")}
    rest_a = {k: v for k, v in actual.items() if k not in ("type", "id", "status")}
    if not found and not same(rest_e, rest_a):
        found.add("reasoning-rebuilt" if kind(expected) == "reasoning" else "own-item")
    return found


def classify_input(expected: Sequence[Any], actual: Sequence[Any]) -> set[str]:
    if same(expected, actual):
        return set()
    found: set[str] = set()
    want = [canonical(i) for i in expected]
    got = [canonical(i) for i in actual]
    updates_e = [i for i in want if kind(i) == "configuration_update"]
    updates_a = [i for i in got if kind(i) == "configuration_update"]
    if not same(positions(want), positions(got)):
        found.add("update-missing" if len(updates_a) < len(updates_e) else "update-sent")
        if len(updates_a) >= len(updates_e) and updates_e:
            found.add("update-missing")
    want = [i for i in want if kind(i) != "configuration_update"]
    got = [i for i in got if kind(i) != "configuration_update"]
    pairs_e = [i for i in expected if kind(i) != "configuration_update"]
    pairs_a = [i for i in actual if kind(i) != "configuration_update"]
    if same(want, got):
        for e, a in zip(pairs_e, pairs_a, strict=True):
            if not same(e, a):
                found |= form_classes(e, a)
        return found
    found |= reasoning_classes(want, got)
    others_e = [i for i in want if kind(i) != "reasoning"]
    others_a = [i for i in got if kind(i) != "reasoning"]
    if not same(others_e, others_a):
        found |= other_classes(others_e, others_a)
    elif not found:
        found.add("own-item")
    kept_e = [i for i in pairs_e if kind(i) != "reasoning"]
    kept_a = [i for i in pairs_a if kind(i) != "reasoning"]
    if len(kept_e) == len(kept_a):
        for e, a in zip(kept_e, kept_a, strict=True):
            if same(canonical(e), canonical(a)) and not same(e, a):
                found |= form_classes(e, a)
    return found


def positions(items: Sequence[Mapping[str, Any]]) -> list[tuple[int, str]]:
    """Each update with the number of non-update items before it."""
    out, before = [], 0
    for item in items:
        if kind(item) == "configuration_update":
            out.append((before, json.dumps(item, sort_keys=True)))
        else:
            before += 1
    return out


def reasoning_classes(
    want: Sequence[Mapping[str, Any]], got: Sequence[Mapping[str, Any]]
) -> set[str]:
    found: set[str] = set()
    keys_want = [(i["id"], i["cipher"]) for i in want if kind(i) == "reasoning"]
    keys_got = [(i["id"], i["cipher"]) for i in got if kind(i) == "reasoning"]
    if keys_want == keys_got:
        return found
    if len(keys_got) > len(set(keys_got)) and len(set(keys_got)) < len(keys_got) - (
        len(keys_want) - len(set(keys_want))
    ):
        found.add("duplicate")
    ids_want = {k[0] for k in keys_want}
    if any(k not in keys_want for k in keys_got):
        same_id = [k for k in keys_got if k not in keys_want and k[0] in ids_want]
        found.add("no-conflict" if same_id else "foreign-sent")
    if any(k not in keys_got for k in keys_want):
        found.add("reasoning-missing")
    if not found and sorted(keys_got) == sorted(keys_want):
        found.add("compaction-moved")
    if not found:
        found.add("duplicate" if len(keys_got) > len(keys_want) else "reasoning-missing")
    return found


def other_classes(want: Sequence[Mapping[str, Any]], got: Sequence[Mapping[str, Any]]) -> set[str]:
    if sorted(json.dumps(i, sort_keys=True) for i in want) == sorted(
        json.dumps(i, sort_keys=True) for i in got
    ):
        return {"compaction-moved"}
    missing = [i for i in want if i not in got]
    if missing and all(kind(i) == "message" and i.get("content") in ([], "") for i in missing):
        rest = [i for i in want if i not in missing]
        return {"empty-message-dropped"} | (set() if same(rest, got) else {"own-item"})
    return {"own-item"}


def classify_plan(expected: Mapping[str, Any], actual: Mapping[str, Any]) -> set[str]:
    if not isinstance(actual.get("input"), list):
        # an `extra_body` member merged over the request's own `input`
        found = {"extra-body"}
    else:
        found = classify_input(expected.get("input") or [], actual["input"])
    if actual.get("previous_response_id", "") is None:
        found.add("extra-body")
    elif "previous_response_id" in expected or "previous_response_id" in actual:
        sent = [i for i in actual.get("input") or [] if kind(i) != "configuration_update"]
        tail = [i for i in expected.get("input") or [] if kind(i) != "configuration_update"]
        if expected.get("previous_response_id") != actual.get("previous_response_id") or len(
            sent
        ) > len(tail):
            found = {"continuation"} | (found & {"update-missing", "update-sent"})
    want_r, got_r = expected.get("reasoning") or {}, actual.get("reasoning") or {}
    if want_r.get("effort") != got_r.get("effort"):
        found.add("effort")
    elif any(got_r.get(k) != v for k, v in want_r.items()):
        found.add("reasoning-members")
    if expected.get("prompt_cache_key") != actual.get("prompt_cache_key"):
        found.add("key")
    if expected.get("store") != actual.get("store") or not set(
        expected.get("include") or []
    ) <= set(actual.get("include") or []):
        found.add("store")
    if expected.get("model") != actual.get("model"):
        found.add("extra-body")
    return found


CLASSIFIERS: Final = of_the_two_values(classify_input, classify_plan)


def verdict_reason(differences: Differences) -> Callable[[Case, Mapping[str, Any]], Reason]:
    """The reason of a case failing in the verdict profile, by the framework's table."""

    def reason(case: Case, result: Mapping[str, Any]) -> Reason:
        outcome = result["profiles"]["verdict"]["outcome"]
        detail = result["detail"]
        if outcome == "missed_rejection":
            classes = {"missed-rejection"}
        elif outcome == "false_rejection":
            # the case's own rule: what the framework refused is what that rule says to accept
            text = compose(differences, {"refused"}, detail).split(": ", 1)[1]
            return Reason(f"SPEC {case.spec}: {text}")
        else:
            classes = output_classes(case, detail, CLASSIFIERS)
        known = {name for name in classes if name in differences}
        if known != classes or not known:
            text = f"SPEC {case.spec}: the request differs at {detail.get('pointer')}" + (
                f" ({compose(differences, known, detail)[5:]})" if known else ""
            )
            return Reason(text, explained=False)
        return Reason(compose(differences, known, detail))

    return reason


LANGCHAIN_OPENAI: Final = Framework(
    name="langchain-openai",
    verdict=verdict_reason(LANGCHAIN),
    diagnostics=no_diagnostics(LANGCHAIN),
)
VERCEL_AI: Final = Framework(
    name="vercel-ai", verdict=verdict_reason(VERCEL), diagnostics=no_diagnostics(VERCEL)
)
