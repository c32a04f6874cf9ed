"""``interpret`` in several threads at once: the process-wide state it
changes (the host's recursion limit, the warnings machinery) is counted
across threads, so that no thread's run disturbs another's, and the last
run out restores it.  Every result is compared with native CPython's."""
import os
import subprocess
import sys
import textwrap
import threading
import warnings

import pyinterp

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _run_script(source):
    """Run ``source`` in a fresh interpreter (a broken limit can abort the
    whole process: CPython's fatal 'Cannot recover from stack overflow')."""
    env = dict(os.environ, PYTHONPATH=_ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(source)], env=env,
                          capture_output=True, text=True, timeout=300)


def test_a_run_ending_in_one_thread_leaves_anothers_deep_recursion_alone():
    # Thread B's run starts first and ends while thread A is 300 interpreted
    # frames deep (thousands of host frames); A then goes 20 frames deeper.
    done = _run_script("""
        import sys, threading, pyinterp

        limit = sys.getrecursionlimit()
        deep = threading.Event()
        b_ended = threading.Event()

        def b_body():
            deep.wait(60)
            return "b"

        def down(n):
            return 0 if n == 0 else down(n - 1) + 1

        def dive(n):
            if n == 0:
                deep.set()
                b_ended.wait(60)
                return down(20)
            return dive(n - 1) + 1

        out = {}

        def run_b():
            out["b"] = pyinterp.interpret(b_body)()
            b_ended.set()

        def run_a():
            try:
                out["a"] = pyinterp.interpret(dive)(300)
            except RecursionError as e:
                out["a"] = "RecursionError"

        tb = threading.Thread(target=run_b)
        tb.start()
        while not tb.is_alive():
            pass
        ta = threading.Thread(target=run_a)
        ta.start()
        ta.join(); tb.join()
        print(out["a"], out["b"], dive.__code__ is not None and sys.getrecursionlimit() == limit)
    """)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == [str(300 + 20), "b", "True"]


def _recurse(n):
    return 0 if n == 0 else _recurse(n - 1) + 1


def test_many_threads_recurse_at_once_and_the_limit_comes_back():
    limit = sys.getrecursionlimit()
    start = threading.Barrier(6)
    results = [None] * 6

    def work(i):
        start.wait()
        try:
            for depth in (50, 400, 10, 700 + i):
                results[i] = pyinterp.interpret(_recurse)(depth)
        except BaseException as e:  # noqa: BLE001 - reported by the assert
            results[i] = e

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [_recurse(700 + i) for i in range(6)]
    assert sys.getrecursionlimit() == limit


def _limits():
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(before + 17)
    during = sys.getrecursionlimit()
    sys.setrecursionlimit(before)
    return before, during - before


def test_interpreted_code_sees_and_sets_the_programs_recursion_limit():
    limit = sys.getrecursionlimit()
    assert pyinterp.interpret(_limits)() == _limits() == (limit, 17)
    assert sys.getrecursionlimit() == limit


def test_interpreted_code_may_lower_its_recursion_limit():
    def runaway(n):
        return runaway(n + 1)

    def f():
        sys.setrecursionlimit(120)
        try:
            runaway(0)
        except RecursionError as e:
            return type(e).__name__
        finally:
            sys.setrecursionlimit(limit)

    limit = sys.getrecursionlimit()
    assert pyinterp.interpret(f)() == f() == "RecursionError"
    assert sys.getrecursionlimit() == limit


class _Odd:
    def __index__(self):
        return True  # C code warns: __index__ returned non-int (type bool)


def test_a_c_warning_names_its_own_threads_line_while_another_thread_runs():
    b_running = threading.Event()
    a_running = threading.Event()
    b_warned = threading.Event()
    shown = []

    def b_body():
        b_running.set()
        a_running.wait(60)
        range(_Odd())  # the warning's line
        b_warned.set()
        return "b"

    def a_body():
        a_running.set()
        b_warned.wait(60)
        return "a"

    warning_line = b_body.__code__.co_firstlineno + 3

    def show(message, category, filename, lineno, file=None, line=None):
        shown.append((category, os.path.basename(filename), lineno, threading.get_ident()))

    saved = warnings.showwarning, warnings.filters[:]
    warnings.showwarning = show
    warnings.simplefilter("always")
    try:
        out = {}
        tb = threading.Thread(target=lambda: out.setdefault("b", pyinterp.interpret(b_body)()))
        tb.start()
        b_running.wait(60)
        ta = threading.Thread(target=lambda: out.setdefault("a", pyinterp.interpret(a_body)()))
        ta.start()
        tb.join()
        ta.join()
    finally:
        warnings.showwarning, warnings.filters[:] = saved
    assert out == {"a": "a", "b": "b"}
    assert [(c, f, n) for c, f, n, _ in shown] == [
        (DeprecationWarning, os.path.basename(__file__), warning_line)]
    assert shown[0][3] == tb.ident
