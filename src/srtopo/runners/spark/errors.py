"""What Spark and py4j raise, as one line a user can act on (the one place that reads their exception types).

Spark's errors arrive as pages: a Java stack trace behind a py4j call, a streaming query's failure wrapping the
Python traceback of the batch function that failed, a lost connection to the JVM. The first line that says
what went wrong is kept; the rest is for ``--debug``.
"""
from __future__ import annotations

import re

from srtopo.errors import SrtopoError


class SparkFailure(SrtopoError):
    """Spark (or the JVM behind it) failed; the message is Spark's own first line."""


#: a Python exception's last line inside a traceback Spark passed on: ``module.Error: message``
_PYTHON_ERROR = re.compile(r"^(?:[\w.]+\.)?(\w+(?:Error|Exception|Problem|Exit)): (.+)$")
_WRAPPERS = re.compile(r"^(\[(STREAM_FAILED|FOREACH_BATCH_USER_FUNCTION_ERROR)\][^:]*?(: |\. )"
                       r"|Query \[id = [^\]]*\] terminated with exception: |An exception was raised by the Python "
                       r"Proxy\. Return Message: )")


def _first_line(text: str) -> str:
    for line in str(text).splitlines():
        line = line.strip()
        if line and not line.startswith(("at ", "...", "Traceback", "File ")):
            return line
    return str(text).strip()


def _python_cause(text: str) -> str | None:
    """The last ``Error: message`` line of a Python traceback quoted inside Spark's message, if any."""
    found = None
    for line in str(text).splitlines():
        match = _PYTHON_ERROR.match(line.strip())
        if match:
            found = f"{match.group(1)}: {match.group(2)}"
    return found


def _unwrap(line: str) -> str:
    before = None
    while before != line:
        before = line
        line = _WRAPPERS.sub("", line).strip()
    return re.sub(r"\s*SQLSTATE: \w+\.?$", "", line)


def translate(error: BaseException) -> SrtopoError | None:
    """A one-line error for an exception raised by Spark or py4j (None: not one of theirs)."""
    try:
        from py4j.protocol import Py4JError, Py4JJavaError, Py4JNetworkError
        from pyspark.errors import PySparkException
    except ImportError:      # pragma: no cover - Spark is a dependency
        return None
    if isinstance(error, Py4JNetworkError) or (isinstance(error, Py4JError) and "Answer from Java side is empty"
                                               in str(error)):
        return SparkFailure("the connection to Spark's JVM was lost (it ran out of memory or was killed)",
                            hint="see the JVM's log; SRTOPO_SPARK_DRIVER_MEMORY raises its heap")
    if isinstance(error, Py4JJavaError):
        text = str(error.java_exception.toString()) if error.java_exception is not None else str(error)
    elif isinstance(error, PySparkException):
        text = str(error)
    elif isinstance(error, Py4JError):
        text = str(error)
    else:
        return None
    cause = _python_cause(text)
    if cause is not None:
        return SparkFailure(f"a micro-batch failed: {cause}")
    return SparkFailure(f"Spark: {_unwrap(_first_line(text))}")
