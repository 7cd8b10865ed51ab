"""``conformance check``: lint the suite against its schema, itself and SPEC.md (SPEC §13), and
the readings register against all three."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from . import protocol, schemas
from .forms import FORM_TAGS, HISTORY_OPERATIONS, ITEMS_FORM, form_tags
from .items_form import unanswered_tool_call, vector_form_and_reason
from .profiles import OUTPUT_MEMBERS
from .readings import (
    READINGS_DIR,
    RegisterProblem,
    adequacy_mutants,
    check_readings,
    load_register,
)
from .specdoc import SpecDoc, parse_spec
from .traceability import TRACEABILITY_NAME, Traceability, load_traceability
from .vectors import BUNDLE_NAME, Case, Expect, Suite, bundle_text, load_vector_dirs

_SHOULD: Final = re.compile(r"\bshould\b", re.IGNORECASE)
MAX_DESCRIPTION: Final = 149


@dataclass(frozen=True, slots=True)
class Problem:
    """One defect. ``kind`` is a stable token (tests and tools filter on it)."""

    kind: str
    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: [{self.kind}] {self.message}"


def expected_codes(expect: Expect) -> Iterator[str]:
    """Every registry code a case expects: its rejection code, and the codes of the
    ``diagnostics`` or ``findings`` an expected output reports (a replay's skipped blocks, a
    validation's findings)."""
    if expect.code is not None:
        yield expect.code
    output = expect.output or {}
    for listed in (output.get("diagnostics"), output.get("findings")):
        if isinstance(listed, list):
            for entry in listed:
                if isinstance(entry, Mapping) and isinstance(entry.get("code"), str):
                    yield entry["code"]


def check_suite(conformance_dir: Path, spec_path: Path) -> tuple[tuple[Problem, ...], Suite]:
    problems: list[Problem] = []
    if not (conformance_dir / "VERSION").is_file():
        problems.append(Problem("version_missing", str(conformance_dir), "no VERSION file"))
    suite = load_vector_dirs([conformance_dir / "vectors"])
    problems += [
        Problem(
            p.kind,
            p.file + (f" [{p.case_id}]" if p.case_id else ""),
            (f"at {p.pointer}: " if p.pointer else "") + p.message,
        )
        for p in suite.problems
    ]
    problems += lint_cases(suite.cases)
    problems += check_forms(suite.cases)
    try:
        spec: SpecDoc | None = parse_spec(spec_path.read_text(encoding="utf-8"))
    except OSError as exc:
        problems.append(Problem("spec_missing", str(spec_path), str(exc)))
        spec = None
    traceability = load_traceability(conformance_dir / TRACEABILITY_NAME)
    if not isinstance(traceability, Traceability):
        problems += [Problem("traceability", TRACEABILITY_NAME, str(p)) for p in traceability]
        traceability = Traceability()
    if spec is not None:
        problems += check_against_spec(suite.cases, spec, spec_path.name, traceability)
        problems += check_traceability(traceability, spec, spec_path.parent, spec_path.name)
        problems += check_register(conformance_dir / READINGS_DIR, spec, suite, spec_path.parent)
    problems += check_bundle(conformance_dir / BUNDLE_NAME, suite)
    return tuple(problems), suite


def lint_cases(cases: Iterable[Case]) -> list[Problem]:
    """Rules on single cases that the vector-file schema cannot express."""
    found: list[Problem] = []
    for case in cases:
        where = f"{case.file} [{case.id}]"
        if _SHOULD.search(case.description):
            found.append(
                Problem("description", where, "description says 'should': state what the case is")
            )
        if len(case.description) > MAX_DESCRIPTION:
            found.append(Problem("description", where, "description is 150 characters or more"))
        try:
            protocol.decode_byte_members(case.input)
        except protocol.ByteMemberError as exc:
            found.append(Problem("byte_member", where, str(exc)))
        row = OUTPUT_MEMBERS.get(case.operation)
        output = case.expect.output
        if row is not None and output is not None and set(output) != row.members:
            found.append(
                Problem(
                    "output_members",
                    where,
                    f"the expected output has the members {sorted(output)}, but SPEC.md#profiles "
                    f"lists {sorted(row.members)} for {case.operation}",
                )
            )
    return found


def check_forms(cases: Iterable[Case]) -> list[Problem]:
    """SPEC CL4: each vector carries exactly the form tag its operation and input give
    (``tools/form_tags.py --write`` writes them), an items-form history has the shape of
    ``schemas/protocol/items-history.schema.json``, and no history's last message leaves a tool
    call without its output."""
    found: list[Problem] = []
    for case in cases:
        where = f"{case.file} [{case.id}]"
        form, why = vector_form_and_reason(case.operation, case.input)
        tags = form_tags(case.tags)
        if tags != (form.tag,):
            because = f" ({why})" if why else ""
            unknown = [t for t in tags if t not in FORM_TAGS]
            also = f"; {', '.join(unknown)} is no form" if unknown else ""
            found.append(
                Problem(
                    "form_tag",
                    where,
                    f"its form tags are {list(tags)}; its history gives {form.tag}{because}"
                    f"{also} (tools/form_tags.py --write)",
                )
            )
        if case.operation not in HISTORY_OPERATIONS:
            continue
        history = case.input.get("history")
        if isinstance(history, Mapping) and history.get("form") == ITEMS_FORM:
            for error in schemas.errors(schemas.ITEMS_HISTORY, history):
                found.append(Problem("items_history", where, f"history{error}"))
        unanswered = unanswered_tool_call(history)
        if unanswered is not None:
            found.append(Problem("unanswered_tool_call", where, unanswered))
    return found


def check_against_spec(
    cases: tuple[Case, ...],
    spec: SpecDoc,
    spec_name: str,
    traceability: Traceability,
) -> list[Problem]:
    """Every case names an anchor and registry codes; every registry code is used; every MUST
    rule has a vector, unless the traceability file says no operation shows it."""
    found: list[Problem] = []
    codes = spec.codes
    if not spec.has_registry:
        found.append(
            Problem(
                "registry_missing",
                spec_name,
                "no <!-- registry:start --> ... <!-- registry:end --> table",
            )
        )
    used_codes: set[str] = set()
    covered: set[str] = set()
    for case in cases:
        where = f"{case.file} [{case.id}]"
        covered.add(case.spec)
        if case.spec not in spec.anchors:
            found.append(
                Problem(
                    "unknown_anchor", where, f"spec {case.spec!r} is not an anchor in {spec_name}"
                )
            )
        for code in expected_codes(case.expect):
            used_codes.add(code)
            if spec.has_registry and code not in codes:
                found.append(
                    Problem(
                        "unknown_code",
                        where,
                        f"code {code!r} is not in the {spec_name} registry",
                    )
                )
    for entry in spec.registry:
        if entry.anchor and entry.anchor not in spec.anchors:
            found.append(
                Problem(
                    "registry_anchor",
                    f"{spec_name} registry",
                    f"code {entry.code!r} names rule {entry.anchor!r}, which is not an anchor",
                )
            )
        if entry.code not in used_codes:
            found.append(
                Problem(
                    "unused_code",
                    f"{spec_name} registry",
                    f"code {entry.code!r} is used by no vector",
                )
            )
    outside_only = traceability.outside_only
    for anchor in spec.must_rules:
        if anchor not in covered and anchor not in outside_only:
            found.append(
                Problem(
                    "uncovered_must",
                    f"{spec_name} #{anchor}",
                    f"MUST rule {anchor} is covered by no vector",
                )
            )
    return found


def check_traceability(
    traceability: Traceability, spec: SpecDoc, root: Path, spec_name: str
) -> list[Problem]:
    """The traceability file against SPEC.md and the tests next to it: each rule it lists is a
    rule of SPEC.md, listed once, whose text says it is tested outside the vectors (it names the
    file) and names no test; a rule whose text names the file is listed; each test it names
    exists, the file relative to ``root`` (SPEC.md's directory) and a function of that name in
    it. A file under a directory that ``root`` does not have (an installed package ships SPEC.md
    but not the repository's tests) cannot be looked at, so only its form is checked."""
    found = [
        Problem(
            "outside_marker_in_spec",
            f"{spec_name}:{line}",
            f"a tested-outside-vectors marker: move the tests it names to {TRACEABILITY_NAME} "
            "and say only that the rule is tested outside the vectors",
        )
        for line in spec.outside_vectors_markers
    ]
    texts = {rule.anchor: rule.text for rule in spec.rules}
    listed: set[str] = set()
    for entry in traceability.rules:
        where = f"{TRACEABILITY_NAME} #{entry.rule}"
        if entry.rule in listed:
            found.append(Problem("traceability_duplicate", where, "the rule is listed twice"))
        listed.add(entry.rule)
        text = texts.get(entry.rule)
        if text is None:
            found.append(
                Problem(
                    "traceability_unknown_rule", where, f"{entry.rule} is no rule of {spec_name}"
                )
            )
        elif TRACEABILITY_NAME not in text:
            found.append(
                Problem(
                    "traceability_unlinked",
                    f"{spec_name} #{entry.rule}",
                    f"the rule does not say that it is tested outside the vectors "
                    f"(name conformance/{TRACEABILITY_NAME})",
                )
            )
        for test in entry.tests:
            problem = _missing_test(root, test.path, test.function)
            if problem is not None:
                found.append(Problem("outside_test_missing", where, problem))
    found += [
        Problem(
            "traceability_unlisted",
            f"{spec_name} #{rule.anchor}",
            f"the rule says it is tested outside the vectors, but {TRACEABILITY_NAME} "
            "does not list it",
        )
        for rule in spec.rules
        if TRACEABILITY_NAME in rule.text and rule.anchor not in listed
    ]
    return found


def _missing_test(root: Path, path: str, function: str) -> str | None:
    file = root / path
    if not (root / Path(path).parts[0]).is_dir():
        return None
    try:
        source = file.read_text(encoding="utf-8")
    except OSError:
        return f"{path} (named for {function}) does not exist"
    if re.search(rf"^[^\S\n]*(?:async[^\S\n]+)?def[^\S\n]+{function}\(", source, re.MULTILINE):
        return None
    return f"{path} has no function {function}"


def check_register(directory: Path, spec: SpecDoc, suite: Suite, root: Path) -> list[Problem]:
    """The readings register (:mod:`.readings`): its files against their schema, each entry's
    rule against SPEC.md, its cases against the suite's MUST vectors, its tests against
    ``root/tests/`` and its mutant against ``root/tools/suite_adequacy.py`` (``root``: SPEC.md's
    directory)."""
    readings, problems = load_register(directory)
    found = list(problems)
    mutants = adequacy_mutants(root)
    if isinstance(mutants, RegisterProblem):  # said once; no entry's mutant can be looked up
        found.append(mutants)
        mutants = None
    rules = frozenset(rule.anchor for rule in spec.rules)

    def missing_test(test: str) -> str | None:
        path, _, function = test.partition("::")
        return _missing_test(root, path, function)

    found += check_readings(readings, rules, suite, mutants, missing_test)
    return [Problem(p.kind, p.where, p.message) for p in found]


def check_bundle(path: Path, suite: Suite) -> list[Problem]:
    try:
        current = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return [Problem("bundle_missing", path.name, "no bundle: run `conformance bundle`")]
    except OSError as exc:
        return [Problem("bundle_missing", path.name, str(exc))]
    if current != bundle_text(suite):
        return [
            Problem(
                "bundle_stale",
                path.name,
                "the bundle does not match the vector files: run `conformance bundle`",
            )
        ]
    return []
