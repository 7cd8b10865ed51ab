"""The corpus report: every task measured in every form, and the corpus's facts.

Part of ``tools/payload_report.py`` (see its docstring for what each column holds).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Final

from payload_corpus import MANIFEST_NAME, StoredForm

from payload.forms import TITLES
from payload.measures import Timing, Totals, measure_task, time_task
from payload.reading import FORMS, Task, UnreadableFile, history_paths, read_task

TOOL: Final = "tools/payload_report.py"


@dataclass(frozen=True, slots=True)
class CorpusFacts:
    """What the compared histories hold, whatever the form."""

    files: int = 0
    messages: int = 0
    turns: int = 0
    items: int = 0
    multi_item_messages: int = 0
    multi_item_items: int = 0
    max_turns: int = 0
    derived_display: int = 0
    stored_forms: Mapping[str, int] = field(default_factory=dict)
    skipped_blocks: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Report:
    inputs: tuple[str, ...]
    facts: CorpusFacts
    totals: Mapping[StoredForm, Totals]
    curves: Mapping[StoredForm, tuple[int, ...]]  # corpus cumulative bytes after turn 1, 2, ...
    timing: Mapping[StoredForm, Timing]
    not_compared: tuple[tuple[Path, str], ...]
    unreadable: tuple[UnreadableFile, ...]
    manifest: Mapping[str, Any] | None
    elapsed: float = 0.0

    @property
    def checks_pass(self) -> bool:
        return bool(self.facts.files) and all(t.cumulative_check for t in self.totals.values())


def corpus_curve(curves: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    """Sum of per-task cumulative curves, a task that has ended staying at its total."""
    length = max((len(c) for c in curves), default=0)
    return tuple(sum(c[min(t, len(c) - 1)] for c in curves if c) for t in range(length))


def _not_compared_reason(task: Task) -> str:
    forms = {b.stored_form for b in task.blocks}
    missing = ", ".join(TITLES[f] for f in task.missing_forms())
    if StoredForm.LEGACY in forms:
        return f"holds minimal records, which have no per-item summary ({missing}: not derivable)"
    return f"holds raw snapshots the reference cannot capture ({missing}: not derivable)"


def _read_manifest(inputs: Sequence[Path]) -> Mapping[str, Any] | None:
    for path in inputs:
        candidate = path / MANIFEST_NAME
        if path.is_dir() and candidate.is_file():
            value = json.loads(candidate.read_text(encoding="utf-8"))
            return value if isinstance(value, dict) else None
    return None


def build_report(inputs: Sequence[Path], passes: int = 3) -> Report:
    """Read every history under ``inputs`` and measure the compared ones in all three forms."""
    started = time.perf_counter()
    totals = dict.fromkeys(FORMS, Totals())
    timing = {form: Timing((0.0,) * passes, (0.0,) * passes) for form in FORMS}
    curves: dict[StoredForm, list[tuple[int, ...]]] = {form: [] for form in FORMS}
    facts = CorpusFacts()
    stored_forms: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    not_compared: list[tuple[Path, str]] = []
    unreadable: list[UnreadableFile] = []
    for path in history_paths(inputs):
        task = read_task(path)
        if isinstance(task, UnreadableFile):
            unreadable.append(task)
            continue
        skipped.update(task.skipped_blocks)
        if task.missing_forms():
            not_compared.append((path, _not_compared_reason(task)))
            continue
        stored_forms.update(b.stored_form.value for b in task.blocks)
        counts = [len(m.blocks) for m in task.messages if m.role == "assistant"]
        facts = CorpusFacts(
            files=facts.files + 1,
            messages=facts.messages + len(task.messages),
            turns=facts.turns + len(counts),
            items=facts.items + sum(counts),
            multi_item_messages=facts.multi_item_messages + sum(1 for n in counts if n >= 2),
            multi_item_items=facts.multi_item_items + sum(n for n in counts if n >= 2),
            max_turns=max(facts.max_turns, len(counts)),
            derived_display=facts.derived_display + task.derived_display,
        )
        for form in FORMS:
            measured = measure_task(task, form)
            totals[form] += measured.totals
            curves[form].append(measured.curve)
            timing[form] += time_task(task, form, passes)
    facts = CorpusFacts(
        **{f.name: getattr(facts, f.name) for f in fields(CorpusFacts)}
        | {"stored_forms": dict(stored_forms), "skipped_blocks": dict(skipped)}
    )
    return Report(
        inputs=tuple(str(p) for p in inputs),
        facts=facts,
        totals=totals,
        curves={form: corpus_curve(curves[form]) for form in FORMS},
        timing=timing,
        not_compared=tuple(not_compared),
        unreadable=tuple(unreadable),
        manifest=_read_manifest(inputs),
        elapsed=time.perf_counter() - started,
    )
