"""``conformance run --redact-reports``: what reports show of a case, redacted (SPEC R2, H7).

Vectors made from real captures hold real secrets, and a report shows a failing case's request,
reply, compared values, messages and stderr. Each is redacted as the reference redacts logs
(SPEC.md R2, JSON inside strings too, as H7 asks of logs); and because free text can quote a
value without its member name (a schema error, a traceback, a Python repr), the case's own
secret values are replaced wherever they still appear.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from reasoning_replay.history.log_redaction import redact_structure, redact_text
from reasoning_replay.record.redaction import is_sensitive_name

from .compare import ABSENT, Mismatch, first_difference
from .vectors import Case

MARK: Final = "[redacted]"
HIDDEN: Final = "[hidden by --redact-reports]"
# Shorter values are not replaced in free text: "[redacted]" for every "id" would hide the report.
MIN_SECRET_CHARS: Final = 8


def _secret_values(value: Any, depth: int = 0) -> Iterator[str]:
    """Strings held by sensitive members (R2's names), at any depth and inside JSON texts."""
    if depth > 64:  # vectors are shallow; a deeper one is not worth a stack
        return
    if isinstance(value, Mapping):
        for name, member in value.items():
            if is_sensitive_name(str(name)) and isinstance(member, str):
                yield member
            else:
                yield from _secret_values(member, depth + 1)
    elif isinstance(value, list):
        for element in value:
            yield from _secret_values(element, depth + 1)
    elif isinstance(value, str) and ("{" in value or "[" in value):
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError):
            return
        yield from _secret_values(parsed, depth + 1)


@dataclass(frozen=True, slots=True)
class CaseRedaction:
    """The redaction of one case's report texts; ``secrets`` longest first."""

    secrets: tuple[str, ...]

    def text(self, text: str) -> str:
        text = redact_text(text)
        for secret in self.secrets:
            text = text.replace(secret, MARK)
        return text

    def line(self, data: bytes) -> bytes:
        return self.text(data.decode("utf-8", "replace")).encode("utf-8", "surrogatepass")

    def mismatch(self, mismatch: Mismatch, expected: Any, actual: Any) -> Mismatch:
        """The first difference between the redacted outputs; when redaction makes them equal,
        the place of the raw difference with both values hidden."""
        found = first_difference(redact_structure(expected), redact_structure(actual))
        if found is None:
            return replace(mismatch, expected=HIDDEN, actual=HIDDEN)
        return replace(
            found,
            expected=self._free_of_secrets(found.expected),
            actual=self._free_of_secrets(found.actual),
        )

    def _free_of_secrets(self, value: Any) -> Any:
        if value is ABSENT:
            return value
        text = json.dumps(value, ensure_ascii=False)
        return HIDDEN if any(secret in text for secret in self.secrets) else value


def redaction_of(*values: Any) -> CaseRedaction:
    """The redaction of texts that show ``values``: the secrets are the strings their sensitive
    members hold (JSON texts among them read as JSON: a request or reply line)."""
    found = {secret for value in values for secret in _secret_values(value)}
    secrets = sorted((s for s in found if len(s) >= MIN_SECRET_CHARS), key=lambda s: (-len(s), s))
    return CaseRedaction(tuple(secrets))


def case_redaction(case: Case) -> CaseRedaction:
    return redaction_of(case.input, case.expect.output)
