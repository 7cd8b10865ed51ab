"""Every ``conformance`` subcommand has a description and every option a help text: ``--help``
is the first documentation a user reads."""

from __future__ import annotations

import argparse

from reasoning_replay.cli.main import build_parser


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    found: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found.update(action.choices)
    return found


def _summaries(parser: argparse.ArgumentParser) -> dict[str, str | None]:
    """The one-line help of each subcommand, as ``conformance --help`` lists it."""
    summaries: dict[str, str | None] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            summaries.update({choice.dest: choice.help for choice in action._choices_actions})
    return summaries


def missing_help(parser: argparse.ArgumentParser, where: str) -> list[str]:
    missing = []
    if not (parser.description or "").strip():
        missing.append(f"{where}: no description")
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction | argparse._HelpAction):
            continue
        if not (action.help or "").strip() or action.help == argparse.SUPPRESS:
            name = "/".join(action.option_strings) or action.dest
            missing.append(f"{where} {name}: no help text")
    for name, summary in _summaries(parser).items():
        if not (summary or "").strip():
            missing.append(f"{where} {name}: no summary in the command list")
    for name, sub in _subcommands(parser).items():
        missing += missing_help(sub, f"{where} {name}")
    return missing


def test_every_subcommand_and_option_has_a_description_and_help_text() -> None:
    assert missing_help(build_parser(), "conformance") == []


def test_the_walk_finds_every_subcommand() -> None:
    """The check above cannot pass by walking nothing."""
    assert set(_subcommands(build_parser())) == {
        "run",
        "list",
        "check",
        "smoke",
        "bundle",
        "request",
        "export",
        "scan",
        "validate",
    }
    bare = argparse.ArgumentParser(prog="x")
    bare.add_argument("--flag")
    assert missing_help(bare, "x") == ["x: no description", "x --flag: no help text"]
