"""The ``defaults`` probe (SPEC P5, CL4): what an implementation sends with no configuration,
kept from each ``defaults`` case's reply for every report, whether or not the case passed."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from .compare import ABSENT
from .protocol import ErrorReply, Failure, OutputReply, RejectReply, Reply, SkippedReply
from .retained import bounded_value

DEFAULTS: Final = "defaults"
_INSTANCE_KEY: Final = re.compile(r"[0-9a-f]{32}")  # SPEC K1


@dataclass(frozen=True, slots=True)
class DefaultsProbe:
    """One ``defaults`` reply as probed. ``answer`` is ``"output"``, or what came instead (a
    rejection's code, an error, ...); the members are ``ABSENT`` when the request has none."""

    model: Any
    target_provider: Any
    answer: str
    store: Any = ABSENT
    include: Any = ABSENT
    key_form: str = "absent"  # absent | 32-hex | other
    reasoning: Any = ABSENT

    def to_document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "model": self.model,
            "target_provider": self.target_provider,
            "answer": self.answer,
        }
        for name in ("store", "include", "reasoning"):
            value = getattr(self, name)
            if value is not ABSENT:
                doc[name] = value
        doc["key_form"] = self.key_form
        return doc

    def describe(self) -> str:
        """One line: ``store false, include [...], key 32-hex``."""
        if self.answer != "output":
            return f"no output ({self.answer})"
        parts = [f"{name} {_shown(getattr(self, name))}" for name in ("store", "include")]
        parts.append(f"key {self.key_form}")
        if self.reasoning is not ABSENT:
            parts.append(f"reasoning {_shown(self.reasoning)}")
        return ", ".join(parts)


def _shown(value: Any) -> str:
    from . import jsontext  # noqa: PLC0415 - a report-time helper

    return "absent" if value is ABSENT else jsontext.dumps_str(value)


def key_form(request: Mapping[str, Any]) -> str:
    """The form of ``prompt_cache_key``: absent, 32 lowercase hex digits (SPEC K1), or other."""
    if "prompt_cache_key" not in request:
        return "absent"
    key = request["prompt_cache_key"]
    return "32-hex" if isinstance(key, str) and _INSTANCE_KEY.fullmatch(key) else "other"


def _answer(reply: Reply | Failure) -> str:
    """What came instead of an output."""
    if isinstance(reply, RejectReply):
        return f"reject {reply.code}"
    if isinstance(reply, SkippedReply):
        return "skipped"
    if isinstance(reply, ErrorReply):
        return "error"
    return "no reply"


def defaults_probe(input: Mapping[str, Any], reply: Reply | Failure) -> DefaultsProbe:
    """The probe of one ``defaults`` case's reply."""
    model, target = input.get("model"), input.get("target_provider")
    if not isinstance(reply, OutputReply):
        return DefaultsProbe(model, target, _answer(reply))
    request = reply.output.get("request")
    if not isinstance(request, Mapping):
        return DefaultsProbe(model, target, "output without a request object")
    return DefaultsProbe(
        model,
        target,
        "output",
        store=bounded_value(request.get("store", ABSENT)),
        include=bounded_value(request.get("include", ABSENT)),
        key_form=key_form(request),
        reasoning=bounded_value(request.get("reasoning", ABSENT)),
    )
