"""The run log: each capture as one JSON line, for ``python -m pyinterp
report`` (in the spirit of ``TORCH_TRACE`` and ``tlparse``).

With ``PYINTERP_TRACE_DIR=dir`` in the environment (read when pyinterp is
imported), or after ``pyinterp.trace_to(dir)`` (also a context manager;
``trace_to(None)`` stops), every miss that captures appends one record to
``dir/pyinterp_trace_PID.jsonl`` (one file per process; the first line of
a file is a ``run`` record: the program's arguments, Python and the wall
clock at pyinterp's import).  What an ``entry`` record holds is
:mod:`.runrecord`'s; :mod:`pyinterp.report` reads the files back.

Off (the default), nothing here runs: ``Traced._miss`` opens its report
(:mod:`.logreport`) only when a log or this switch is on, and a cache hit
runs no code of this module either way.  A record that cannot be written
is a ``RuntimeWarning``, never a failed call nor a different result.
"""
import json
import os
import sys
import threading
import time
import warnings

from .. import config

FILE_PATTERN = "pyinterp_trace_%d.jsonl"
"""A process's log file in the directory (``%d``: its pid)."""

STARTED = time.perf_counter()
"""When pyinterp was imported: records' ``time`` counts from here."""
_STARTED_WALL = time.time()
_lock = threading.Lock()  # (threads capturing at once write whole lines)


class trace_to(config.DirectorySetting):
    """``pyinterp.trace_to(dir)``: append each capture's record to
    ``dir/pyinterp_trace_PID.jsonl`` from now on (``None``: stop).  As a
    context manager, the previous setting comes back when the block ends."""

    name = "trace_dir"


def log_path(directory, pid=None):
    """The log file of process ``pid`` (this one by default) in ``directory``."""
    return os.path.join(directory, FILE_PATTERN % (os.getpid() if pid is None else pid))


def write(directory, make_record):
    """Append ``make_record()`` (a JSON-able dict) to this process's file in
    ``directory``; a failure warns and returns None, else the file's path."""
    try:
        record = make_record()
        os.makedirs(directory, exist_ok=True)
        path = log_path(directory)
        with _lock:
            lines = [] if os.path.exists(path) else [_run_record()]
            lines.append(record)
            with open(path, "a", encoding="utf-8") as f:
                f.write("".join(json.dumps(r, default=repr) + "\n" for r in lines))
        return path
    except Exception as e:  # noqa: BLE001 - the call goes on: the log is for reading
        warnings.warn("pyinterp: cannot write the run log to %s (%s: %s)"
                      % (directory, type(e).__name__, e), RuntimeWarning, stacklevel=2)
        return None


def _run_record():
    return {"event": "run", "pid": os.getpid(), "argv": list(sys.argv),
            "python": sys.version.split()[0], "started": _STARTED_WALL}
