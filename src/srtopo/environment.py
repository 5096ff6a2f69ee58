"""Start-up checks: Spark 4 needs Java 17 or newer on the PATH (or JAVA_HOME)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

from srtopo.errors import EnvironmentProblem

_JAVA_HINT = ("install a Java 17+ runtime (Debian/Ubuntu: 'apt-get install openjdk-17-jre-headless'; "
              "macOS: 'brew install openjdk@17') and put it on PATH or set JAVA_HOME")


def java_executable() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = os.path.join(home, "bin", "java")
        if os.path.exists(candidate):
            return candidate
    return shutil.which("java")


def java_major_version(java: str) -> int | None:
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not match:
        return None
    major = int(match.group(1))
    if major == 1 and match.group(2):  # "1.8.0" style
        major = int(match.group(2))
    return major


def require_java(minimum: int = 17) -> int:
    """Raise EnvironmentProblem unless Java >= minimum is available; return its major version."""
    java = java_executable()
    if java is None:
        raise EnvironmentProblem(f"Java {minimum}+ is required by Spark and was not found", hint=_JAVA_HINT)
    major = java_major_version(java)
    if major is None:
        raise EnvironmentProblem(f"could not read the version of {java}", hint=_JAVA_HINT)
    if major < minimum:
        raise EnvironmentProblem(f"Java {major} found at {java}, Spark needs Java {minimum}+", hint=_JAVA_HINT)
    return major


if __name__ == "__main__":   # used by scripts/*.sh: one clear line instead of a traceback
    try:
        print(f"java {require_java(17)} found")
    except EnvironmentProblem as problem:
        sys.exit(f"srtopo: error: {problem}")
