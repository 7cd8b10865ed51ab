"""A stand-in for the reference's dispatch function, for in-process runner tests."""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Result:
    output: dict[str, Any] | None = None
    code: str | None = None


def fake_dispatch(operation: str, input: Mapping[str, Any]) -> Result:
    """echo, except: value 'wrong' -> wrong output; reject 'swap' -> another code;
    value 'refuse' -> a reject; reject 'accept' -> an output; value 'raise' -> exception."""
    value = input.get("value")
    if value == "raise":
        raise RuntimeError("dispatch bug")
    if value == "wrong":
        return Result(output={"value": "WRONG"})
    if value == "refuse":
        return Result(code="bad_value")
    if "text_base64" in input:  # passed through undecoded, as to the reference
        return Result(output={"value": base64.b64decode(input["text_base64"]).hex()})
    if "reject" in input:
        if input["reject"] == "swap":
            return Result(code="other_code")
        if input["reject"] == "accept":
            return Result(output={})
        return Result(code=input["reject"])
    return Result(output={"value": value})
