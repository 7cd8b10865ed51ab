"""The static HTML report of the known implementations: ``docs/implementations.html``.

For each implementation and rule family (``rule_families.py``), every case that applies: its
outcome in each profile, the reason its expectations entry gives (the SPEC rules and the
framework's source function, each rule linked to its SPEC anchor), and, opened on demand, what
differed, the request sent and the reply. One self-contained file: inline CSS, no script, no
network; ``<details>`` elements do the drill-down.

The reports hold requests and replies, and a report of real captures holds real secrets. Every
text taken from a report reaches the page through :func:`shown` or :class:`CaseText`: redacted
by the text-aware redaction (SPEC H6, H7: a ciphertext or a reasoning item anywhere in a text,
JSON inside strings too), then the case's own secret values wherever they still stand
(``--redact-reports`` does the same to reports), then HTML-escaped. Long texts are cut after
redaction, never before (a cut could hide a secret from the redaction).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from reasoning_replay.history.log_redaction import redact_structure, redact_text
from reasoning_replay.record.redaction import is_sensitive_name
from reasoning_replay.suite.report_redaction import MARK, CaseRedaction, redaction_of
from rule_families import (
    COLUMNS,
    MUST,
    NOT_APPLICABLE,
    PASS,
    PROFILES,
    SKIPPED,
    CountedRun,
    Family,
    Tally,
    family_of,
)

SPEC_HREF: Final = "../SPEC.md"
REPO_HREF: Final = "../"
TEXT_LIMIT: Final = 1200  # characters of a request, reply or value shown before the cut
_RULE: Final = re.compile(r"\b[A-Z]{1,2}[0-9]+(?:-[a-z]+)?\b")
_SOURCE: Final = re.compile(r"[\w@.-]+(?:/[\w@.-]+)*\.(?:py|ts|mjs|js|rs)::\w+")
_TOKEN: Final = re.compile(f"(?P<source>{_SOURCE.pattern})|(?P<rule>{_RULE.pattern})")
_ID_UNSAFE: Final = re.compile(r"[^A-Za-z0-9_.:-]")
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_LINES: Final = frozenset(("request", "response"))
_DETAIL_TEXTS: Final = (
    "message",
    "pointer",
    "expected_code",
    "actual_code",
    "request",
    "response",
    "stderr",
    "traceback",
)
CSS: Final = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:90rem;padding:1rem 2rem;color:#222}
h1{font-size:1.5rem}h2{margin-top:2.5rem;border-bottom:1px solid #ccc}h3{font-size:1rem}
table{border-collapse:collapse;margin:.5rem 0}th,td{border:1px solid #ddd;padding:.25rem .5rem;
vertical-align:top;text-align:left}th{background:#f4f4f4}
td.n{text-align:right;white-space:nowrap}a{color:#0645ad}
.all{background:#dff3df}.some{background:#fff3cd}.none{background:#f8d7da}.na{color:#888}
.pass{color:#1a7f37}.xfail{color:#9a6700}.skipped,.not_applicable{color:#666}
.unexpected{color:#cf222e;font-weight:bold}
details{margin:.3rem 0}summary{cursor:pointer}details.family>summary{font-weight:600}
pre{white-space:pre-wrap;word-break:break-all;background:#f6f8fa;padding:.4rem;margin:.2rem 0;
max-height:24rem;overflow:auto}
dl.facts{display:grid;grid-template-columns:max-content auto;gap:.1rem 1rem}dl.facts dt{color:#555}
dl.facts dd{margin:0}code{font-size:.92em}.ids code{margin-right:.6rem;white-space:nowrap}
""".strip()


def escaped(text: str) -> str:
    """Text as HTML element content (never an attribute value: quotes are kept as they are,
    JSON is full of them), a lone surrogate (SPEC U1 vectors hold them) written as its JSON
    escape, since a UTF-8 page cannot hold it."""
    return html.escape(_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text), quote=False)


def shown(text: str) -> str:
    """A report's text as the page shows it: redacted (SPEC H6, H7), then escaped."""
    return escaped(redact_text(text))


def anchor_id(*parts: str) -> str:
    """An HTML id from a report key, a family key or a case id."""
    return "--".join(_ID_UNSAFE.sub("_", part) for part in parts)


def _cut(text: str) -> str:
    if len(text) <= TEXT_LIMIT:
        return text
    rest = len(text) - TEXT_LIMIT
    return f"{text[:TEXT_LIMIT]}… [{rest:,} more characters: the whole text is in the report]"


