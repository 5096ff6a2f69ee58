"""One root exception for everything the framework reports to a user.

Every message says what is wrong, where (file:line[:col] when known) and what to do about it.
The CLI prints ``str(error)`` on one line and exits non-zero; ``--debug`` adds the traceback.
"""
from __future__ import annotations


class SrtopoError(Exception):
    """Root of all errors raised deliberately by srtopo."""

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None,
                 col: int | None = None, hint: str | None = None):
        if isinstance(message, SrtopoError):
            # clingo re-raises an error from a Python callback (an external atom) as type(error)(error)
            message, file, line, col, hint = message.message, message.file, message.line, message.col, message.hint
        self.message = message
        self.file = file
        self.line = line
        self.col = col
        self.hint = hint
        super().__init__(self.__str__())

    @property
    def location(self) -> str:
        if self.file is None:
            return ""
        loc = str(self.file)
        if self.line is not None:
            loc += f":{self.line}"
            if self.col is not None:
                loc += f":{self.col}"
        return loc

    def __str__(self) -> str:
        text = f"{self.location}: {self.message}" if self.location else self.message
        if self.hint:
            text += f" ({self.hint})"
        return text


class OntologyError(SrtopoError):
    """A TBox file is missing, unreadable, not OWL/RDF, or broken."""


class ProgramError(SrtopoError):
    """An I-DLV-sr program is malformed, unsafe, unstratified or uses an unsupported construct."""


class StreamInputError(SrtopoError):
    """A stream record cannot be parsed (raised only outside running streams; streams count and emit them)."""


class UsageError(SrtopoError):
    """A command-line mistake: a missing, conflicting or idle flag, or a flag's value out of range."""


class TopologyError(SrtopoError):
    """A topology is inconsistent: duplicate stage ids, unknown concepts, unreachable inputs, bad splits."""


class UnsupportedByRunner(SrtopoError):
    """A runner was asked to run something it cannot express."""


class EnvironmentProblem(SrtopoError):
    """The machine lacks something the framework needs (e.g. Java 17 for Spark)."""
