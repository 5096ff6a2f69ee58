"""File operations through Hadoop's FileSystem (so they work on HDFS/S3/... as on local disk)."""
from __future__ import annotations

import os


def qualify(path: str) -> str:
    """Absolute local paths for bare names; URIs (hdfs://, s3a://, file:) are kept as given."""
    if "://" in path or path.startswith("file:"):
        return path
    return os.path.abspath(path)


class HadoopFS:
    def __init__(self, spark):
        self._jvm = spark.sparkContext._jvm
        self._conf = spark.sparkContext._jsc.hadoopConfiguration()

    def _p(self, path: str):
        p = self._jvm.org.apache.hadoop.fs.Path(path)
        return p, p.getFileSystem(self._conf)

    def exists(self, path: str) -> bool:
        p, fs = self._p(path)
        return bool(fs.exists(p))

    def delete(self, path: str) -> None:
        p, fs = self._p(path)
        if fs.exists(p):
            fs.delete(p, True)

    def mkdirs(self, path: str) -> None:
        p, fs = self._p(path)
        fs.mkdirs(p)

    def list_names(self, path: str) -> list[str]:
        p, fs = self._p(path)
        if not fs.exists(p):
            return []
        return [str(st.getPath().getName()) for st in fs.listStatus(p)]

    def write_text(self, path: str, text: str) -> None:
        p, fs = self._p(path)
        out = fs.create(p, True)
        try:
            out.write(bytearray(text.encode("utf-8")))
        finally:
            out.close()

    def read_text(self, path: str) -> str | None:
        p, fs = self._p(path)
        if not fs.exists(p):
            return None
        stream = fs.open(p)
        try:
            reader = self._jvm.java.io.BufferedReader(self._jvm.java.io.InputStreamReader(stream, "UTF-8"))
            lines = []
            line = reader.readLine()
            while line is not None:
                lines.append(line)
                line = reader.readLine()
            return "\n".join(lines)
        finally:
            stream.close()
