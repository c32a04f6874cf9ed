"""The program's own frames, as CPython shows them (issue 14, item 7).

``inspect.stack()``, ``inspect.currentframe().f_back``,
``traceback.extract_stack()``, ``sys._getframe(n)``,
``warnings.warn(stacklevel=2)`` and ``logging``'s caller inside interpreted
code: the user's frames in order, with their current lines (also while a
dunder, a property or a callback of C code runs), one frame object per
frame, accepted by ``inspect.isframe``.
"""
import pytest

from pyinterp.testing import case, run_case

CASES = {
    "inspect_stack": case('''
        import inspect
        def h():
            return [(fi.function, fi.lineno - fi.frame.f_code.co_firstlineno, fi.index)
                    for fi in inspect.stack() if fi.filename == __file__]
        def g():
            x = 1
            return h()
        def f():
            return g()
    '''),
    "currentframe_back_in_a_dunder": case('''
        import inspect
        class V:
            def __add__(self, other):
                back = inspect.currentframe().f_back
                return (back.f_code.co_name, back.f_lineno - back.f_code.co_firstlineno)
        def f():
            v = V()
            first = v + 1
            y = 2
            second = (
                v
                + y)
            return first, second
    '''),
    "property_and_comparison_see_their_caller": case('''
        import sys
        class P:
            @property
            def where(self):
                caller = sys._getframe(1)
                return caller.f_code.co_name, caller.f_lineno - caller.f_code.co_firstlineno
            def __lt__(self, other):
                return sys._getframe(1).f_lineno - sys._getframe(1).f_code.co_firstlineno
        def f():
            p = P()
            a = p.where
            b = p < p
            return a, b
    '''),
    "extract_stack": case('''
        import traceback
        def g():
            return [(e.name, e.lineno) for e in traceback.extract_stack() if e.filename == __file__]
        def f():
            return [g() for _ in range(2)]
    '''),
    "getframe_depths": case('''
        import sys
        def g():
            names = []
            depth = 0
            while True:
                try:
                    frame = sys._getframe(depth)
                except ValueError:
                    break
                if frame.f_code.co_filename == __file__:
                    names.append((depth, frame.f_code.co_name))
                depth += 1
            return names
        def f():
            return g()
    '''),
    "frames_are_frames": case('''
        import inspect, sys, types
        def f():
            frame = sys._getframe()
            return (isinstance(frame, types.FrameType), inspect.isframe(frame),
                    frame is sys._getframe(), frame is inspect.currentframe(),
                    frame.f_back is sys._getframe(1), inspect.getmodule(frame) is None)
    '''),
    "f_locals_and_f_lineno_are_live": case('''
        import sys
        def f():
            frame = sys._getframe()
            a = 1
            first = (dict(frame.f_locals), frame.f_lineno)
            b = 2
            return first, sorted(frame.f_locals), frame.f_lineno
    '''),
    "warn_stacklevel": case('''
        import warnings
        def helper():
            warnings.warn("from the caller", UserWarning, stacklevel=2)
            warnings.warn("two up", UserWarning, stacklevel=3)
        def g():
            helper()
        def f():
            g()
    '''),
    "logging_caller": case('''
        import logging
        records = []
        class Keep(logging.Handler):
            def emit(self, record):
                records.append((record.funcName, record.lineno, record.getMessage()))
        logger = logging.getLogger("frames-test")
        logger.propagate = False
        def g():
            logger.warning("here")
        def f():
            handler = Keep()
            logger.addHandler(handler)
            try:
                g()
                logger.warning("there")
            finally:
                logger.removeHandler(handler)
            return records
    '''),
    "sorted_key_sees_its_caller": case('''
        import sys
        def key(v):
            caller = sys._getframe(1)
            return -v, caller.f_code.co_name
        def f():
            return sorted([1, 3, 2], key=key)
    '''),
    "generator_frames": case('''
        import sys
        def gen():
            yield sys._getframe().f_back.f_code.co_name
            yield sys._getframe(1).f_lineno
        def f():
            g = gen()
            return [next(g), next(g) - f.__code__.co_firstlineno]
    '''),
    "outermost_frame_continues_with_the_caller": case('''
        import sys
        def f():
            back = sys._getframe(1)
            return back.f_code.co_name, back.f_code.co_filename == __file__
    '''),
    "stack_summary_of_a_frame": case('''
        import traceback, sys
        def g():
            return [(e.name, e.line) for e in traceback.StackSummary.extract(
                traceback.walk_stack(sys._getframe()), limit=2)]
        def f():
            return g()
    '''),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_frames(name):
    run_case(CASES[name])
