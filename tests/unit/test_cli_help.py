"""`rnnsearch COMMAND --help` lists every flag with what it does and its default (docs/commands.md
says so): no flag without help, no default left unsaid."""
from __future__ import annotations

import argparse

import pytest

from rnnsearch.cli import build_parser, commands

COMMANDS = commands(build_parser())


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_flag_has_help_and_shows_its_default(name):
    command = COMMANDS[name]
    text = command.format_help()
    for action in command._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        assert action.help, f"rnnsearch {name}: {action.option_strings or action.dest} has no help"
        shown = command._get_formatter()._get_help_string(action)
        if action.option_strings and action.default not in (None, False, [], argparse.SUPPRESS) \
                and not isinstance(action, argparse._StoreFalseAction):
            assert "default" in shown, f"rnnsearch {name}: {action.option_strings[0]} hides its default"
    assert "usage: rnnsearch" in text
