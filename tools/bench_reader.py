"""Benchmark the strict reasoning-replay reader against ``json.loads`` and JSON Schema validation.

Usage::

    python tools/bench_reader.py [--count 100000] [--passes 5] [--corpus PATH]
                                 [--jsonschema-sample 10000] [--json OUT]

``REASONING_REPLAY_PURE_PYTHON=1`` times the reader without its optional C accelerators (the
report's notes say which ran).

Without ``--corpus`` the corpus comes from ``tools/corpus.py`` (``--count``, ``--seed``,
``--invalid-fraction``), generated in memory. With ``--corpus PATH`` the lines are read from
the file and the labels from its sidecar (``PATH.labels.jsonl``) when there is one.

Method (after ``/work/shared/research/perf-anchors.md``):

- Every line is held as ``bytes``; then ``gc.collect(); gc.freeze()``.
- Before every timed pass over ``str`` input, the ``str`` list is rebuilt from the bytes
  (untimed), so no method benefits from a UTF-8 form cached inside a ``str`` by an earlier one.
- Each pass runs after a ``gc.collect()`` with gc left enabled, timed with ``perf_counter``.
  The passes of the methods are interleaved (pass 1 of every method, then pass 2, ...; by
  ``tools/benchharness.py``) so a drift in machine speed hits them alike. The figures reported
  are the median pass and, for the ratios, the min / median / max of the ratios taken within
  each pass, with the machine's load average at start and end.
- 1 MB = 10^6 bytes of UTF-8 line text (newlines excluded).

Methods timed:

1. ``json.loads`` on each line (``str``): the parse-only baseline.
2. ``parse_reasoning_replay_envelope`` on each line, as ``str`` and as ``bytes``.
3. ``json.loads`` + ``jsonschema.Draft202012Validator(schema, registry=schema_registry())``
   ``.is_valid``, precompiled, on the first ``--jsonschema-sample`` lines (it costs ~200 µs
   per record); compared per record.
4. ``json.loads`` + ``jsonschema_rs.validator_for(schema, registry=..., offline=True)``
   ``.is_valid`` on every line, when jsonschema_rs is installed and resolves every ``$ref``
   from the project's registry; otherwise skipped with a note.

Peers (``--layouts``, default ``canonical,reordered,spaced``; ``--layouts none`` leaves them out):
the same records laid out as other writers write them (``corpus.relayout``: SPEC C3's layout,
every object's members in a seeded random order, ``json.dumps``'s default spacing and escapes),
each read as ``bytes`` by

5. ``parse_reasoning_replay_envelope`` (``reader_<layout>``);
6. ``msgspec.json.Decoder(<the envelope as msgspec Structs>).decode`` (``msgspec_<layout>``): the
   typed decode of the performance anchors (closed Structs, ``Literal`` constants,
   ``min_length``, ``content`` absent or a non-empty array);
7. ``orjson.loads`` + ``jsonschema_rs`` ``is_valid`` (``orjson_rs_<layout>``), when both are.

Their ratios ``reader_vs_msgspec_<layout>`` and ``reader_vs_orjson_rs_<layout>`` (a peer's time
over the reader's, taken within each round; goal >= 1.0) are in ``peer_ratios``.

Verdicts are collected in one untimed pass (which also warms every method up) and compared:

- reader verdict == label, on every record (needs labels);
- reader verdict on ``bytes`` == on ``str`` (verdict and code), on every record;
- reader verdict == jsonschema verdict, on every sampled record that is schema-visible, i.e.
  has no duplicate member (label ``schema_visible``; found by parsing when there are no labels);
- jsonschema verdict == label on the same records (checks the corpus itself);
- reader verdict == jsonschema_rs verdict on every schema-visible record, when it ran;
- per layout: the reader's verdict and code on the relaid record == on the canonical one (the
  value is the same, so SPEC E6 gives the same code); msgspec's and orjson+jsonschema_rs's
  verdict == label on every schema-visible record;
- reader code == the code SPEC.md E6 gives the record's kind (``corpus.EXPECTED_CODES``),
  on every invalid record: reported only, never a failure.

Any mismatch in the other checks makes the exit status 1. The three headline ratios come
from the same run: ``reader_vs_json_loads`` (throughput, ``str`` input on both sides; goal
>= 1.5), ``reader_vs_jsonschema`` (per-record time; goal >= 25) and ``verdict_agreement``
(the share of reader-vs-label and reader-vs-jsonschema comparisons that agree; must be 1.0).
Missing a throughput goal is reported but does not change the exit status: the numbers come
from a shared VM, where runs vary by 20-30 %.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Annotated, Any, Final, Literal, Protocol

import corpus
import msgspec
from benchharness import Rounds, Spread, Trial, frozen_gc, run_rounds, timed
from jsonschema import Draft202012Validator  # type: ignore[import-untyped,unused-ignore]
from referencing import Registry

try:
    from reasoning_replay import parse_reasoning_replay_envelope, schema_registry
    from reasoning_replay.atomic_files import replace_file
    from reasoning_replay.record import reader
except ImportError:  # not installed: use this checkout's reference_impl/
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "reference_impl"))
    sys.modules.pop("reasoning_replay", None)
    from reasoning_replay import parse_reasoning_replay_envelope, schema_registry
    from reasoning_replay.atomic_files import replace_file
    from reasoning_replay.record import reader

try:
    import jsonschema_rs
except ImportError:  # optional: its row is skipped
    jsonschema_rs = None  # type: ignore[assignment]

try:
    import orjson
except ImportError:  # optional: the orjson+jsonschema_rs peer is skipped
    orjson = None  # type: ignore[assignment]

SCHEMA_ID: Final = "urn:reasoning-replay:schema:reasoning-replay.v1"
GOAL_VS_JSON_LOADS: Final = 1.5
GOAL_VS_JSONSCHEMA: Final = 25.0

JSON_LOADS: Final = "json_loads"
JSON_LOADS_BYTES: Final = "json_loads_bytes"
READER_STR: Final = "reader_str"
READER_BYTES: Final = "reader_bytes"
JSONSCHEMA: Final = "jsonschema"
JSONSCHEMA_RS: Final = "jsonschema_rs"

DESCRIPTIONS: Final = {
    JSON_LOADS: "json.loads (str)",
    JSON_LOADS_BYTES: "json.loads (bytes)",
    READER_STR: "parse_reasoning_replay_envelope (str)",
    READER_BYTES: "parse_reasoning_replay_envelope (bytes)",
    JSONSCHEMA: "json.loads + jsonschema Draft202012Validator.is_valid (str, sample)",
    JSONSCHEMA_RS: "json.loads + jsonschema_rs validator_for(...).is_valid (str)",
}

PEER_READER: Final = "reader"
PEER_MSGSPEC: Final = "msgspec"
PEER_ORJSON_RS: Final = "orjson_rs"
PEER_DESCRIPTIONS: Final = {
    PEER_READER: "parse_reasoning_replay_envelope (bytes)",
    PEER_MSGSPEC: "msgspec.json.Decoder(envelope Structs).decode (bytes)",
    PEER_ORJSON_RS: "orjson.loads + jsonschema_rs is_valid (bytes)",
}
GOAL_VS_PEERS: Final = 1.0

# Agreement checks; every one outside NOT_GATED must have zero mismatches.
READER_VS_LABEL: Final = "reader_vs_label"
READER_BYTES_VS_STR: Final = "reader_bytes_vs_str"
READER_VS_JSONSCHEMA: Final = "reader_vs_jsonschema"
JSONSCHEMA_VS_LABEL: Final = "jsonschema_vs_label"
READER_VS_JSONSCHEMA_RS: Final = "reader_vs_jsonschema_rs"
# Reported, never a failure: the spec's codes may still move while the reader is written.
READER_CODE_VS_SPEC: Final = "reader_code_vs_spec"
NOT_GATED: Final = frozenset({READER_CODE_VS_SPEC})

_MAX_EXAMPLES: Final = 10


class ReaderResult(Protocol):
    """The part of the reader's result the benchmark looks at."""

    @property
    def resumable(self) -> bool: ...

    @property
    def code(self) -> str | None: ...


