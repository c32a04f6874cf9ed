"""``python -m pyinterp report DIR [-o OUT.html]``: the run log a program
wrote to ``DIR`` (``PYINTERP_TRACE_DIR=DIR`` or ``pyinterp.trace_to(DIR)``)
as one self-contained HTML page (:mod:`pyinterp.report`), ``DIR/report.html``
by default.  Prints the page's path and how to open it.
"""
import argparse
import os
import sys


def parser():
    p = argparse.ArgumentParser(
        prog="python -m pyinterp report",
        description="Turn the run log in DIR (written with PYINTERP_TRACE_DIR=DIR or "
                    "pyinterp.trace_to(DIR)) into one self-contained HTML page: the source "
                    "with captured, broken and specialized lines, each graph drawn, the "
                    "recompiles over time and each entry's guards.")
    p.add_argument("directory", metavar="DIR", help="the directory of the run log")
    p.add_argument("-o", "--output", metavar="OUT.html",
                   help="where to write the page (default: DIR/report.html)")
    return p


def write_report(directory, output=None):
    """Write the page of the log in ``directory`` to ``output`` (default
    ``directory/report.html``); returns its absolute path."""
    from .report import page, readlog

    log = readlog.read(directory)
    output = os.path.abspath(output or os.path.join(directory, "report.html"))
    text = page.render(log, "pyinterp report: %s" % os.path.abspath(directory))
    with open(output, "w", encoding="utf-8") as f:
        f.write(text)
    return output


def main(argv):
    args = parser().parse_args(argv)
    try:
        path = write_report(args.directory, args.output)
    except FileNotFoundError as exc:
        raise SystemExit("report: %s" % exc) from None
    print("wrote %s" % path)
    print("open it in a browser: file://%s (or: python -m webbrowser file://%s)"
          % (path, path))
    sys.stdout.flush()
    return 0