@dataclass(frozen=True, slots=True)
class CaseText:
    """The texts of one case, redacted with the secrets its request, reply and values hold."""

    redaction: CaseRedaction

    def text(self, text: str) -> str:
        return escaped(self.redaction.text(text))

    def line(self, text: str) -> str:
        """A request or reply line. One JSON text is redacted as a value (the same redaction as
        of the text, and far faster on long lines) and written compact; any other text (the
        runner cuts a line over 64 KiB) only when it is short, since the redaction of a long text
        that is not JSON is slow."""
        try:
            value = json.loads(text)
        except ValueError:
            if len(text) > TEXT_LIMIT * 4:
                return escaped(f"[not shown: {len(text):,} characters that are not one JSON text]")
            return escaped(_cut(self.redaction.text(text)))
        dumped = json.dumps(redact_structure(value), ensure_ascii=False, separators=(",", ":"))
        for secret in self.redaction.secrets:  # the case's own values, as --redact-reports does
            dumped = dumped.replace(secret, MARK)
        return escaped(_cut(dumped))

    def value(self, value: Any, pointer: str) -> str:
        """A compared value at ``pointer``: hidden when a member on the path is sensitive (R2)."""
        names = pointer.split("/")[1:]
        if any(is_sensitive_name(name) for name in names):
            return escaped(json.dumps({"redacted": names[-1]}))
        return self.line(json.dumps(value, ensure_ascii=False))


def case_text(case: Mapping[str, Any]) -> CaseText:
    detail = case.get("detail") or {}
    values = [detail.get(name) for name in ("request", "response", "expected", "actual")]
    return CaseText(redaction_of(*(v for v in values if v is not None)))


# ---------------------------------------------------------------------------------------------
# Small pieces


def spec_link(rule: str, anchors: frozenset[str], label: str | None = None) -> str:
    text = html.escape(label or rule)
    if rule not in anchors:
        return text
    return f'<a href="{SPEC_HREF}#{html.escape(rule)}">{text}</a>'


def linked_reason(text: str, texts: CaseText, anchors: frozenset[str]) -> str:
    """A reason, redacted and escaped, its SPEC rules linked and its source functions as code."""
    redacted = texts.redaction.text(text)
    out: list[str] = []
    copied = 0
    for match in _TOKEN.finditer(redacted):
        out.append(escaped(redacted[copied : match.start()]))
        token = match.group()
        if match.group("source") is not None:
            out.append(f"<code>{escaped(token)}</code>")
        else:
            out.append(spec_link(token, anchors))
        copied = match.end()
    out.append(escaped(redacted[copied:]))
    return "".join(out)


def source_functions(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(_SOURCE.findall(text)))


def ratio_class(tally: Tally) -> str:
    if tally.applicable == 0:
        return "na"
    if tally.passed == tally.applicable:
        return "all"
    return "none" if tally.passed == 0 else "some"


def fraction(tally: Tally) -> str:
    return "—" if tally.applicable == 0 else f"{tally.passed:,} / {tally.applicable:,}"


def outcome_cell(judged: Mapping[str, Any] | None, level: str) -> str:
    if judged is None:
        return '<td class="na">—</td>'
    outcome = str(judged["outcome"])
    css, label = outcome, outcome
    if judged["unexpected"] and level == MUST:
        css, label = "unexpected", f"{outcome} (unexpected)"
    elif judged["unexpected"]:  # SPEC.md#levels: reported, never pinned
        label = f"{outcome} ({level} not met)"
    return f'<td class="{html.escape(css)}">{html.escape(label)}</td>'


# ---------------------------------------------------------------------------------------------
# The matrix


def matrix(runs: Sequence[CountedRun]) -> Iterator[str]:
    yield "<table><thead><tr><th>implementation</th><th>version</th>"
    for family in COLUMNS:
        yield f'<th><a href="#column-{family.key}">{html.escape(family.title)}</a></th>'
    yield "<th>all</th></tr></thead><tbody>"
    for run in runs:
        yield (
            f'<tr><th><a href="#{anchor_id(run.key)}">{shown(run.name)}</a></th>'
            f"<td>{shown(run.version)}</td>"
        )
        for family in COLUMNS:
            yield _matrix_cell(run, family)
        yield _matrix_cell(run, None)
        yield "</tr>"
    yield "</tbody></table>"


