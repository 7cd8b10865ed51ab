"""The leak corpus (issue 20): a ciphertext and an API key in every text form programs write.

Each form is a text that holds one secret; a sink (a redacted export, the log filter, the public
``redact()``, ``scan``, ``validate``'s reports, error messages) must let none of them through,
and ``scan`` must find every ciphertext form (SPEC H6, H7, H8). ``tests/test_leak_corpus.py``
runs every form through every sink; ``tools/fuzz.py`` mutates the corpus as a seed set, and
``conformance/vectors/export/text-forms-not-json.yaml`` and ``scan/text-forms.yaml`` pin one
case per form class.
"""

from __future__ import annotations

import base64
import html
import json
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

# A Fernet-like ciphertext as OpenAI returns them (194 characters, prefix gAAAAA) and an API key.
CIPHERTEXT: Final = (
    "gAAAAABpM0Yj"
    + "Zk4yMrZw3XDI1AWFaKb9T0NQq7LndK6zaRB-FK1PbhZha"
    + "Zk4yMrZw3XDI1AWFaKb9T0NQq7LndK6zaRB_FK1PbhZha"
    + "Zk4yMrZw3XDI1AWFaKb9T0NQq7LndK6zaRB-FK1PbhZha"
    + "Zk4yMrZw3XDI1AWFaKb9T0NQq7LndK6zaRB_FK1PbhZha"
    + "=="
)
API_KEY: Final = "sk-proj-Canary0123456789abcdefABCDEF"


@dataclass(frozen=True, slots=True)
class Form:
    """One way a program writes a secret: a class, a name, and the text."""

    kind: str  # "ciphertext" or "api-key"
    form_class: str
    name: str
    text: str


def _ciphertext_forms(ct: str) -> dict[str, dict[str, str]]:
    item = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": ct}
    as_json = json.dumps(item)
    envelope = json.dumps(
        {"schema": "fast-agent.openai-responses.reasoning-replay", "version": 1, "item": item}
    )
    return {
        "json": {
            "object": as_json,
            "pretty": json.dumps(item, indent=2),
            "in-a-string": json.dumps({"msg": as_json}),
            "two-strings-deep": json.dumps({"a": json.dumps({"b": as_json})}),
            "envelope": envelope,
            "envelope-in-a-string": json.dumps({"block": envelope}),
            "log-prefix": f"2026-12-01 DEBUG body={as_json}",
            "camel-case": json.dumps({"encryptedContent": ct}),
            "upper-case": json.dumps({"ENCRYPTED_CONTENT": ct}),
            "escaped-name": '{"encrypted\\u005fcontent": "' + ct + '"}',
            "duplicate-members": '{"encrypted_content": "x", "encrypted_content": "' + ct + '"}',
        },
        "python-repr": {
            "dict": f"item {item}",
            "sdk-object": f"ResponseReasoningItem(id='rs_1', encrypted_content='{ct}')",
            "list": f"input={[item]!r}",
        },
        "js-inspect": {
            "object": f"{{ type: 'reasoning', id: 'rs_1', encrypted_content: '{ct}' }}",
            "nested": f"{{ input: [ {{ encryptedContent: '{ct}' }} ] }}",
        },
        "yaml": {
            "plain": f"type: reasoning\nencrypted_content: {ct}\n",
            "quoted": f'- type: reasoning\n  encrypted_content: "{ct}"\n',
            "block-scalar": f"- type: reasoning\n  encrypted_content: >-\n    {ct}\n  id: rs_1\n",
        },
        "json5": {
            "unquoted-names": f"{{type: 'reasoning', encrypted_content: '{ct}',}}",
            "comments": f'{{\n  // replay state\n  "encrypted_content": "{ct}", /* x */\n}}',
        },
        "xml": {
            "element": f"<item><encrypted_content>{ct}</encrypted_content></item>",
            "attribute": f'<item encrypted_content="{ct}"/>',
        },
        "url-encoded": {
            "json": "body=" + urllib.parse.quote(as_json, safe=""),
            "query": f"https://h.test/cb?encrypted_content={urllib.parse.quote(ct, safe='')}",
            "twice": "q=" + urllib.parse.quote(urllib.parse.quote(as_json, safe=""), safe=""),
        },
        "html-encoded": {
            "json": "<pre>" + html.escape(as_json) + "</pre>",
            "numeric": as_json.replace('"', "&#34;"),
        },
        "base64": {
            "json": base64.b64encode(as_json.encode()).decode(),
            "url-safe": "data=" + base64.urlsafe_b64encode(as_json.encode()).decode(),
            "envelope": base64.b64encode(envelope.encode()).decode(),
        },
        "escaped-levels": {
            "after-64-stray-braces": "{ " * 64 + '"encrypted\\u005fcontent": "' + ct + '"',
            "escaped-quotes": 'payload="{\\"encrypted_content\\":\\"' + ct + '\\"}"',
            "escaped-twice": json.dumps(json.dumps(json.dumps(item))),
        },
        "lookalike-names": {
            "hyphen": f"Encrypted-Content: {ct}",
            "dotted": f"encrypted.content={ct}",
            "spaced": f"'encrypted content': '{ct}'",
        },
        "truncated": {
            "cut-mid-value": as_json[: as_json.index(ct) + 40],
            "cut-escaped": json.dumps({"msg": as_json})[:-60],
        },
        "bare": {
            "prose": f"replaying state {ct} for rs_1",
            "env": f"REPLAY_STATE={ct}",
            "cli": f"agent --replay {ct}",
            "header": f"X-Replay: {ct}",
        },
    }


