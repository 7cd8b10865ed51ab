"""The scripted conversations of the fast-agent end-to-end test (docs/fast-agent-e2e.md)."""

from __future__ import annotations

from typing import Any

from e2e_harness import Conversation
from responses_server import Fault, Turn, function_call, message, reasoning

EXPLICIT_KEY = "e2e-explicit-cache-key"


def astra_turns() -> dict[str, list[Turn]]:
    """Answers for the Astra conversations: several items per turn, a tool loop, reused ids."""
    return {
        "hello": [
            Turn(
                [
                    reasoning(
                        "rs_hello_1",
                        "First, the greeting.",
                        "Second, be terse.",
                        encrypted_content="gAAAA-hello-1",
                        status="completed",
                        future_field={"from": "a newer API"},
                    ),
                    reasoning(
                        "rs_hello_2",
                        "One more thought.",
                        encrypted_content="gAAAA-hello-2",
                        content=["raw reasoning text"],
                    ),
                    message("msg_hello", "Hi.", future_message_field=1),
                ]
            )
        ],
        "weather": [
            Turn(
                [
                    reasoning("rs_tool_1", "Need a lookup.", encrypted_content="gAAAA-tool-1"),
                    function_call("fc_68f1a0c2", "call_Q9vUe3", "lookup", '{"city": "Oslo"}'),
                ]
            ),
            Turn(
                [
                    reasoning("rs_tool_2", "Report it.", encrypted_content="gAAAA-tool-2"),
                    message("msg_weather", "Sunny in Oslo."),
                ]
            ),
        ],
        "thanks": [
            Turn([reasoning("rs_thanks", encrypted_content="gAAAA-thanks"), message("m_t", "ok")])
        ],
        "bye": [
            Turn(
                [reasoning("rs_bye", "Bye.", encrypted_content="gAAAA-bye"), message("m_b", "Bye.")]
            )
        ],
        # After resume: an exact duplicate of an earlier item (D2), and an id reused with a new
        # ciphertext (D3), which fast-agent drops by id (SPEC §14).
        "again": [
            Turn(
                [
                    reasoning("rs_bye", "Bye.", encrypted_content="gAAAA-bye"),
                    reasoning("rs_thanks", encrypted_content="gAAAA-thanks-retried"),
                    message("msg_again", "Again."),
                ]
            )
        ],
        "more": [
            Turn(
                [reasoning("rs_more", "More.", encrypted_content="gAAAA-more"), message("m_m", "M")]
            )
        ],
        "fresh": [
            Turn(
                [
                    reasoning("rs_fresh", "New.", encrypted_content="gAAAA-fresh"),
                    message("m_f", "F"),
                ]
            )
        ],
        "after": [
            Turn(
                [reasoning("rs_after", "A.", encrypted_content="gAAAA-after"), message("m_a", "A")]
            )
        ],
    }


ASTRA_RUNS: list[list[dict[str, Any]]] = [
    [
        {"send": "hello"},
        {"send": "weather in Oslo?", "effort": "high"},
        {"send": "thanks", "metadata": {"prompt_cache_key": EXPLICIT_KEY}},
        {"send": "bye", "effort": "low"},
    ],
    [
        {"send": "again"},
        {"send": "more", "effort": "xhigh"},
        {"clear": True},
        {"send": "fresh"},
        {"send": "after", "effort": "medium"},
    ],
]


def astra(name: str, transport: str | None) -> Conversation:
    return Conversation(
        name=name,
        model="responses.gpt-6-astra?reasoning=low",
        effort="low",
        transport=transport,
        turns=astra_turns(),
        runs=ASTRA_RUNS,
    )


CONVERSATIONS = {
    "astra-sse": astra("astra-sse", "sse"),
    "astra-websocket": astra("astra-websocket", None),
}