def _matrix_cell(run: CountedRun, family: Family | None) -> str:
    tallies = {p: (t.total if family is None else t.of(family)) for p, t in run.profiles.items()}
    if not tallies:
        return '<td class="na">—</td>'
    first = next(iter(tallies.values()))
    lines = "<br>".join(f"{p[0]}: {fraction(t)}" for p, t in tallies.items())
    title = " · ".join(f"{p}: passed / applicable MUST cases" for p in tallies)
    inner = lines
    if family is not None:
        inner = f'<a href="#{anchor_id(run.key, family.key)}">{lines}</a>'
    return f'<td class="n {ratio_class(first)}" title="{title}">{inner}</td>'


# ---------------------------------------------------------------------------------------------
# One implementation


def facts(run: CountedRun, expectations: str | None) -> Iterator[str]:
    report = run.report
    info = report["implementation"] or {}
    suite = report["suite"]
    rows: list[tuple[str, str]] = [
        ("language", shown(run.language)),
        ("version", shown(run.version)),
        ("operations", shown(", ".join(info.get("operations", ())) or "—")),
        ("history forms", shown(", ".join(report.get("history_formats", ())) or "—")),
        ("provenance", shown(str(report.get("provenance", "—")))),
        (
            "suite",
            f"{shown(suite['version'])} (<code>{shown(suite['sha256'][:12])}</code>, "
            f"{suite['cases']:,} cases)",
        ),
        ("run", f"{shown(report['started'][:10])}, {shown(report['mode'])}"),
        (
            "command (ADAPTER)",
            f"<code>{shown(' '.join(report.get('command') or ('(in process)',)))}</code>",
        ),
        (
            "lives in",
            f'<a href="{REPO_HREF}{html.escape(run.directory)}">{shown(run.directory)}</a>',
        ),
    ]
    if expectations is not None:
        href = f"{REPO_HREF}{html.escape(expectations)}"
        rows.append(("expectations", f'<a href="{href}">{shown(expectations)}</a>'))
    report_path = f"conformance/implementations/reports/{run.key}.json"
    rows.append(("report", f'<a href="{REPO_HREF}{report_path}">{shown(report_path)}</a>'))
    if report.get("handshake_error"):
        rows.append(("handshake", shown(str(report["handshake_error"]))))
    yield '<dl class="facts">'
    for name, value in rows:
        yield f"<dt>{name}</dt><dd>{value}</dd>"
    yield "</dl>"


def _probe_value(probe: Mapping[str, Any], name: str) -> str:
    if name not in probe:
        return "—"
    return shown(json.dumps(redact_structure(probe[name]), ensure_ascii=False))


def defaults_probe(run: CountedRun, anchors: frozenset[str]) -> Iterator[str]:
    probes = run.report.get("defaults") or []
    yield f"<h3>With no configuration (the defaults probe, {spec_link('P5', anchors)})</h3>"
    if not probes:
        yield "<p>Not probed: it does not declare the <code>defaults</code> operation.</p>"
        return
    yield (
        "<table><thead><tr><th>target provider</th><th>model</th><th>answer</th>"
        "<th><code>store</code></th><th><code>include</code></th><th><code>reasoning</code></th>"
        "<th><code>prompt_cache_key</code></th></tr></thead><tbody>"
    )
    for probe in probes:
        yield (
            f"<tr><td>{shown(str(probe['target_provider']))}</td><td>{shown(str(probe['model']))}</td>"
            f"<td>{shown(str(probe['answer']))}</td><td>{_probe_value(probe, 'store')}</td>"
            f"<td>{_probe_value(probe, 'include')}</td><td>{_probe_value(probe, 'reasoning')}</td>"
            f"<td>{shown(str(probe['key_form']))}</td></tr>"
        )
    yield "</tbody></table>"


