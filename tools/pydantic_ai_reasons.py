"""Write pydantic-ai's expectations file from a run, each failure explained by SPEC rule.

Usage::

    conformance run --impl "<pydantic-ai adapter>" --report json:run.json
    python tools/pydantic_ai_reasons.py run.json \
        conformance/implementations/pydantic-ai/expectations.yaml

Every failing case of the run (its report, ``conformance run --report json:``) gets one xfail
entry whose reason names each difference between the request pydantic-ai sent and the expected
one, by the SPEC rule it breaks and the pydantic-ai function that makes it (``DIFFERENCES``): the
reason opens with ``SPEC <rules>: `` as tests/test_pydantic_ai_expectations.py requires. A
difference no class explains is named by the case's own rule and the first JSON pointer where
the request differs, so it stands out for a look by hand. Cases that fail only in the
diagnostics profile (pydantic-ai has no codes and reports no diagnostics) get
``profile: diagnostics``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import yaml

REPO: Final = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "reference_impl"))

from reasoning_replay.atomic_files import replace_file  # noqa: E402
from reasoning_replay.suite.vectors import load_suite  # noqa: E402

RAISED: Final = "raised"
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


def same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


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


def classify_dedupe(expected: Mapping[str, Any], actual: Mapping[str, Any]) -> set[str]:
    found: set[str] = set()
    for want, got in zip(expected["decisions"], actual["decisions"], strict=True):
        if want == "drop_duplicate" and got != want:
            found.add("duplicate")
        elif want == "keep_conflict" and got != want:
            found.add("no-conflict")
        elif want != got:
            found.add("reasoning-missing")
    return found or {"no-conflict"}


def reason_for(case: Any, verdict: Mapping[str, Any], detail: Mapping[str, Any]) -> str:
    outcome = verdict["outcome"]
    if outcome == "missed_rejection":
        classes = {"missed-rejection"}
    elif outcome == "false_rejection":
        classes = {"refused"}
    else:
        actual = json.loads(detail["response"])["output"]
        expected = case.expect.output
        if case.operation == "plan":
            classes = classify_plan(expected["request"], actual["request"])
        elif case.operation == "dedupe":
            classes = classify_dedupe(expected, actual)
        elif case.operation == "defaults":
            classes = {"store"}
        else:
            classes = classify_input(expected["input"], actual["input"])
    if not classes:
        return f"SPEC {case.spec}: the request differs at {detail.get('pointer')}"
    return compose(classes, detail)


def compose(classes: Iterable[str], detail: Mapping[str, Any]) -> str:
    ordered = [name for name in DIFFERENCES if name in set(classes)]
    rules: list[str] = []
    for name in ordered:
        for rule in DIFFERENCES[name][0].split("/"):
            if rule not in rules:
                rules.append(rule)
    text = "; ".join(DIFFERENCES[name][1] for name in ordered)
    if "refused" in ordered:
        message = json.loads(detail["response"]).get("reject", {}).get("message", "")
        text += f" ({message[:160]})"
    return f"SPEC {'/'.join(rules)}: {text}"


def entries(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    suite = load_suite([REPO / "conformance" / "vectors"])
    cases = {case.id: case for case in suite.cases}
    out: list[dict[str, Any]] = []
    for result in report["cases"]:
        verdict = result["profiles"]["verdict"]
        diagnostics = result["profiles"]["diagnostics"]
        failed = ("fail", "missed_rejection", "false_rejection", "wrong_code", "xfail")
        if verdict["outcome"] not in failed and diagnostics["outcome"] not in failed:
            continue
        case = cases[result["id"]]
        entry: dict[str, Any] = {"id": result["id"], "state": "xfail"}
        if verdict["outcome"] in failed:
            entry["reason"] = reason_for(case, verdict, result["detail"])
        else:
            entry["reason"] = compose({"no-diagnostics"}, result["detail"])
            entry["profile"] = "diagnostics"
            code = result["detail"].get("actual_code")
            if code:
                entry["code"] = code
        out.append(entry)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("report", type=Path, help="the JSON report of a run without expectations")
    parser.add_argument("expectations", type=Path, help="the expectations file to write")
    args = parser.parse_args(argv)
    report = json.loads(args.report.read_text(encoding="utf-8"))
    document = {"implementation": "pydantic-ai", "entries": entries(report)}
    text = yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=100)
    replace_file(args.expectations, text.encode("utf-8"))
    print(f"{len(document['entries'])} entries written to {args.expectations}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
