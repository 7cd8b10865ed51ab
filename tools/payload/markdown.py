"""The report as Markdown: corpus facts, results table, seed comparison, findings.

Part of ``tools/payload_report.py`` (see its docstring for what each column holds).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from payload.forms import TITLES
from payload.measures import Timing, Totals
from payload.reading import FORMS
from payload.report import TOOL, Report

SEED_FIGURES: Final = {
    "extra_snapshot_fields": "4.34 MB and 4.19 MB (runs 1 and 2)",
    "canonical_vs_legacy": "8.9–9.2 % smaller",
    "cumulative_saving": "605–631 MB less, across successful turns",
}


def smaller_by(ours: int, theirs: int) -> float:
    """How much smaller ``ours`` is than ``theirs``, in percent of ``theirs``."""
    return 100.0 * (theirs - ours) / theirs if theirs else 0.0


def mb(value: float) -> str:
    return f"{value / 1e6:,.3f} MB"


def count(value: int) -> str:
    return f"{value:,}"


def _row(label: str, cells: Iterable[str]) -> str:
    return "| " + " | ".join([label, *cells]) + " |"


def results_table(report: Report) -> list[str]:
    t = report.totals
    columns = [t[form] for form in FORMS]

    def row(label: str, value: Callable[[Totals], str]) -> str:
        return _row(label, (value(c) for c in columns))

    def timed(label: str, pick: Callable[[Timing], tuple[float, ...]]) -> str:
        per_record = [
            1e6 * statistics.median(pick(report.timing[f])) / max(t[f].records, 1) for f in FORMS
        ]
        return _row(
            label,
            (
                f"{1e3 * statistics.median(pick(report.timing[f])):,.1f} ms ({us:.2f} µs/record)"
                for f, us in zip(FORMS, per_record, strict=True)
            ),
        )

    return [
        _row("measure", (TITLES[f] for f in FORMS)),
        "| --- | ---: | ---: | ---: |",
        row("replay records stored", lambda c: count(c.records)),
        row("stored record bytes", lambda c: mb(c.stored_bytes)),
        row(
            "stored bytes in history files (JSON string literals)",
            lambda c: mb(c.stored_file_bytes),
        ),
        row("final request: reasoning items", lambda c: count(c.final_items)),
        row("final request: replay bytes (HTTP)", lambda c: mb(c.final_bytes)),
        row(
            "final request: replay bytes (WebSocket frames)", lambda c: mb(c.final_websocket_bytes)
        ),
        row("final request: replay bytes, multi-item messages", lambda c: mb(c.final_multi_bytes)),
        row("cumulative replay bytes, all turns", lambda c: mb(c.cumulative_bytes)),
        row("cumulative replay bytes, multi-item messages", lambda c: mb(c.cumulative_multi_bytes)),
        row(
            "cumulative = Σ items replayed per turn (exact)",
            lambda c: "yes" if c.cumulative_check else "**NO**",
        ),
        row("items dropped by dedupe (all requests)", lambda c: count(c.deduplicated)),
        row("summary parts replayed (final request)", lambda c: count(c.summary_parts)),
        row("summary bytes replayed (final request)", lambda c: mb(c.summary_bytes)),
        row("duplicated summary bytes (final request)", lambda c: mb(c.duplicated_summary_bytes)),
        row(
            "items not carrying their own summary parts",
            lambda c: (
                count(c.items_not_own_summary)
                + (
                    f" (+{c.items_own_summary_unknown:,} unknown)"
                    if c.items_own_summary_unknown
                    else ""
                )
            ),
        ),
        row(
            "items with a member outside the allowlist", lambda c: count(c.items_outside_allowlist)
        ),
        row("items with content null or []", lambda c: count(c.items_null_or_empty_content)),
        row(
            "redaction: views holding ciphertext or summary text",
            lambda c: f"{c.redaction_leaks:,} of {c.redaction_views:,}",
        ),
        timed("serialize time *(timing)*", lambda tm: tm.serialize),
        timed("parse time *(timing)*", lambda tm: tm.parse),
    ]


def versus(ours: int, theirs: int) -> str:
    """``ours`` against ``theirs``: "1.23 % smaller" or "0.45 % larger"."""
    change = smaller_by(ours, theirs)
    return f"{abs(change):.2f} % {'smaller' if change >= 0 else 'larger'}"


def seed_table(report: Report) -> list[str]:
    raw, can, leg = (report.totals[f] for f in FORMS)
    checked = ", ".join(
        f"{TITLES[f].split(' (')[0]} {report.totals[f].cumulative_bytes:,} B ="
        f" {report.totals[f].ledger_cumulative_bytes:,} B"
        for f in FORMS
    )
    cumulative_line = (
        f"yes, exactly, in every column ({checked}); the reference's dedupe dropped"
        f" {can.deduplicated} items and found {can.conflicts} id/ciphertext conflicts"
        if report.checks_pass
        else "**NO**: see the results table"
    )
    single_can = can.cumulative_bytes - can.cumulative_multi_bytes
    single_leg = leg.cumulative_bytes - leg.cumulative_multi_bytes
    return [
        "| comparison | this corpus | the seed (two 113-task fast-agent 0.10.11 corpora) |",
        "| --- | --- | --- |",
        _row(
            "canonical vs raw snapshot: stored record bytes (in history files)",
            (
                f"{versus(can.stored_bytes, raw.stored_bytes)},"
                f" {mb(raw.stored_bytes - can.stored_bytes)}"
                f" ({versus(can.stored_file_bytes, raw.stored_file_bytes)})",
                "no percentage given",
            ),
        ),
        _row(
            "canonical vs raw snapshot: replay bytes, final request / cumulative",
            (
                f"{versus(can.final_bytes, raw.final_bytes)} /"
                f" {versus(can.cumulative_bytes, raw.cumulative_bytes)}",
                "no percentage given",
            ),
        ),
        _row(
            "extra stored snapshot fields (raw snapshot − minimal record, stored bytes)",
            (mb(raw.stored_bytes - leg.stored_bytes), SEED_FIGURES["extra_snapshot_fields"]),
        ),
        _row(
            "canonical vs legacy: all reasoning replay, cumulative / final request",
            (
                f"{versus(can.cumulative_bytes, leg.cumulative_bytes)} /"
                f" {versus(can.final_bytes, leg.final_bytes)}",
                f'{SEED_FIGURES["canonical_vs_legacy"]} ("on those histories")',
            ),
        ),
        _row(
            "canonical vs legacy: multi-item messages only, cumulative / final request",
            (
                f"{versus(can.cumulative_multi_bytes, leg.cumulative_multi_bytes)} /"
                f" {versus(can.final_multi_bytes, leg.final_multi_bytes)}",
                "not given separately",
            ),
        ),
        _row(
            "canonical vs legacy: single-item messages only, cumulative",
            (versus(single_can, single_leg), "not given"),
        ),
        _row(
            "legacy − canonical, cumulative replay",
            (
                f"{mb(leg.cumulative_bytes - can.cumulative_bytes)} less",
                SEED_FIGURES["cumulative_saving"],
            ),
        ),
        _row("cumulative replay grows exactly as the items replayed", (cumulative_line, "—")),
    ]


def findings(report: Report) -> list[str]:
    """The results in words, each figure and each direction computed from the report."""
    raw, can, leg = (report.totals[f] for f in FORMS)
    single_can = can.cumulative_bytes - can.cumulative_multi_bytes
    single_leg = leg.cumulative_bytes - leg.cumulative_multi_bytes
    leaks = sum(t.redaction_leaks for t in report.totals.values())
    views = sum(t.redaction_views for t in report.totals.values())
    wrapper = "less" if can.stored_bytes <= raw.stored_bytes else "more"
    exact = "equal" if report.checks_pass else "do **not** equal"
    return [
        "- **Canonical vs raw snapshot.** The envelope's records are"
        f" {versus(can.stored_bytes, raw.stored_bytes)} than the snapshot's: its wrapper"
        f" (`schema`, `version`, `item`) costs {wrapper} than the snapshot's"
        ' `"content": []`, its `", "`/`": "` separators and its `\\uXXXX` escapes of non-ASCII'
        " summary text. On the wire the canonical replay is"
        f" {versus(can.cumulative_bytes, raw.cumulative_bytes)} (cumulative): the snapshot"
        ' replays `"content": []` or `null`'
        f" ({raw.items_null_or_empty_content:,} of {raw.final_items:,} final-request items) and"
        f" every unknown SDK field ({raw.items_outside_allowlist:,} items with a member outside"
        f" the allowlist); the envelope replays {can.items_null_or_empty_content:,} and"
        f" {can.items_outside_allowlist:,}.",
        "- **Canonical vs legacy.** Per-item summaries make the whole replay"
        f" {versus(can.cumulative_bytes, leg.cumulative_bytes)} than the v0.10.4 message-wide"
        " fallback (the seed: 8.9–9.2 % on its histories), and"
        f" {versus(can.cumulative_multi_bytes, leg.cumulative_multi_bytes)} on multi-item"
        " messages, where the fallback gives every item the whole message's summary"
        f" ({mb(leg.duplicated_summary_bytes)} of repeated summary text in the final request;"
        f" {leg.items_not_own_summary:,} items lose their own parts). On single-item messages"
        f" the canonical replay is {versus(single_can, single_leg)}: the fallback merges a"
        " multipart summary into one part, which saves the part objects and loses the"
        " boundaries.",
        "- **Cumulative replay.** Each turn's request replays every earlier item once: summed"
        f" over the turns, the bytes of the items replayed {exact} the cumulative figure in all"
        f" three columns, and the reference's dedupe removed {can.deduplicated:,} items"
        f" ({can.conflicts:,} id/ciphertext conflicts).",
        "- **Redaction.** The reference's diagnostic view of each final-request item, and its"
        " redaction of the whole request, show no ciphertext and no summary text:"
        f" {leaks:,} leaks in {views:,} views.",
    ]


def _parameters(manifest: Mapping[str, Any] | None) -> list[str]:
    if not manifest:
        return ["No generator manifest was found: the histories are taken as they are."]
    lines = ["| generator parameter | value |", "| --- | --- |"]
    for name, value in manifest.get("parameters", {}).items():
        shown = ",".join(map(str, value)) if isinstance(value, list) else str(value)
        lines.append(f"| `--{name.replace('_', '-')}` | {shown} |")
    return lines


def render_markdown(report: Report, report_command: str, chart_link: str | None = None) -> str:
    f = report.facts
    commands = []
    if report.manifest and isinstance(report.manifest.get("command"), str):
        commands.append(report.manifest["command"])
    commands.append(report_command)
    forms = ", ".join(f"{n:,} {name}" for name, n in sorted(f.stored_forms.items()))
    skipped = ", ".join(f"{n:,} `{code}`" for code, n in sorted(f.skipped_blocks.items()))
    lines = [
        "# Reasoning replay payload: raw snapshot, canonical envelope, legacy fallback",
        "",
        f"Generated by `{TOOL}`. Every figure is deterministic for this corpus except the rows"
        " and lines marked *(timing)*. Byte figures are exact; MB are 10⁶ bytes.",
        "",
        "```sh",
        *commands,
        "```",
        "",
        "## Corpus",
        "",
        f"- history files compared: {f.files:,} ({f.messages:,} messages); not compared:"
        f" {len(report.not_compared):,}; unreadable: {len(report.unreadable):,}",
        f"- turns (assistant messages, one provider request each): {f.turns:,}, at most"
        f" {f.max_turns:,} in one task",
        f"- reasoning items: {f.items:,}, stored as {forms or 'nothing'}; in multi-item messages:"
        f" {f.multi_item_items:,} items in {f.multi_item_messages:,} messages",
        f"- blocks left out of every column: {skipped or 'none'}; messages whose display"
        f" channel was derived: {f.derived_display:,}",
        "",
        *_parameters(report.manifest),
        "",
        "## Results",
        "",
        *results_table(report),
        "",
        "## Beside the seed's figures",
        "",
        *seed_table(report),
        "",
        *findings(report),
        "",
        "Absolute sizes scale with the corpus (the seed does not give its item or turn counts);"
        " the percentages are the comparable figures.",
        "",
    ]
    if chart_link:
        lines += [
            "## Cumulative replay per turn",
            "",
            f"![Cumulative reasoning replay bytes per turn, three stored forms]({chart_link})",
            "",
        ]
    if report.not_compared or report.unreadable:
        lines += ["## Files not measured", ""]
        lines += [f"- `{p}`: {reason}" for p, reason in report.not_compared]
        lines += [f"- `{u.path}`: `{u.code}` ({u.detail})" for u in report.unreadable]
        lines.append("")
    lines += [
        "## How each column is built",
        "",
        "- **raw SDK snapshot (0.10.11)**: stored as the SDK's `model_dump` without `status`,"
        ' written by `json.dumps` defaults (`", "`, `": "`, `\\uXXXX`), as fast-agent'
        " 0.10.6–0.10.11 wrote it; replayed as stored, a missing summary filled from the display"
        " channel.",
        "- **canonical envelope (v1)**: stored as SPEC C3 bytes by the reference's capture and"
        " writer; replayed by the reference's `build_replay_input`.",
        "- **legacy minimal (0.10.4)**: stored as `{type, encrypted_content, id}`; replayed with"
        " one summary part per item, the message's whole display channel (newline-joined).",
        "- Each block is read in the form it is stored in and re-expressed in the others: a"
        " raw snapshot gives the envelope the reference's capture makes of it and the minimal"
        " record; a v1 envelope gives the snapshot 0.10.11 would have stored (SDK field order,"
        " `content: []` as in every audited item; unknown SDK fields cannot be restored) and the"
        " minimal record; a minimal record gives neither (no per-item summary), so a history"
        " holding one is listed, not compared.",
        "- A turn is an assistant message; its request replays every earlier reasoning item."
        " The final request continues the saved history. Replay bytes are compact UTF-8 JSON of"
        " each reasoning item, as the SDK's HTTP body carries it.",
        "- Timing is the median of the passes, summed over the files; the canonical writer"
        " checks its output with the reader (SPEC C4), so its serialize time includes a parse.",
        "",
        f"*(timing)* The report took {report.elapsed:.1f} s.",
        "",
    ]
    return "\n".join(lines)