def _entries(report: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    recorded = report.get("expectations") or {}
    return {entry["id"]: entry for entry in recorded.get("entries", ())}


def _reasons(case: Mapping[str, Any], entries: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The reasons of the expectations entries applied to the case, one per distinct entry."""
    ids = [judged.get("expectation") for judged in case["profiles"].values()]
    found = [entries[i]["reason"] for i in dict.fromkeys(ids) if i is not None and i in entries]
    if not found and case.get("expectation") is not None:
        found = [case["expectation"]["reason"]]
    return found


def _why(
    case: Mapping[str, Any], reasons: Sequence[str], texts: CaseText, anchors: frozenset[str]
) -> str:
    if reasons:
        return "<br>".join(linked_reason(reason, texts, anchors) for reason in reasons)
    message = (case.get("detail") or {}).get("message")
    if case["unexpected"] and case["level"] != MUST:
        note = f"a {case['level']} case: reported, never pinned"
        return note + (f"; {texts.text(message)}" if message else "")
    if case["unexpected"]:
        note = "not in the expectations file"
        return note + (f": {texts.text(message)}" if message else "")
    return texts.text(message) if message else "—"


def detail_block(case: Mapping[str, Any], texts: CaseText) -> str:
    detail = case.get("detail") or {}
    parts: list[str] = []
    pointer = str(detail.get("pointer", ""))
    for name in _DETAIL_TEXTS:
        if name in detail:
            text = str(detail[name])
            shown_text = (
                texts.line(text) if name in _LINES else escaped(_cut(texts.redaction.text(text)))
            )
            parts.append(f"<dt>{name}</dt><dd><pre>{shown_text}</pre></dd>")
        if name == "pointer":
            for value in ("expected", "actual"):
                if value in detail:
                    shown_value = texts.value(detail[value], pointer)
                    parts.append(f"<dt>{value}</dt><dd><pre>{shown_value}</pre></dd>")
    if "request" in detail:
        reproduce = f"conformance request {case['id']} | ADAPTER"
        parts.append(f"<dt>reproduce</dt><dd><code>{texts.text(reproduce)}</code></dd>")
    listed = "".join(parts)
    return f'<details><summary>what happened</summary><dl class="facts">{listed}</dl></details>'


def case_row(
    run: CountedRun,
    case: Mapping[str, Any],
    entries: Mapping[str, Mapping[str, Any]],
    anchors: frozenset[str],
) -> str:
    texts = case_text(case)
    reasons = _reasons(case, entries)
    sources = [s for reason in reasons for s in source_functions(texts.redaction.text(reason))]
    level = "" if case["level"] == "MUST" else f" <small>({html.escape(case['level'])})</small>"
    cells = [
        f'<td id="{anchor_id(run.key, "case", case["id"])}">'
        f"<code>{texts.text(case['id'])}</code>{level}"
        f"{detail_block(case, texts)}</td>",
        f"<td>{spec_link(case['spec'], anchors)}</td>",
        *(outcome_cell(case["profiles"].get(p), case["level"]) for p in PROFILES),
        f"<td>{_why(case, reasons, texts, anchors)}</td>",
        "<td>"
        + ("<br>".join(f"<code>{html.escape(s)}</code>" for s in dict.fromkeys(sources)) or "—")
        + "</td>",
    ]
    return "<tr>" + "".join(cells) + "</tr>"


def _passed_everywhere(case: Mapping[str, Any]) -> bool:
    return all(judged["outcome"] == PASS for judged in case["profiles"].values())


def _id_list(run: CountedRun, label: str, cases: Sequence[Mapping[str, Any]]) -> str:
    ids = "".join(
        f'<code id="{anchor_id(run.key, "case", c["id"])}">{shown(c["id"])}</code>' for c in cases
    )
    return f'<p class="ids">{label} ({len(cases):,}): {ids}</p>'


def family_block(
    run: CountedRun, family: Family, cases: Sequence[Mapping[str, Any]], anchors: frozenset[str]
) -> Iterator[str]:
    entries = _entries(run.report)
    info = run.report["implementation"]
    declared = set(info["operations"]) if info is not None else set()
    applying = [c for c in cases if c["outcome"] != NOT_APPLICABLE]
    summary = " · ".join(
        f"{p} {fraction(t.of(family))}"
        + (f" ({t.of(family).xfail:,} xfail)" if t.of(family).xfail else "")
        + (f" ({t.of(family).unexpected:,} unexpected)" if t.of(family).unexpected else "")
        for p, t in run.profiles.items()
    )
    skipped = next(iter(run.profiles.values())).of(family).skipped if run.profiles else 0
    if skipped:
        summary += f" · {skipped:,} skipped"
    yield (
        f'<details class="family" id="{anchor_id(run.key, family.key)}"><summary>'
        f"{escaped(family.title)}: {summary or 'no case'}</summary>"
    )
    passed = [c for c in applying if _passed_everywhere(c)]
    undeclared = [c for c in applying if c["outcome"] == SKIPPED and c["operation"] not in declared]
    listed = [c for c in applying if not _passed_everywhere(c) and c not in undeclared]
    if listed:
        yield (
            "<table><thead><tr><th>case</th><th>rule</th><th>verdict</th><th>diagnostics</th>"
            "<th>why (the expectations entry's reason, or what happened)</th>"
            "<th>source function</th></tr></thead><tbody>"
        )
        for case in listed:
            yield case_row(run, case, entries, anchors)
        yield "</tbody></table>"
    if passed:
        yield _id_list(run, "Passed in every profile", passed)
    if undeclared:
        operations = ", ".join(sorted({c["operation"] for c in undeclared}))
        yield _id_list(run, f"Skipped, operation not declared ({escaped(operations)})", undeclared)
    left_out = len(cases) - len(applying)
    if left_out:
        yield (
            f"<p>Not applicable: {left_out:,} (a history form it does not read, "
            f"{spec_link('CL4', anchors)}).</p>"
        )
    yield "</details>"


def implementation_section(
    run: CountedRun, expectations: str | None, anchors: frozenset[str]
) -> Iterator[str]:
    yield f'<section id="{anchor_id(run.key)}"><h2>{shown(run.name)} {shown(run.version)}</h2>'
    yield from facts(run, expectations)
    yield from defaults_probe(run, anchors)
    yield "<h3>By rule family</h3>"
    by_family: dict[str, list[Mapping[str, Any]]] = {family.key: [] for family in COLUMNS}
    for case in run.report["cases"]:
        by_family[family_of(case["spec"]).key].append(case)
    for family in COLUMNS:
        yield from family_block(run, family, by_family[family.key], anchors)
    yield "</section>"


# ---------------------------------------------------------------------------------------------
# The page


def columns_table(
    suite: Mapping[str, int], outside: Iterable[str], anchors: frozenset[str]
) -> Iterator[str]:
    yield '<h2 id="columns">The columns</h2>'
    yield (
        "<p>A case counts in the column of the rule it pins (its <code>spec</code>); only MUST "
        f"cases count ({spec_link('CL1', anchors, 'SPEC CL1')}).</p>"
    )
    yield (
        "<table><thead><tr><th>column</th><th>SPEC rules</th><th>what they decide</th>"
        "<th>MUST cases</th></tr></thead><tbody>"
    )
    for family in COLUMNS:
        rules = family.rules or tuple(sorted(outside))
        links = ", ".join(spec_link(rule, anchors) for rule in rules)
        yield (
            f'<tr id="column-{family.key}"><th>{html.escape(family.title)}</th><td>{links}</td>'
            f"<td>{_markdown_code(family.decides)}</td>"
            f'<td class="n">{suite.get(family.key, 0):,}</td></tr>'
        )
    yield "</tbody></table>"


def _markdown_code(text: str) -> str:
    """The families' descriptions mark code with backticks, as the Markdown page shows them."""
    parts = html.escape(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


def page(
    runs: Sequence[CountedRun],
    expectations: Mapping[str, str | None],
    suite: Mapping[str, int],
    outside: Iterable[str],
    anchors: frozenset[str],
) -> str:
    """The whole HTML document; ``expectations`` maps a run's key to its expectations file."""
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>Known implementations, case by case</title>",
        f"<style>{CSS}</style></head><body>",
        "<h1>Known implementations, case by case</h1>",
        "<p>Generated by <code>python tools/results_page.py --write</code> from the run reports in "
        f'<a href="{REPO_HREF}conformance/implementations/reports/">'
        "conformance/implementations/reports/</a> (<code>python tools/run_implementations.py"
        "</code> makes them from fresh runs); do not edit. "
        'The same counts as a table: <a href="implementations.md">implementations.md</a>. '
        "Each cell is <em>passed / applicable</em> MUST cases in the verdict (v) and diagnostics "
        f"(d) profiles ({spec_link('CL2', anchors, 'SPEC CL2')}); a case in a history form the "
        f"implementation does not read does not apply ({spec_link('CL4', anchors, 'CL4')}), nor "
        "one of an operation it does not declare; a case it skipped applies and did not pass. "
        "Open a cell's family for its cases: each with its "
        "outcome, the reason its expectations entry records, and what was sent and received. "
        f"Requests, replies and values are redacted ({spec_link('H6', anchors, 'SPEC H6')}, "
        f"{spec_link('H7', anchors, 'H7')}) and cut at {TEXT_LIMIT:,} characters.</p>",
        *matrix(runs),
    ]
    for run in runs:
        out.extend(implementation_section(run, expectations.get(run.key), anchors))
    out.extend(columns_table(suite, outside, anchors))
    out.append("</body></html>")
    return "\n".join(out) + "\n"
