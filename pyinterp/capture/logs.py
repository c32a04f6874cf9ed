"""pyinterp's logs: ``pyinterp.*`` loggers of the standard ``logging`` module.

One logger per kind (:data:`NAMES`): ``pyinterp.graph``, ``pyinterp.guards``,
``pyinterp.breaks``, ``pyinterp.recompiles`` and ``pyinterp.perf``.  Every
message is logged at INFO (``+name`` adds DEBUG detail), and each logger
starts at WARNING, so the logs are off by default, even under
``logging.basicConfig(level=logging.INFO)``.  Two switches turn them on,
in the spirit of ``TORCH_LOGS`` and ``torch._logging.set_logs``:

* the environment variable ``PYINTERP_LOGS=graph,guards,+recompiles``
  (read when pyinterp is imported; ``all`` names every kind);
* :func:`set_logs` (``set_logs(recompiles=True, perf=True)`` or
  ``set_logs("graph,perf")``).

A switched-on log prints on stderr (``[pyinterp.recompiles] ...``) unless
the program configured logging itself (the root logger has a handler):
the records then go to its handlers only.  Setting a logger's level by
hand (``logging.getLogger("pyinterp.perf").setLevel(logging.INFO)``, or
pytest's ``caplog.at_level``) works too.  An unknown name warns once,
listing the valid ones.

Off costs nothing on a cache hit: the logs are produced on misses only
(:mod:`.logreport`); a hit runs no code of this module.
"""
import logging
import os
import sys
import warnings
from typing import Optional, Union

NAMES = ("graph", "guards", "breaks", "recompiles", "perf")
ENV = "PYINTERP_LOGS"
_OFF = logging.WARNING

loggers = {name: logging.getLogger("pyinterp." + name) for name in NAMES}
_warned = set()


class _StderrHandler(logging.StreamHandler):
    """Writes to the current ``sys.stderr``, unless the root logger has
    handlers (the program configured logging: the record reaches them)."""

    def __init__(self):
        super().__init__()
        self.setFormatter(logging.Formatter("[%(name)s] %(message)s"))

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value):
        pass

    def emit(self, record):
        if logging.getLogger().handlers and logging.getLogger("pyinterp").propagate:
            return
        super().emit(record)


_handler = _StderrHandler()


def _start():
    for logger in loggers.values():
        if logger.level == logging.NOTSET:
            logger.setLevel(_OFF)


def _add_handler():
    top = logging.getLogger("pyinterp")
    if _handler not in top.handlers:
        top.addHandler(_handler)


def set_logs(spec: Optional[str] = None, **kinds: Union[bool, int, None]) -> None:
    """Switch pyinterp's logs (see the module's documentation).

    ``spec`` is a string as in ``PYINTERP_LOGS`` (``"graph,+perf"``);
    keywords name kinds: ``True`` (INFO), ``False`` (off) or a ``logging``
    level.  ``all=...`` sets every kind.  Called with nothing, every log is
    switched off.  Kinds not named keep their setting; an unknown name
    warns once and is ignored."""
    levels = {}
    if spec is None and not kinds:
        levels = dict.fromkeys(NAMES, _OFF)
    if spec is not None:
        levels.update(parse(spec, "set_logs"))
    for name, value in kinds.items():
        level = _OFF if value is False or value is None else \
            logging.INFO if value is True else value
        for kind in _kinds(name, "set_logs", 3):
            levels[kind] = level
    _apply(levels)


def enabled(name, level=logging.INFO):
    """Is the log ``name`` on (at ``level``)?"""
    return loggers[name].isEnabledFor(level)


def parse(spec, where):
    """``{kind: level}`` from a ``PYINTERP_LOGS`` string."""
    levels = {}
    for item in str(spec).replace(" ", ",").split(","):
        if not item:
            continue
        level = logging.INFO
        if item[0] in "+-":
            level = logging.DEBUG if item[0] == "+" else _OFF
            item = item[1:]
        for kind in _kinds(item, where, 4):
            levels[kind] = level
    return levels


def _kinds(name, where, stacklevel):
    if name == "all":
        return NAMES
    if name in loggers:
        return (name,)
    if name not in _warned:
        _warned.add(name)
        warnings.warn("pyinterp: unknown log name %r in %s; valid names: %s"
                      % (name, where, ", ".join(("all",) + NAMES)), UserWarning,
                      stacklevel=stacklevel)
    return ()


def _apply(levels):
    for kind, level in levels.items():
        loggers[kind].setLevel(level)
    if any(level < _OFF for level in levels.values()):
        _add_handler()


def from_env(environ=os.environ):
    """Apply ``PYINTERP_LOGS`` (and the older ``PYINTERP_LOG_BREAKS=1``)."""
    spec = environ.get(ENV, "")
    if environ.get("PYINTERP_LOG_BREAKS", "") not in ("", "0"):
        spec = "breaks," + spec
    if spec.strip():
        _apply(parse(spec, ENV))


_start()
from_env()