# What a real provider may also send. Each bad turn is followed by a good one, whose request
# replays the history the bad turn left behind.
BAD_ITEMS = {
    "in progress": reasoning(
        "rs_unfinished", "Half.", encrypted_content="gAAAA-half", status="in_progress"
    ),
    "no ciphertext": reasoning("rs_no_cipher", "Visible only."),
    "incomplete": reasoning("rs_cut", "Cut.", encrypted_content="gAAAA-cut", status="incomplete"),
}
BAD_TURNS: dict[str, list[Turn]] = {
    "truncated": [
        Turn(
            [reasoning("rs_trunc", "T.", encrypted_content="gAAAA-trunc"), message("m_tr", "T")],
            Fault.TRUNCATED,
        )
    ],
    "unfinished": [Turn([BAD_ITEMS["in progress"], message("m_un", "U")])],
    "uncoded": [
        Turn(
            [
                BAD_ITEMS["no ciphertext"],
                reasoning("rs_coded", "C.", encrypted_content="gAAAA-coded"),
                message("m_nc", "N"),
            ]
        )
    ],
    "surprise": [
        Turn(
            [
                reasoning("rs_surprise", "S.", encrypted_content="gAAAA-surprise"),
                message("m_s", "S"),
            ],
            Fault.UNKNOWN_EVENT,
        )
    ],
    "cut off": [Turn([BAD_ITEMS["incomplete"], message("m_in", "I")], Fault.INCOMPLETE)],
    "finally": [
        Turn([reasoning("rs_final", "F.", encrypted_content="gAAAA-final"), message("m_fi", "F")])
    ],
}
BAD_RUNS = [[{"send": text} for text in BAD_TURNS]]


def bad_streams(transport: str | None) -> Conversation:
    return Conversation(
        name=f"bad-{transport or 'websocket'}",
        model="responses.gpt-6-astra?reasoning=low",
        effort="low",
        transport=transport,
        turns=BAD_TURNS,
        runs=BAD_RUNS,
        tools=False,
    )


def compaction_switch() -> Conversation:
    """Summary compaction, then a switch from ``responses.gpt-6-astra`` to ``xai.grok-4.5`` and
    back (SPEC P4: what fast-agent replays to each provider)."""
    turns = astra_turns()
    # fast-agent's summary request ends with its compaction prompt
    turns["CONTEXT CHECKPOINT COMPACTION"] = [Turn([message("msg_summary", "Asked about Oslo.")])]
    turns["grok"] = [
        Turn([reasoning("rs_grok", "G.", encrypted_content="xai-grok"), message("m_g", "G")])
    ]
    turns["back to astra"] = [
        Turn([reasoning("rs_back", "B.", encrypted_content="gAAAA-back"), message("m_b", "B")])
    ]
    return Conversation(
        name="compaction-switch",
        model="responses.gpt-6-astra?reasoning=low",
        effort="low",
        transport="sse",
        turns=turns,
        runs=[
            [
                {"send": "hello"},
                {"send": "weather in Oslo?", "effort": "high"},
                {"send": "thanks"},
                {"compact": 1},
                {"send": "bye", "effort": "medium"},
                {"switch_model": "xai.grok-4.5?reasoning=low", "effort": "low"},
                {"send": "grok please"},
                {"send": "more"},
                {"switch_model": "responses.gpt-6-astra?reasoning=low", "effort": "low"},
                {"send": "back to astra"},
            ]
        ],
        extra_config="xai:\n  api_key: e2e-dummy-key\n  base_url: {base_url}\n",
    )


def other_model() -> Conversation:
    """A model that is not update-capable (F10): its effort changes at the request level."""
    return Conversation(
        name="gpt-5.4-sse",
        model="responses.gpt-5.4?reasoning=low",
        effort="low",
        transport="sse",
        turns=astra_turns(),
        runs=[
            [
                {"send": "hello"},
                {"send": "weather in Oslo?", "effort": "high"},
                {"send": "thanks", "metadata": {"prompt_cache_key": EXPLICIT_KEY}},
                {"send": "bye", "effort": "medium"},
            ]
        ],
    )
