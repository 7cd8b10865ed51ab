"""openai-agents' reasons: the classes of difference between what openai-agents sent and the
expected output, by the SPEC rule it breaks and the openai-agents function that makes it
(``DIFFERENCES``), and how a failing case is sorted into them.

``tools/framework_reasons.py openai-agents`` writes the expectations file with them: a reason
opens with ``SPEC <rules>: `` (the case's own rule first), as
tests/test_framework_expectations.py requires. A difference no class explains is named
``unexplained`` with the first JSON pointer where the output differs, and the tool exits 1, so it
is looked at by hand. SHOULD and MAY cases are reported, never pinned (SPEC CL1): they get no
entry (``OPENAI_AGENTS.level``).

``classify_plan`` is also what tests/e2e/test_openai_agents_e2e.py names the differences of
openai-agents' own requests with.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from expectation_reasons import Classifiers, Framework, Reason, output_classes, same
from reasoning_replay.suite.vectors import Case

ITEMS: Final = "run_internal/items.py"
MODEL: Final = "models/openai_responses.py::OpenAIResponsesModel"
DEDUPE: Final = f"{ITEMS}::deduplicate_input_items_preferring_latest"
SETTINGS: Final = "model_settings.py::ModelSettings"
# The classes of difference: (rules, what openai-agents does, and where).
DIFFERENCES: Final[dict[str, tuple[str, str]]] = {
    "foreign-sent": (
        "P4",
        "another issuer's reasoning item is sent: openai-agents records no issuer for a "
        "Responses-route provider (items.py::_output_item_to_input_item stores the item "
        f"alone) and drops only items with provider_data ({MODEL}."
        "_remove_openai_responses_api_incompatible_fields)",
    ),
    "cross-provider-dedupe": (
        "D5",
        "an item of another provider with the same id is deduplicated against this one: the "
        f"dedupe key is the id alone ({ITEMS}::_dedupe_key, {DEDUPE})",
    ),
    "same-id-replaced": (
        "D3",
        "an item with the same id and another ciphertext replaces the earlier one: dedupe by id "
        f"alone keeps the latest value at the earliest position ({DEDUPE}, {ITEMS}::_dedupe_key)",
    ),
    "duplicate-latest": (
        "D2",
        "of two exact duplicates the later one is sent, in the earlier one's place (its own "
        f"summary): dedupe keeps the latest value ({DEDUPE})",
    ),
    "reasoning-missing": (
        "P2",
        "a reasoning item of the history is not sent (run_internal/session_persistence.py::"
        f"prepare_input_with_session, {ITEMS}::drop_orphan_function_calls)",
    ),
    "xai-message-id": (
        "D7",
        "assistant message items are sent to xAI with their `id`: openai-agents has no provider "
        f"policy for xAI ({MODEL}._build_response_create_kwargs sends the stored items)",
    ),
    "own-item": (
        "P2",
        "an own item is not sent as stored (run_internal/session_persistence.py::"
        f"prepare_input_with_session, {ITEMS}::normalize_input_items_for_api)",
    ),
    "no-updates": (
        "F2",
        "no configuration_update is planned: openai-agents' effort is request-level only "
        f"({SETTINGS}.reasoning; {MODEL}._build_response_create_kwargs) and it keeps no "
        "effort per turn with its session",
    ),
    "stored-update-sent": (
        "F2",
        "a configuration_update stored in the history is sent as one of the session's items "
        "(run_internal/session_persistence.py::prepare_input_with_session replays every "
        "stored item)",
    ),
    "baseline": (
        "F1",
        "the request-level effort is the configured one, not the first record's: openai-agents "
        f"keeps no effort with its session ({SETTINGS}.reasoning)",
    ),
    "reasoning-replaced": (
        "F1/F11",
        "the run's `reasoning` replaces the agent's whole: its effort is lost "
        f"({SETTINGS}.resolve overlays fields, not members)",
    ),
    "empty-reasoning": (
        "F11",
        f"a `reasoning` with no member is sent as `{{}}` ({MODEL}._build_response_create_kwargs)",
    ),
    "key": (
        "K2",
        "the key sent is the configured one (extra_args.prompt_cache_key): openai-agents keeps "
        "no key with its session, so a stored key is not resumed "
        "(run_internal/prompt_cache_key.py::PromptCacheKeyResolver.resolve)",
    ),
    "xai-key": (
        "F12",
        "the run's prompt_cache_key is sent to xAI too: openai-agents has no provider policy "
        "(run_internal/prompt_cache_key.py::PromptCacheKeyResolver.resolve forwards a user key)",
    ),
    "extra-body-raw": (
        "F8",
        "`extra_body` members are merged into the request as given, a `null` or a `model` "
        f"included, replacing the request's own ({MODEL}._build_response_create_kwargs passes "
        "it to the OpenAI SDK)",
    ),
    "compact": (
        "F11/K2",
        "the compact request carries the model and the stored items only: no reasoning and no "
        "key (memory/openai_responses_compaction_session.py::"
        "OpenAIResponsesCompactionSession._run_compaction_locked)",
    ),
    "continuation": (
        "F9",
        "a continuation sends the run's new items only, without the history's dedupe or "
        "updates: a session cannot be combined with previous_response_id "
        "(run_internal/agent_runner_helpers.py::validate_session_conversation_settings)",
    ),
    "model": (
        "F11",
        f"the model sent is not the requested one ({MODEL}._build_response_create_kwargs)",
    ),
    "store": (
        "P5",
        "`store` is not sent and `include` is empty unless configured (ModelSettings.store, "
        f"ModelSettings.response_include: {MODEL}._build_response_create_kwargs)",
    ),
    "empty-include": (
        "P5",
        "`include` is always sent, `[]` when nothing is configured, where the plan of a model "
        f"that returns no reasoning sends none ({MODEL}._build_response_create_kwargs)",
    ),
    "missed-rejection": (
        "F8",
        "openai-agents has none of F8's checks: it sends what it is configured with "
        f"({MODEL}._build_response_create_kwargs)",
    ),
    "key-unchecked": (
        "K1/F8",
        "the key is not checked: any value configured as prompt_cache_key is sent "
        "(run_internal/prompt_cache_key.py::model_settings_with_prompt_cache_key)",
    ),
    "effort-unchecked": (
        "F8",
        "any effort the Responses API names is sent, and none is required: openai-agents has "
        f"no update-capable models ({SETTINGS}.reasoning)",
    ),
    "compact-updates": (
        "F8",
        "the compaction session plans no configuration update, so it has nothing to refuse "
        "(memory/openai_responses_compaction_session.py::OpenAIResponsesCompactionSession."
        "run_compaction)",
    ),
    "refused": ("", "openai-agents raises before sending"),
    "no-strict-policy": (
        "D3",
        f"openai-agents has no strict conflict policy ({DEDUPE})",
    ),
    "no-diagnostics": (
        "P2",
        "openai-agents reports no diagnostics and has no codes (the verdict is met)",
    ),
    "unexplained": ("", "the output differs"),
}
# Where openai-agents raises, by the exception's message (``refused``).
RAISERS: Final = (
    (
        "Session persistence cannot be combined",
        "run_internal/agent_runner_helpers.py::validate_session_conversation_settings",
    ),
    ("Agent model must be", "agent.py::Agent.__post_init__"),
    ("validation error for ModelSettings", f"{SETTINGS}, its pydantic validation"),
    ("multiple values for keyword", f"{MODEL}._build_response_create_kwargs"),
    (
        "unexpected keyword argument",
        f"{MODEL}._fetch_response passes extra_args to the OpenAI SDK, which has no such parameter",
    ),
    (
        "object is not a mapping",
        f"{MODEL}._fetch_response passes extra_body to the OpenAI SDK, which merges a mapping only",
    ),
)
DIAGNOSTIC_RULES: Final = {
    "dedupe_exact_duplicate": "D2",
    "dedupe_id_ciphertext_conflict": "D3",
    "replay_provider_mismatch": "P4",
    "cache_state_invalid": "F6",
}
EFFORT_CODES: Final = ("plan_effort_invalid",)


def kind(item: Any) -> str:
    return str(item.get("type", "message")) if isinstance(item, Mapping) else ""


def assistant_message(item: Mapping[str, Any]) -> bool:
    return kind(item) == "message" and item.get("role") == "assistant"


def without_id(item: Mapping[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in item.items() if name != "id"}


def identity(item: Mapping[str, Any]) -> tuple[Any, Any]:
    return item.get("id"), item.get("encrypted_content")


def issuers(case_input: Mapping[str, Any]) -> dict[tuple[Any, Any], set[str]]:
    """The issuers (SPEC P4) of each reasoning item of a replay or plan history."""
    history = case_input.get("history") or {}
    target = (case_input.get("target") or {}).get("provider") or case_input.get(
        "target_provider", "openai"
    )
    default = history.get("provider") or target
    out: dict[tuple[Any, Any], set[str]] = {}
    for message in history.get("messages", []):
        provider = message.get("provider")
        issuer = provider if isinstance(provider, str) and provider else default
        for item in message.get("items", []):
            if kind(item) == "reasoning":
                out.setdefault(identity(item), set()).add(issuer)
    return out


def classify_input(
    expected: Sequence[Any], actual: Sequence[Any], case_input: Mapping[str, Any] | None = None
) -> set[str]:
    if same(expected, actual):
        return set()
    found: set[str] = set()
    want_updates = [i for i in expected if kind(i) == "configuration_update"]
    got_updates = [i for i in actual if kind(i) == "configuration_update"]
    if got_updates and not same(want_updates, got_updates):
        found.add("stored-update-sent")
    if len(want_updates) > len(got_updates) or (want_updates and not got_updates):
        found.add("no-updates")
    rest_e = [i for i in expected if kind(i) != "configuration_update"]
    rest_a = [i for i in actual if kind(i) != "configuration_update"]
    if not same(rest_e, rest_a):
        found |= classify_reasoning(rest_e, rest_a, issuers(case_input or {}))
        others_e = [i for i in rest_e if kind(i) != "reasoning"]
        others_a = [i for i in rest_a if kind(i) != "reasoning"]
        if not same(others_e, others_a):
            stripped = len(others_a) == len(others_e) and all(
                same(e, a) or (assistant_message(a) and same(e, without_id(a)))
                for e, a in zip(others_e, others_a, strict=True)
            )
            found.add("xai-message-id" if stripped else "own-item")
        if not found:
            # the same items in another interleaving: an item sent in the place of its copy
            # from another issuer (the history's first copy holds the key's place)
            issued = issuers(case_input or {})
            shared = any(len(issued.get(identity(i), set())) > 1 for i in rest_a)
            found.add("cross-provider-dedupe" if shared else "own-item")
    return found


def classify_reasoning(
    expected: Sequence[Mapping[str, Any]],
    actual: Sequence[Mapping[str, Any]],
    issued: Mapping[tuple[Any, Any], set[str]],
) -> set[str]:
    found: set[str] = set()
    want = [i for i in expected if kind(i) == "reasoning"]
    got = [i for i in actual if kind(i) == "reasoning"]
    keys_want = [identity(i) for i in want]
    keys_got = [identity(i) for i in got]
    if any(k not in keys_want for k in keys_got):
        found.add("foreign-sent")
    for key in keys_want:
        if key in keys_got:
            continue
        replaced_by = [k for k in keys_got if k[0] == key[0]]
        if not replaced_by:
            lost = [k for k in issued if k[0] == key[0] and k != key]
            found.add("cross-provider-dedupe" if lost else "reasoning-missing")
            continue
        mine = issued.get(key, set())
        theirs = set().union(*(issued.get(k, set()) for k in replaced_by))
        found.add(
            "cross-provider-dedupe" if mine and theirs and mine != theirs else "same-id-replaced"
        )
    if not found and not same(want, got):
        moved = sorted(map(str, keys_want)) == sorted(map(str, keys_got))
        if moved and len(set(keys_got)) == len(keys_got) and keys_want != keys_got:
            found.add("same-id-replaced")
        else:
            found.add("duplicate-latest")
    return found


def classify_plan(
    expected: Mapping[str, Any],
    actual: Mapping[str, Any],
    case_input: Mapping[str, Any] | None = None,
) -> set[str]:
    """The classes of difference between an expected plan request and what openai-agents sent."""
    case_input = case_input or {}
    if case_input.get("endpoint") == "compact":
        compacted = classify_input(
            expected.get("input") or [], actual.get("input") or [], case_input
        )
        return compacted | {"compact"}
    metadata = case_input.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    extra_body = metadata.get("extra_body")
    # members openai-agents took from extra_body as they were given (SDK: merged into the body)
    raw = {
        name
        for name, value in (extra_body.items() if isinstance(extra_body, Mapping) else ())
        if name in actual and same(actual[name], value) and not same(expected.get(name), value)
    }
    found: set[str] = {"extra-body-raw"} if raw else set()
    # a continuation sent: previous_response_id and the new items only (else a full replay)
    continuation = (
        case_input.get("transport") == "websocket_continuation" and "previous_response_id" in actual
    )
    if "input" not in raw and continuation:
        if not same(expected.get("input"), actual.get("input")):
            found.add("continuation")
    elif "input" not in raw:
        found |= classify_input(expected.get("input") or [], actual.get("input") or [], case_input)
    want_reasoning = expected.get("reasoning") or {}
    got_reasoning = actual.get("reasoning")
    if want_reasoning.get("effort") != (got_reasoning or {}).get("effort"):
        replaced = isinstance(metadata.get("reasoning"), Mapping) and "effort" not in (
            got_reasoning or {}
        )
        found.add("reasoning-replaced" if replaced else "baseline")
    elif got_reasoning == {} and "reasoning" not in expected:
        found.add("empty-reasoning")
    if expected.get("prompt_cache_key") != actual.get("prompt_cache_key"):
        xai = case_input.get("target_provider") == "xai"
        found.add("xai-key" if xai else "key")
    if "include" not in expected and actual.get("include") == []:
        found.add("empty-include")
        if expected.get("store") != actual.get("store"):
            found.add("store")
    elif expected.get("store") != actual.get("store") or expected.get("include") != actual.get(
        "include"
    ):
        found.add("store")
    if expected.get("model") != actual.get("model") and "model" not in raw:
        found.add("model")
    if (
        expected.get("previous_response_id") != actual.get("previous_response_id")
        and "previous_response_id" not in raw
    ):
        found.add("continuation")
    return found


def classify_dedupe(
    expected: Mapping[str, Any], actual: Mapping[str, Any], case_input: Any
) -> set[str]:
    entries = case_input["entries"]
    found: set[str] = set()
    for index, (want, got) in enumerate(
        zip(expected["decisions"], actual["decisions"], strict=True)
    ):
        if want == got:
            continue
        item, provider = entries[index]["item"], entries[index]["provider"]
        others = [
            entry
            for n, entry in enumerate(entries)
            if n != index and entry["item"].get("id") == item.get("id")
        ]
        if any(entry["provider"] != provider for entry in others):
            found.add("cross-provider-dedupe")
        elif any(
            e["item"].get("encrypted_content") != item.get("encrypted_content") for e in others
        ):
            found.add("same-id-replaced")
        else:
            found.add("duplicate-latest")
    return found


def missed(code: str | None) -> set[str]:
    if code == "plan_cache_key_invalid":
        return {"key-unchecked"}
    if code in EFFORT_CODES:
        return {"effort-unchecked"}
    if code == "plan_compact_with_updates":
        return {"compact-updates"}
    return {"missed-rejection"}


def raiser(message: str) -> str:
    return next((where for text, where in RAISERS if text in message), f"{MODEL}.get_response")


CLASSIFIERS: Final = Classifiers(input=classify_input, plan=classify_plan, dedupe=classify_dedupe)


def accepted_code(result: Mapping[str, Any], response: Mapping[str, Any]) -> str | None:
    """The code of a rejection the diagnostics profile found wrong (the entry accepts it)."""
    code = (response.get("reject") or {}).get("code")
    return code if code and result["profiles"]["diagnostics"]["outcome"] == "wrong_code" else None


def verdict_reason(case: Case, result: Mapping[str, Any]) -> Reason:
    """The reason of a case failing in the verdict profile, and whether a class explains it."""
    detail = result["detail"]
    outcome = result["profiles"]["verdict"]["outcome"]
    response = json.loads(detail["response"])
    sent = json.loads(detail["request"])["input"]  # the items form, as the adapter got it
    if outcome == "missed_rejection":
        if (sent.get("options") or {}).get("conflict_policy") == "reject":
            classes = {"no-strict-policy"}
        else:
            classes = missed(case.expect.code)
    elif outcome == "false_rejection":
        classes = {"refused"}
    else:
        classes = output_classes(case, detail, CLASSIFIERS)
    explained = bool(classes)
    text = compose(case, classes or {"unexplained"}, response)
    if not explained:
        text += f" at {detail.get('pointer')}"
    return Reason(text, explained, accepted_code(result, response))


def compose(case: Case, classes: Iterable[str], response: Mapping[str, Any]) -> str:
    ordered = [name for name in DIFFERENCES if name in set(classes)]
    rules: list[str] = [case.spec]
    for name in ordered:
        for rule in DIFFERENCES[name][0].split("/"):
            if rule and rule not in rules:
                rules.append(rule)
    text = "; ".join(DIFFERENCES[name][1] for name in ordered)
    message = (response.get("reject") or {}).get("message")
    if message:
        text += f" in {raiser(message)} ({message.splitlines()[0][:140]})"
    return f"SPEC {'/'.join(rules)}: {text}"


def diagnostics_reason(case: Case, result: Mapping[str, Any]) -> Reason:
    """The reason of a case failing in the diagnostics profile only: the diagnostics or the
    code openai-agents does not give."""
    response = json.loads(result["detail"]["response"])
    code = accepted_code(result, response)
    if "reject" in response:
        text = compose(case, {"refused"}, response).replace(
            "raises before sending", "raises before sending, with no registry code"
        )
        return Reason(text, code=code)
    expected = (case.expect.output or {}).get("diagnostics") or []
    rules = sorted({DIAGNOSTIC_RULES.get(d.get("code"), case.spec) for d in expected})
    base = compose(case, {"no-diagnostics"}, response)
    head, _, tail = base.partition(": ")
    extra = [r for r in rules if r not in head]
    return Reason(f"{head}{''.join('/' + r for r in extra)}: {tail}", code=code)


OPENAI_AGENTS: Final = Framework(
    name="openai-agents",
    verdict=verdict_reason,
    diagnostics=diagnostics_reason,
    level="MUST",
)