Parse = Callable[[str | bytes], ReaderResult]
Verdict = Callable[[str], bool]


def machine_facts() -> dict[str, Any]:
    """Interpreter, CPU and library versions, for the report."""
    cpu_model = ""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for row in cpuinfo.read_text(errors="replace").splitlines():
            if row.startswith("model name"):
                cpu_model = row.split(":", 1)[1].strip()
                break
    versions: dict[str, str] = {}
    for dist in ("reasoning-replay", "jsonschema", "referencing", "jsonschema-rs", "orjson"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = "not installed"
    return {
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": platform.platform(),
        "cpu_model": cpu_model or platform.processor(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "libraries": versions,
    }


def load_corpus(path: Path) -> tuple[list[bytes], list[corpus.Label] | None]:
    """The lines of a corpus file, and its labels if the sidecar exists."""
    lines = path.read_bytes().split(b"\n")
    if lines and not lines[-1]:
        lines.pop()
    labels_file = corpus.labels_path_for(path)
    if not labels_file.is_file():
        return lines, None
    labels: list[corpus.Label] = [
        json.loads(row) for row in labels_file.read_bytes().splitlines() if row
    ]
    if len(labels) != len(lines):
        raise ValueError(f"{labels_file} has {len(labels)} labels for {len(lines)} lines")
    return lines, labels


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        raise _DuplicateMemberError
    return value


class _DuplicateMemberError(Exception):
    pass


def has_duplicate_member(text: str) -> bool:
    """Whether any JSON object in ``text`` names a member twice (which a schema cannot see)."""
    try:
        json.loads(text, object_pairs_hook=_reject_duplicates)
    except _DuplicateMemberError:
        return True
    except ValueError:
        return False
    return False


def _loop_json_loads(lines: Sequence[str | bytes]) -> None:
    loads = json.loads
    for line in lines:
        try:  # noqa: SIM105 - a try costs nothing in 3.11; a context manager would
            loads(line)
        except ValueError:
            pass


def _make_reader_loop(parse: Parse) -> Callable[[Sequence[Any]], None]:
    def loop(lines: Sequence[Any]) -> None:
        for line in lines:
            parse(line)

    return loop


def _make_schema_loop(is_valid: Callable[[Any], bool]) -> Callable[[Sequence[str]], None]:
    def loop(lines: Sequence[str]) -> None:
        loads = json.loads
        for line in lines:
            try:  # noqa: SIM105 - as above
                is_valid(loads(line))
            except ValueError:
                pass

    return loop


def _schema_verdict(is_valid: Callable[[Any], bool]) -> Verdict:
    def verdict(line: str) -> bool:
        try:
            value = json.loads(line)
        except ValueError:
            return False
        return bool(is_valid(value))

    return verdict


def _jsonschema_rs_is_valid(
    schema: Any, registry: Registry[Any]
) -> tuple[Callable[[Any], bool] | None, str]:
    """``jsonschema_rs``'s ``is_valid`` over the project's registry, or ``None`` and why not."""
    if jsonschema_rs is None:
        return None, "jsonschema_rs is not installed"
    try:
        rs_registry = jsonschema_rs.Registry([(uri, registry.contents(uri)) for uri in registry])
        validator = jsonschema_rs.validator_for(schema, registry=rs_registry, offline=True)
        validator.is_valid({})  # resolves every $ref reachable from the root, or raises
    except Exception as error:  # any failure only means this optional row is skipped
        return None, f"jsonschema_rs cannot resolve the schemas offline: {error}"
    return validator.is_valid, "validator_for(schema, registry=<all project schemas>, offline=True)"


# --- peers: msgspec's typed decode, orjson + jsonschema_rs -------------------------------------
# The envelope as msgspec Structs, as the performance anchors wrote it: closed objects, the
# constants as Literal types, non-empty id and ciphertext, content absent or a non-empty array.


class _PeerSummaryPart(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    type: Literal["summary_text"]
    text: str


class _PeerContentPart(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    type: Literal["reasoning_text"]
    text: str


class _PeerItem(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    type: Literal["reasoning"]
    id: Annotated[str, msgspec.Meta(min_length=1)]
    summary: list[_PeerSummaryPart]
    encrypted_content: Annotated[str, msgspec.Meta(min_length=1)]
    content: Annotated[list[_PeerContentPart], msgspec.Meta(min_length=1)] | msgspec.UnsetType = (
        msgspec.UNSET
    )


class _PeerEnvelope(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    schema: Literal["fast-agent.openai-responses.reasoning-replay"]
    version: Literal[1]
    item: _PeerItem


def _make_msgspec_loop() -> tuple[Callable[[Sequence[Any]], None], Callable[[bytes], bool]]:
    decode = msgspec.json.Decoder(_PeerEnvelope).decode

    def loop(lines: Sequence[Any]) -> None:
        for line in lines:
            try:  # noqa: SIM105 - as above
                decode(line)
            except msgspec.DecodeError:  # ValidationError is a DecodeError
                pass

    def verdict(line: bytes) -> bool:
        try:
            decode(line)
        except msgspec.DecodeError:
            return False
        return True

    return loop, verdict


def _make_orjson_rs_loop(
    is_valid: Callable[[Any], bool],
) -> tuple[Callable[[Sequence[Any]], None], Callable[[bytes], bool]]:
    loads = orjson.loads
    error = orjson.JSONDecodeError

    def loop(lines: Sequence[Any]) -> None:
        for line in lines:
            try:  # noqa: SIM105 - as above
                is_valid(loads(line))
            except error:
                pass

    def verdict(line: bytes) -> bool:
        try:
            return bool(is_valid(loads(line)))
        except error:
            return False

    return loop, verdict


def _relaid(lines: Sequence[bytes], layout: str, seed: int) -> list[bytes]:
    """``lines`` in ``layout`` (``corpus.relayout``), from a generator seeded per layout."""
    rng = random.Random(f"{seed}:{layout}")
    return [corpus.relayout(raw.decode("utf-8"), layout, rng).encode("utf-8") for raw in lines]


def _peer_pass(
    layout_lines: dict[str, list[bytes]],
    canonical: Sequence[bytes],
    labels: Sequence[corpus.Label] | None,
    parse: Parse,
    peers: dict[str, Callable[[bytes], bool]],
) -> dict[str, _Check]:
    """Untimed: per layout, the reader against itself on the canonical line, each peer against
    the label on every schema-visible record."""
    checks: dict[str, _Check] = {}
    for layout, lines in layout_lines.items():
        same = checks[f"reader_{layout}_vs_canonical"] = _Check(
            f"reader on the {layout} record == on the canonical one (verdict, code)"
        )
        by_peer = {
            name: checks.setdefault(
                f"{name}_{layout}_vs_label",
                _Check(f"{name} verdict == label, schema-visible {layout} records"),
            )
            for name in peers
        }
        for index, (raw, original) in enumerate(zip(lines, canonical, strict=True)):
            relaid, expected = parse(raw), parse(original)
            got = (relaid.resumable, _code_text(relaid.code))
            want = (expected.resumable, _code_text(expected.code))
            same.add(got == want, line=index, layout=layout, reader=got, canonical=want)
            label = labels[index] if labels is not None else None
            if label is None or not label["schema_visible"]:
                continue
            for name, verdict in peers.items():
                by_peer[name].add(verdict(raw) == label["valid"], line=index, layout=layout)
    return checks


def _describe(name: str) -> str:
    if name in DESCRIPTIONS:
        return DESCRIPTIONS[name]
    peer, _, layout = name.rpartition("_")
    return f"{PEER_DESCRIPTIONS[peer]}, {layout} layout"


def _peers(
    lines: list[bytes],
    labels: Sequence[corpus.Label] | None,
    parse: Parse,
    *,
    rs_is_valid: Callable[[Any], bool] | None,
    layouts: Sequence[str],
    seed: int,
    say: Callable[[str], None],
) -> tuple[_Plan, dict[str, _Check], dict[str, int]]:
    """The reader and its peers on the same records in every layout (each layout's lines made
    untimed): their plan entries, their agreement checks and each layout's bytes."""
    peers = {PEER_MSGSPEC: _make_msgspec_loop()}
    if orjson is not None and rs_is_valid is not None:
        peers[PEER_ORJSON_RS] = _make_orjson_rs_loop(rs_is_valid)
    layout_lines: dict[str, list[bytes]] = {}
    for layout in layouts:
        say(f"laying the records out: {layout}")
        layout_lines[layout] = lines if layout == "canonical" else _relaid(lines, layout, seed)
    say("peer verdict pass (untimed)")
    verdicts = {name: verdict for name, (_loop, verdict) in peers.items()}
    checks = _peer_pass(layout_lines, lines, labels, parse, verdicts)
    reader_loop = _make_reader_loop(parse)
    plan: _Plan = []
    for layout, relaid in layout_lines.items():
        plan.append((f"{PEER_READER}_{layout}", reader_loop, False, len(relaid), relaid))
        plan.extend(
            (f"{name}_{layout}", loop, False, len(relaid), relaid)
            for name, (loop, _verdict) in peers.items()
        )
    return plan, checks, {layout: sum(map(len, relaid)) for layout, relaid in layout_lines.items()}


def _method_row(name: str, records: int, size: int, times: list[float]) -> dict[str, Any]:
    median = statistics.median(times)
    return {
        "method": _describe(name),
        "records": records,
        "bytes": size,
        "pass_seconds": [round(t, 4) for t in times],
        "median_seconds": median,
        "records_per_s": records / median if median else float("inf"),
        "mb_per_s": size / 1e6 / median if median else float("inf"),
        "us_per_record": median / records * 1e6 if records else 0.0,
    }


class _Check:
    """Counts one kind of agreement and keeps a few mismatch examples."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.compared = 0
        self.mismatches = 0
        self.examples: list[dict[str, Any]] = []

    def add(self, agree: bool, **example: Any) -> None:
        self.compared += 1
        if not agree:
            self.mismatches += 1
            if len(self.examples) < _MAX_EXAMPLES:
                self.examples.append(example)

    def as_dict(self) -> dict[str, Any]:
        return {
            "what": self.what,
            "compared": self.compared,
            "mismatches": self.mismatches,
            "examples": self.examples,
        }


class _Agreement:
    """Every agreement check, plus the reader's diagnostic codes, from the untimed pass."""

    def __init__(self, with_rs: bool) -> None:
        self.checks = {
            READER_VS_LABEL: _Check("reader verdict == label, every record"),
            READER_BYTES_VS_STR: _Check("reader on bytes == reader on str (verdict, code)"),
            READER_VS_JSONSCHEMA: _Check(
                "reader verdict == jsonschema verdict, schema-visible sampled records"
            ),
            JSONSCHEMA_VS_LABEL: _Check(
                "jsonschema verdict == label, schema-visible sampled records"
            ),
        }
        self.checks[READER_CODE_VS_SPEC] = _Check(
            "reader code == corpus.EXPECTED_CODES[kind], invalid records (informational)"
        )
        if with_rs:
            self.checks[READER_VS_JSONSCHEMA_RS] = _Check(
                "reader verdict == jsonschema_rs verdict, schema-visible records"
            )
        self.codes_by_kind: dict[str, Counter[str]] = {}
        self.resumable = 0

    @property
    def ok(self) -> bool:
        return all(
            check.mismatches == 0 for name, check in self.checks.items() if name not in NOT_GATED
        )


def _code_text(code: object) -> str | None:
    """A reader code as plain text (a ``StrEnum`` member becomes its value)."""
    return None if code is None else str(getattr(code, "value", code))


def _verdict_pass(
    lines: Sequence[bytes],
    labels: Sequence[corpus.Label] | None,
    *,
    sample: int,
    parse: Parse,
    jsonschema_verdict: Verdict,
    rs_verdict: Verdict | None,
) -> _Agreement:
    """One untimed pass: every verdict compared, every code counted (and every method warmed)."""
    found = _Agreement(rs_verdict is not None)
    checks = found.checks
    for index, raw in enumerate(lines):
        text = raw.decode("utf-8", errors="surrogateescape")
        result = parse(text)
        from_bytes = parse(raw)
        label = labels[index] if labels is not None else None
        kind = label["kind"] if label is not None else ("valid" if result.resumable else "?")
        found.resumable += result.resumable
        code, bytes_code = _code_text(result.code), _code_text(from_bytes.code)
        where = {"line": index, "kind": kind, "reader": result.resumable, "code": code}
        if label is not None:
            checks[READER_VS_LABEL].add(result.resumable == label["valid"], **where)
        checks[READER_BYTES_VS_STR].add(
            (from_bytes.resumable, bytes_code) == (result.resumable, code),
            **where,
            bytes_reader=from_bytes.resumable,
            bytes_code=bytes_code,
        )
        expected_code = corpus.EXPECTED_CODES.get(kind)
        if expected_code is not None:
            checks[READER_CODE_VS_SPEC].add(code == expected_code, **where, spec=expected_code)
        if not result.resumable or (label is not None and not label["valid"]):
            found.codes_by_kind.setdefault(kind, Counter())[str(code)] += 1
        in_sample = index < sample
        if not in_sample and rs_verdict is None:
            continue
        visible = label["schema_visible"] if label is not None else not has_duplicate_member(text)
        if not visible:
            continue
        if in_sample:
            by_schema = jsonschema_verdict(text)
            checks[READER_VS_JSONSCHEMA].add(
                by_schema == result.resumable, **where, jsonschema=by_schema
            )
            if label is not None:
                checks[JSONSCHEMA_VS_LABEL].add(
                    by_schema == label["valid"], **where, jsonschema=by_schema
                )
        if rs_verdict is not None:
            by_rs = rs_verdict(text)
            checks[READER_VS_JSONSCHEMA_RS].add(
                by_rs == result.resumable, **where, jsonschema_rs=by_rs
            )
    return found


# (method, loop, whether it reads str, records, the lines it reads)
_Plan = list[tuple[str, Callable[[Sequence[Any]], None], bool, int, Sequence[bytes]]]


def _timed_passes(plan: _Plan, passes: int, say: Callable[[str], None]) -> Rounds:
    """Seconds per pass per method; the methods' passes interleave, under a frozen gc."""

    def trial(
        loop: Callable[[Sequence[Any]], None], wants_str: bool, n: int, lines: Sequence[bytes]
    ) -> Trial:
        def run() -> float:
            # Fresh str objects for every str pass: no cached UTF-8 carries over (untimed).
            items: Sequence[Any] = (
                [raw.decode("utf-8", errors="surrogateescape") for raw in lines[:n]]
                if wants_str
                else lines[:n]
            )
            return timed(lambda: loop(items))()

        return run

    trials = {name: trial(loop, wants_str, n, lines) for name, loop, wants_str, n, lines in plan}
    with frozen_gc():
        return run_rounds(trials, passes, progress=say)


def _ratio_spreads(rounds: Rounds, plan: _Plan) -> dict[str, dict[str, float | str] | None]:
    """Each headline ratio's min / median / max over the passes, each taken within one pass
    (per record, so a method timed on a sample compares fairly)."""
    records = {name: n for name, _loop, _wants_str, n, _lines in plan}

    def spread(slow: str, fast: str) -> dict[str, float | str] | None:
        if slow not in records or fast not in records or not records[slow]:
            return None
        per_record = records[fast] / records[slow]
        values = [r * per_record for r in rounds.per_round_ratios(slow, fast)]
        return {"numerator": slow, "denominator": fast, **Spread.of(values).to_json()}

    return {
        "reader_vs_json_loads": spread(JSON_LOADS, READER_STR),
        "reader_vs_jsonschema": spread(JSONSCHEMA, READER_STR),
        "reader_bytes_vs_json_loads_bytes": spread(JSON_LOADS_BYTES, READER_BYTES),
        "reader_bytes_vs_jsonschema": spread(JSONSCHEMA, READER_BYTES),
    }


def _peer_ratios(rounds: Rounds, layouts: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per layout and peer: the peer's time over the reader's, taken within each round."""
    ratios: dict[str, dict[str, Any]] = {}
    for layout in layouts:
        reader = f"{PEER_READER}_{layout}"
        for peer in (PEER_MSGSPEC, PEER_ORJSON_RS):
            name = f"{peer}_{layout}"
            if name in rounds.times and reader in rounds.times:
                spread = rounds.ratio(name, reader)
                ratios[f"reader_vs_{name}"] = {
                    "layout": layout,
                    "peer": peer,
                    "numerator": name,
                    "denominator": reader,
                    **spread.to_json(),
                    "goal": GOAL_VS_PEERS,
                    "met": spread.median >= GOAL_VS_PEERS,
                }
    return ratios


def _ratios(
    methods: dict[str, dict[str, Any]], found: _Agreement
) -> tuple[dict[str, float | None], dict[str, float | None], dict[str, Any]]:
    """The three headline ratios, the secondary ones, and the goals verdicts."""

    def ratio(slow: str, fast: str) -> float | None:
        if slow not in methods or not methods[fast]["us_per_record"]:
            return None
        return float(methods[slow]["us_per_record"] / methods[fast]["us_per_record"])

    headline = [found.checks[READER_VS_LABEL], found.checks[READER_VS_JSONSCHEMA]]
    compared = sum(check.compared for check in headline)
    agreeing = compared - sum(check.mismatches for check in headline)
    ratios = {
        "reader_vs_json_loads": ratio(JSON_LOADS, READER_STR),
        "reader_vs_jsonschema": ratio(JSONSCHEMA, READER_STR),
        "verdict_agreement": agreeing / compared if compared else None,
    }
    extra = {
        "reader_bytes_vs_json_loads": ratio(JSON_LOADS, READER_BYTES),
        "reader_bytes_vs_json_loads_bytes": ratio(JSON_LOADS_BYTES, READER_BYTES),
        "reader_bytes_vs_jsonschema": ratio(JSONSCHEMA, READER_BYTES),
        "reader_vs_json_loads_plus_jsonschema_rs": ratio(JSONSCHEMA_RS, READER_STR),
    }

    def met(value: float | None, goal: float) -> bool | None:
        return None if value is None else value >= goal

    goals = {
        "reader_vs_json_loads": {
            "goal": GOAL_VS_JSON_LOADS,
            "met": met(ratios["reader_vs_json_loads"], GOAL_VS_JSON_LOADS),
        },
        "reader_vs_jsonschema": {
            "goal": GOAL_VS_JSONSCHEMA,
            "met": met(ratios["reader_vs_jsonschema"], GOAL_VS_JSONSCHEMA),
        },
        "verdict_agreement": {"goal": 1.0, "met": all(c.mismatches == 0 for c in headline)},
    }
    return ratios, extra, goals


def run_benchmark(
    lines: Sequence[bytes],
    labels: Sequence[corpus.Label] | None,
    *,
    passes: int = 5,
    jsonschema_sample: int = 10_000,
    use_jsonschema_rs: bool = True,
    layouts: Sequence[str] = corpus.LAYOUTS,
    layout_seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Time every method over ``lines`` and compare verdicts; return the figures as a dict.

    The dict has ``machine``, ``corpus``, ``passes``, ``methods`` (one row per method timed),
    ``ratios`` (``reader_vs_json_loads``, ``reader_vs_jsonschema``, ``verdict_agreement``),
    ``extra_ratios``, ``peer_ratios`` (per layout of ``layouts``, each peer against the
    reader), ``goals``, ``agreement`` (one entry per check), ``reader_codes``, ``notes`` and
    ``ok`` (true when no check has a mismatch).
    """
    say = progress or (lambda _message: None)
    if passes < 1:
        raise ValueError("passes must be >= 1")
    if labels is not None and len(labels) != len(lines):
        raise ValueError("labels and lines differ in length")
    parse: Parse = parse_reasoning_replay_envelope
    registry = schema_registry()
    schema = registry.contents(SCHEMA_ID)
    validator = Draft202012Validator(schema, registry=registry)
    notes: list[str] = [
        "reader: C accelerators "
        + (
            "in use (canonical path, strict parse)"
            if reader.ACCELERATED and reader.parse_strict_is_accelerated()
            else f"not all in use (canonical path: {reader.ACCELERATED}, "
            f"strict parse: {reader.parse_strict_is_accelerated()})"
        )
    ]
    rs_is_valid: Callable[[Any], bool] | None = None
    if use_jsonschema_rs:
        rs_is_valid, rs_note = _jsonschema_rs_is_valid(schema, registry)
        notes.append(f"jsonschema_rs: {rs_note}")
    else:
        notes.append("jsonschema_rs: not requested")
    if labels is None:
        notes.append("no labels: reader-vs-label not checked; duplicates found by parsing")

    lines = list(lines)
    count = len(lines)
    sample = min(max(jsonschema_sample, 0), count)
    total_bytes = sum(map(len, lines))
    sample_bytes = sum(map(len, lines[:sample]))

    say("verdict pass (untimed)")
    found = _verdict_pass(
        lines,
        labels,
        sample=sample,
        parse=parse,
        jsonschema_verdict=_schema_verdict(validator.is_valid),
        rs_verdict=_schema_verdict(rs_is_valid) if rs_is_valid is not None else None,
    )

    reader_loop = _make_reader_loop(parse)
    plan: _Plan = [
        (JSON_LOADS, _loop_json_loads, True, count, lines),
        (JSON_LOADS_BYTES, _loop_json_loads, False, count, lines),
        (READER_STR, reader_loop, True, count, lines),
        (READER_BYTES, reader_loop, False, count, lines),
        (JSONSCHEMA, _make_schema_loop(validator.is_valid), True, sample, lines),
    ]
    if rs_is_valid is not None:
        plan.append((JSONSCHEMA_RS, _make_schema_loop(rs_is_valid), True, count, lines))

    if orjson is None or rs_is_valid is None:
        notes.append("orjson+jsonschema_rs peer: skipped (orjson or jsonschema_rs unavailable)")
    peer_plan, peer_checks, layout_bytes = _peers(
        lines, labels, parse, rs_is_valid=rs_is_valid, layouts=layouts, seed=layout_seed, say=say
    )
    plan.extend(peer_plan)
    found.checks.update(peer_checks)

    rounds = _timed_passes(plan, passes, say)

    def size_of(name: str) -> int:
        if name == JSONSCHEMA:
            return sample_bytes
        layout = name.rpartition("_")[2]
        return layout_bytes[layout] if name not in DESCRIPTIONS else total_bytes

    methods = {
        name: _method_row(name, n, size_of(name), list(rounds.times[name]))
        for name, _loop, _wants_str, n, _lines in plan
    }
    ratios, extra_ratios, goals = _ratios(methods, found)

    invalid_codes: Counter[str] = Counter()
    for kind, counter in found.codes_by_kind.items():
        if kind != "valid":
            invalid_codes.update(counter)
    label_counts = Counter(label["kind"] for label in labels) if labels is not None else None
    return {
        "machine": machine_facts(),
        "corpus": {
            "records": count,
            "bytes": total_bytes,
            "mean_bytes_per_record": total_bytes / count if count else 0.0,
            "jsonschema_sample": sample,
            "layouts": {layout: {"bytes": size} for layout, size in layout_bytes.items()},
            "labels": dict(sorted(label_counts.items())) if label_counts is not None else None,
            "reader_resumable": found.resumable,
        },
        "passes": passes,
        "methods": methods,
        "ratios": ratios,
        "ratio_spreads": _ratio_spreads(rounds, plan),
        "extra_ratios": extra_ratios,
        "peer_ratios": _peer_ratios(rounds, layouts),
        "goals": goals,
        "agreement": {name: check.as_dict() for name, check in found.checks.items()},
        "reader_codes": {
            "invalid_records": dict(invalid_codes.most_common()),
            "by_kind": {
                kind: dict(counter.most_common())
                for kind, counter in sorted(found.codes_by_kind.items())
            },
        },
        "notes": notes,
        "ok": found.ok,
        "harness": rounds.to_json(),
    }


def _fmt_ratio(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}x"


def format_report(results: dict[str, Any]) -> str:
    """The human-readable report of :func:`run_benchmark`'s figures."""
    out: list[str] = []
    machine = results["machine"]
    out.append(
        f"python {machine['python']} | {machine['platform']} | cpu {machine['cpu_model']} "
        f"x{machine['cpu_count']} (usable {machine['cpus_usable']})"
    )
    out.append("libraries: " + ", ".join(f"{k} {v}" for k, v in machine["libraries"].items()))
    info = results["corpus"]
    out.append(
        f"corpus: {info['records']} records, {info['bytes'] / 1e6:.1f} MB "
        f"(mean {info['mean_bytes_per_record'] / 1e3:.2f} KB), jsonschema sample "
        f"{info['jsonschema_sample']}, passes {results['passes']} (median reported)"
    )
    out.append("")
    out.append(
        f"{'method':<72} {'records':>8} {'median s':>9} {'rec/s':>10} {'MB/s':>8} {'µs/rec':>9}"
    )
    for row in results["methods"].values():
        out.append(
            f"{row['method']:<72} {row['records']:>8} {row['median_seconds']:>9.3f} "
            f"{row['records_per_s']:>10,.0f} {row['mb_per_s']:>8.1f} {row['us_per_record']:>9.2f}"
        )
    out.append("per-pass seconds:")
    for name, row in results["methods"].items():
        out.append(f"  {name}: {row['pass_seconds']}")
    out.append("")
    ratios, goals = results["ratios"], results["goals"]
    out.append("headline ratios (of the median passes):")
    for key in ("reader_vs_json_loads", "reader_vs_jsonschema"):
        goal = goals[key]
        state = {True: "met", False: "NOT met", None: "n/a"}[goal["met"]]
        out.append(f"  {key}: {_fmt_ratio(ratios[key])} (goal >= {goal['goal']}x: {state})")
    agreement = ratios["verdict_agreement"]
    out.append(
        "  verdict_agreement: "
        + ("n/a" if agreement is None else f"{agreement:.6f}")
        + (" (all agree)" if goals["verdict_agreement"]["met"] else " (MISMATCHES)")
    )
    out.append("ratios within each pass, min / median / max:")
    for key, spread in results["ratio_spreads"].items():
        if spread is not None:
            out.append(
                f"  {key}: {spread['min']:.2f} / {spread['median']:.2f} / {spread['max']:.2f}"
            )
    load = results["harness"]["machine"]
    out.append(
        f"load average (1/5/15 min) {load['load_average_start']} at start,"
        f" {load['load_average_end']} at end; {load['cpus']} CPUs usable"
    )
    if results["peer_ratios"]:
        out.append("the reader against its peers (a peer's time over the reader's, min / median /"
                   f" max of the rounds; goal >= {GOAL_VS_PEERS}):")  # fmt: skip
        for key, spread in results["peer_ratios"].items():
            state = "met" if spread["met"] else "NOT met"
            out.append(
                f"  {key}: {spread['min']:.2f} / {spread['median']:.2f} / {spread['max']:.2f}"
                f" ({state})"
            )
    out.append("other ratios: " + ", ".join(
        f"{key} {_fmt_ratio(value)}" for key, value in results["extra_ratios"].items()
    ))  # fmt: skip
    out.append("")
    out.append("agreement checks:")
    for name, check in results["agreement"].items():
        gate = "" if name not in NOT_GATED else " [not gated]"
        out.append(
            f"  {name}: {check['mismatches']} mismatches of {check['compared']}"
            f" ({check['what']}){gate}"
        )
        out.extend(f"    e.g. {json.dumps(example)}" for example in check["examples"])
    out.append("")
    codes = results["reader_codes"]
    out.append("reader codes on invalid records: " + json.dumps(codes["invalid_records"]))
    out.append("reader codes by label kind:")
    for kind, counter in codes["by_kind"].items():
        out.append(f"  {kind}: {json.dumps(counter)}")
    if results["corpus"]["labels"] is not None:
        out.append("labels: " + json.dumps(results["corpus"]["labels"]))
    out.extend(f"note: {note}" for note in results["notes"])
    out.append("")
    out.append("RESULT: " + ("ok, no mismatches" if results["ok"] else "FAIL, mismatches above"))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--count", type=int, default=100_000, help="records to generate")
    parser.add_argument("--seed", type=int, default=20251129, help="generator seed")
    parser.add_argument(
        "--invalid-fraction", type=float, default=0.1, help="generator invalid share"
    )
    parser.add_argument("--passes", type=int, default=5, help="timed passes per method (median)")
    parser.add_argument("--corpus", type=Path, help="read this JSONL corpus instead of generating")
    parser.add_argument(
        "--jsonschema-sample", type=int, default=10_000, help="lines timed with jsonschema"
    )
    parser.add_argument("--no-jsonschema-rs", action="store_true", help="skip jsonschema_rs")
    parser.add_argument(
        "--layouts",
        default=",".join(corpus.LAYOUTS),
        help="layouts the peers are timed on, comma-separated, or 'none' (default: all)",
    )
    parser.add_argument("--json", type=Path, dest="json_out", help="also write the figures here")
    args = parser.parse_args(argv)
    if args.passes < 1:
        parser.error("--passes must be >= 1")
    layouts = [] if args.layouts == "none" else args.layouts.split(",")
    if any(layout not in corpus.LAYOUTS for layout in layouts):
        parser.error(f"--layouts: each of {', '.join(corpus.LAYOUTS)}, or none")

    def progress(message: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)

    labels: list[corpus.Label] | None
    if args.corpus is not None:
        progress(f"loading {args.corpus}")
        lines, labels = load_corpus(args.corpus)
    else:
        progress(f"generating {args.count} records (seed {args.seed})")
        texts, labels = corpus.generate(args.count, args.seed, args.invalid_fraction)
        lines = [text.encode("utf-8") for text in texts]
        del texts
    results = run_benchmark(
        lines,
        labels,
        passes=args.passes,
        jsonschema_sample=args.jsonschema_sample,
        use_jsonschema_rs=not args.no_jsonschema_rs,
        layouts=layouts,
        layout_seed=args.seed,
        progress=progress,
    )
    results["corpus"]["source"] = (
        str(args.corpus)
        if args.corpus is not None
        else {"generated": True, "seed": args.seed, "invalid_fraction": args.invalid_fraction}
    )
    results["tool"] = "tools/bench_reader.py"
    results["argv"] = list(argv) if argv is not None else sys.argv[1:]
    print(format_report(results))
    if args.json_out is not None:
        text = json.dumps(results, indent=2, ensure_ascii=False) + "\n"
        replace_file(args.json_out, text.encode("utf-8"))
    return 0 if results["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
