"""The command line's parser: errors of at most three lines, help without markup, which options were given."""
from __future__ import annotations

import argparse
import difflib
import re

#: a user error, a runner's error, an internal error: all one line and this status (argparse uses it too)
ERROR_STATUS = 2


class _PlainFormatter(argparse.HelpFormatter):
    """Help without the docstrings' reStructuredText markup (``srtopo check`` reads as srtopo check)."""

    def _format_text(self, text):
        return super()._format_text(text.replace("``", ""))

    def _expand_help(self, action):
        return super()._expand_help(action).replace("``", "")


#: argparse's message for a value outside an option's (or the command's) choices
_INVALID_CHOICE = re.compile(r"argument [^:]+: invalid choice: '([^']*)' \(choose from (.*)\)$")


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are at most three lines: what is wrong, the closest real option, where
    to read more. A mistyped option is named before any option it hides as missing."""

    argv: list[str] = []

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _PlainFormatter)
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        command = self._command()
        if command is not None and message.startswith("unrecognized arguments"):
            command.error(message)      # the command's options are the ones to compare with
        unknown = self._unknown_option()
        if unknown is not None:
            message = f"unrecognized option {unknown}"
            close = difflib.get_close_matches(unknown, [o for o in self._option_string_actions if o.startswith("--")],
                                              n=1, cutoff=0.6)
            if close:
                message += f" (did you mean {close[0]}?)"
        elif (choice := _INVALID_CHOICE.match(message)) is not None:
            choices = re.findall(r"'([^']*)'", choice.group(2))
            close = difflib.get_close_matches(choice.group(1), choices, n=1, cutoff=0.6)
            message = f"unknown {choice.group(0).split(':')[0].removeprefix('argument ')} {choice.group(1)!r}" + (
                f" (did you mean {close[0]}?)" if close else f" (choose from {', '.join(choices)})")
        self.exit(ERROR_STATUS, f"{self.prog}: error: {message}\n{self.prog} --help lists the options\n")

    def _command(self) -> "Parser | None":
        """The parser of the command the command line names, when this is the top-level parser."""
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                name = next((w for w in Parser.argv if not w.startswith("-")), None)
                return action.choices.get(name)
        return None

    def _unknown_option(self) -> str | None:
        """The first option of the command line this parser does not know (past its subcommand, if any)."""
        words = Parser.argv
        name = self.prog.split()[-1]
        if name in words and name != "srtopo":
            words = words[words.index(name) + 1:]
        elif name == "srtopo":      # the options before the command are its own
            words = words[:next((i for i, w in enumerate(words) if not w.startswith("-")), len(words))]
        for word in words:
            if word == "--":
                break
            if word.startswith("-") and len(word) > 1 and not _is_number(word):
                option = word.split("=", 1)[0]
                if option not in self._option_string_actions:
                    return option
        return None


def _is_number(word: str) -> bool:
    try:
        float(word)
        return True
    except ValueError:
        return False


def given_options(parser: argparse.ArgumentParser, command: str, argv: list[str]) -> dict[str, str]:
    """destination -> the option string the command line gave it by (an option left out keeps its default,
    which says nothing about what the user wants)."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    words = [w.split("=", 1)[0] for w in argv if w.startswith("--")]
    given = {}
    for action in sub._actions:
        for word in words:
            if word in action.option_strings:
                given.setdefault(action.dest, word)
    return given


#: I-DLV-sr's logging options take a level, --verbose=0 (all) or =1 (less); srtopo has one level
_LEVELLED = re.compile(r"^(--verbose|--print-extended-log|--print-reasoning-info|--print-operators-info)=[01]$")


def idlvsr_levels(argv: list[str]) -> list[str]:
    """An I-DLV-sr command line pastes: ``--verbose=1`` is ``--verbose``."""
    return [w.split("=", 1)[0] if _LEVELLED.match(w) else w for w in argv]


class Refused(argparse.Action):
    """An option of another tool that srtopo does not take, refused in one line naming the option that does the
    job here."""

    def __init__(self, option_strings, dest, instead: str = "", **kwargs):
        self.instead = instead
        super().__init__(option_strings, dest, nargs="?", default=argparse.SUPPRESS, help=argparse.SUPPRESS)

    def __call__(self, parser, namespace, values, option_string=None):
        parser.error(f"{option_string} is not taken here: {self.instead}")
