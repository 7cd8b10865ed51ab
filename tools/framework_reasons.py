"""Write a framework's expectations file from a run, each failure explained by SPEC rule.

Usage::

    conformance run --impl "<adapter>" --report json:run.json
    python tools/framework_reasons.py FRAMEWORK run.json \
        conformance/implementations/FRAMEWORK/expectations.yaml

Serves ``langchain-openai``, ``vercel-ai``, ``pydantic-ai`` and ``openai-agents``
(``FRAMEWORKS``). Every failing case of the run (a report of ``conformance run --report json:``
without expectations) gets one xfail entry whose reason names each difference between what the
framework sent and the expected output, by the SPEC rule it breaks and the framework's function
that makes it (``tools/expectation_reasons.py``; each framework's classes are in
``langchain_vercel_reasons.py``, ``pydantic_ai_reasons.py`` and ``openai_agents_reasons.py``).
The file is written whole or not at all. Exit status: 0 written; 1 written, but a case no class
explains is named on stderr, to be looked at by hand.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import yaml
from expectation_reasons import Framework, entries
from langchain_vercel_reasons import LANGCHAIN_OPENAI, VERCEL_AI
from openai_agents_reasons import OPENAI_AGENTS
from pydantic_ai_reasons import PYDANTIC_AI
from reasoning_replay.atomic_files import replace_file

FRAMEWORKS: Final[dict[str, Framework]] = {
    framework.name: framework
    for framework in (LANGCHAIN_OPENAI, VERCEL_AI, PYDANTIC_AI, OPENAI_AGENTS)
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("framework", choices=sorted(FRAMEWORKS))
    parser.add_argument("report", type=Path, help="the JSON report of a run without expectations")
    parser.add_argument("expectations", type=Path, help="the expectations file to write")
    args = parser.parse_args(argv)
    report = json.loads(args.report.read_text(encoding="utf-8"))
    found, unexplained = entries(FRAMEWORKS[args.framework], report)
    document = {"implementation": args.framework, "entries": found}
    text = yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=100)
    replace_file(args.expectations, text.encode("utf-8"))
    print(f"{len(found)} entries written to {args.expectations}")
    for case_id in unexplained:
        print(f"unexplained: {case_id}", file=sys.stderr)
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
