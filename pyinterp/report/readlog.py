"""A run log read back: the ``*.jsonl`` files of a directory
(:mod:`pyinterp.capture.runlog`), their records in time order.

:class:`RunLog` holds the ``run`` records (one a process), the ``entry``
records (one a capture: see :mod:`pyinterp.capture.runrecord`), each
given ``number`` (its order among the captures of the same function in
the same process, from 1), and the user functions' source by ``(file,
first line)``.  A line that is not JSON (a file cut by a crash) is
counted in ``skipped`` and left out.
"""
import glob
import json
import os


class RunLog:
    """The records of every log file in a directory."""

    def __init__(self, runs, entries, skipped=0):
        self.runs = runs
        self.entries = entries
        self.skipped = skipped
        self.sources = {}
        numbers = {}
        for entry in entries:
            key = (entry.get("pid"), entry["function"]["qualname"])
            numbers[key] = entry["number"] = numbers.get(key, 0) + 1
            for function in [entry["function"]] + list(entry.get("sources", ())):
                if function.get("file") and function.get("lines"):
                    self.sources.setdefault((function["file"], function["first"]), function)

    def recompiles(self):
        """The entries made by a miss after an earlier entry of the same
        callable (their ``recompile`` reasons say why it missed)."""
        return [e for e in self.entries if e.get("recompile")]


def log_files(directory):
    """The log files in ``directory``, oldest process first."""
    return sorted(glob.glob(os.path.join(directory, "pyinterp_trace_*.jsonl")),
                  key=os.path.getmtime)


def read(directory):
    """The :class:`RunLog` of ``directory``; ``FileNotFoundError`` when it
    holds no log file."""
    files = log_files(directory)
    if not files:
        raise FileNotFoundError("no pyinterp_trace_*.jsonl file in %s (run the program with "
                                "PYINTERP_TRACE_DIR=%s first)" % (directory, directory))
    runs, entries, skipped = [], [], 0
    for path in files:
        with open(path, encoding="utf-8") as f:
            for line in f:
                try:
                    record = json.loads(line)
                except ValueError:
                    skipped += 1
                    continue
                if record.get("event") == "run":
                    runs.append(record)
                elif record.get("event") == "entry":
                    entries.append(record)
    started = {run["pid"]: run.get("started", 0.0) for run in runs}
    entries.sort(key=lambda e: (started.get(e.get("pid"), 0.0), e.get("pid"), e["time"]))
    return RunLog(runs, entries, skipped)