def _key_forms(key: str) -> dict[str, dict[str, str]]:
    headers = {"Authorization": f"Bearer {key}", "X-Api-Key": key}
    return {
        "json": {
            "api_key": json.dumps({"api_key": key}),
            "nested-header": json.dumps({"headers": headers}),
            "in-a-string": json.dumps({"msg": json.dumps({"api_key": key})}),
            "token_value": json.dumps({"token_value": key}),
            "tokenId": json.dumps({"tokenId": key}),
            "auth_header": json.dumps({"auth_header": key}),
            "authentication": json.dumps({"authentication": key}),
            "authInfo": json.dumps({"authInfo": key}),
            "oauth_state": json.dumps({"oauth_state": key}),
            "tokens": json.dumps({"tokens": [key]}),
            "private key": json.dumps({"private key": key}),
            "api.key": json.dumps({"api.key": key}),
        },
        "name-value-pairs": {
            "har": json.dumps({"headers": [{"name": "Authorization", "value": f"Bearer {key}"}]}),
            "tags": json.dumps({"Tags": [{"Key": "client_secret", "Value": key}]}),
        },
        "python-repr": {
            "dict": f"config {{'api_key': '{key}', 'model': 'gpt-5'}}",
            "object": f"OpenAI(api_key='{key}', base_url='https://h.test')",
            "headers": f"headers={headers!r}",
        },
        "js-inspect": {
            "object": f"{{ apiKey: '{key}', model: 'gpt-5' }}",
            "headers": f"{{ headers: {{ authorization: 'Bearer {key}' }} }}",
        },
        "yaml": {
            "plain": f"openai:\n  api_key: {key}\n",
            "quoted": f"token: '{key}'\n",
            "block-literal": f"openai:\n  api_key: |\n    {key}\n  model: gpt-5\n",
            "block-folded-strip": f"auth_token: >-\n  {key}\n\n  {key}\nnext: 1",
        },
        "json5": {
            "unquoted-names": f"{{apiKey: '{key}', // comment\n}}",
        },
        "xml": {
            "element": f"<config><api_key>{key}</api_key></config>",
            "attribute": f'<auth token="{key}"/>',
        },
        "url-encoded": {
            "query": f"GET https://h.test/v1?model=gpt-5&api_key={key}&x=1",
            "json": "body=" + urllib.parse.quote(json.dumps({"api_key": key}), safe=""),
        },
        "html-encoded": {
            "json": html.escape(json.dumps({"api_key": key})),
        },
        "base64": {
            "json": "cfg=" + base64.b64encode(json.dumps({"api_key": key}).encode()).decode(),
            "header": base64.b64encode(f"Authorization: Bearer {key}".encode()).decode(),
        },
        "headers": {
            "raw-line": f"Authorization: Bearer {key}",
            "x-api-key": f"x-api-key: {key}",
            "cookie": f"Cookie: session_token={key}",
            "proxy": f"Proxy-Authorization: Basic {key}",
        },
        "env": {
            "line": f"OPENAI_API_KEY={key}",
            "export": f'export OPENAI_API_KEY="{key}"',
        },
        "command-line": {
            "curl": f'curl -H "Authorization: Bearer {key}" https://h.test/v1/responses',
            "option": f"agent --api-key {key} --model gpt-5",
            "option-equals": f"agent --api-key={key}",
        },
        "escaped-levels": {
            "after-64-stray-braces": "{ " * 64 + '"api\\u005fkey": "' + key + '"',
            "escaped-quotes": 'cfg="{\\"api_key\\":\\"' + key + '\\"}"',
        },
        "lookalike-names": {
            "dotted": f"api.key: {key}",
            "upper": f"OPENAI-API-KEY: {key}",
            "quoted-spaced": f"'private key': '{key}'",
        },
    }


def corpus(ciphertext: str = CIPHERTEXT, api_key: str = API_KEY) -> tuple[Form, ...]:
    """Every form of both secrets."""
    forms: list[Form] = []
    builders: tuple[tuple[str, Callable[[str], dict[str, dict[str, str]]], str], ...] = (
        ("ciphertext", _ciphertext_forms, ciphertext),
        ("api-key", _key_forms, api_key),
    )
    for kind, build, secret in builders:
        for form_class, named in build(secret).items():
            for name, text in named.items():
                forms.append(Form(kind, form_class, name, text))
                # The same text as a logging line writes it: a prefix, and the text's own lines.
                logged = f"2026-12-01T10:00:00Z WARNING agent: {text}"
                forms.append(Form(kind, form_class, f"{name}/in-a-log-line", logged))
    return tuple(forms)


def leaks(text: str, form: Form, secret: str | None = None) -> bool:
    """Whether ``text`` still shows the form's secret (or a 40-character piece of it)."""
    if secret is None:
        secret = CIPHERTEXT if form.kind == "ciphertext" else API_KEY
    pieces = {secret[i : i + 40] for i in range(0, max(1, len(secret) - 39), 20)}
    return secret in text or any(piece in text for piece in pieces)
