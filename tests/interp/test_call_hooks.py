"""The one call ladder and its hooks; the one interception registry.

An interpreter subclass changes what happens at the ladder's decision
points by overriding hooks (``divert_call``, ``call_function``,
``call_native``, ``construct``, ``call_object``), never ``call`` itself;
``calls.INTERCEPTIONS`` holds a plain and a capture handler per callable.
"""
import pytest

from pyinterp.api import run
from pyinterp.interp import calls
from pyinterp.interp.vm import Interpreter


class Recording(Interpreter):
    """Notes which hook each call reached, then behaves plainly."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def call_native(self, fn, args, kwargs=None):
        self.seen.append(("native", getattr(fn, "__name__", fn)))
        return calls.call(self, fn, args, kwargs)

    def construct(self, cls, args, kwargs=None):
        self.seen.append(("construct", cls.__name__))
        return calls.construct(self, cls, args, kwargs)

    def call_object(self, fn, method, args, kwargs=None):
        self.seen.append(("object", type(fn).__name__))
        return calls.call_object(self, fn, method, args, kwargs)


class Box:
    def __init__(self, value):
        self.value = value

    def __call__(self, extra):
        return self.value + extra


def program():
    items = []
    items.append(Box(1)(2))
    return items


def test_hooks_see_their_calls_and_the_result_is_plain():
    vm = Recording()
    assert run(program, (), None, vm=vm) == [3]
    assert vm.seen == [("construct", "Box"), ("object", "Box"), ("native", "append")]


def test_a_bound_method_goes_down_the_same_copy_of_the_ladder():
    class Noting(Interpreter):
        def __init__(self):
            super().__init__()
            self.diverted = []

        def divert_call(self, fn, args, kwargs):
            self.diverted.append(fn)
            return None

    box = Box(1)
    method = box.__call__
    vm = Noting()
    assert run(lambda: method(2), (), None, vm=vm) == 3
    assert vm.diverted[-2:] == [method, Box.__call__]


def test_divert_call_hands_the_call_elsewhere():
    class Diverting(Interpreter):
        def divert_call(self, fn, args, kwargs):
            if fn is len:
                return lambda vm, fn, args, kwargs: -1
            return None

    def f(x):
        return len(x), max(x)

    assert run(f, ([1, 2],), None, vm=Diverting()) == (-1, 2)
    assert run(f, ([1, 2],), None) == (2, 2)


def test_a_subclass_may_not_replace_the_ladder():
    with pytest.raises(TypeError, match="override its hooks"):
        class Copy(Interpreter):
            def call(self, fn, args, kwargs=None):
                pass


def test_interception_registry_rule():
    def target():
        return "native"

    def plain(vm, args, kwargs):
        return "plain"

    def captured(vm, args, kwargs):
        return "captured"

    try:
        calls.intercept(target, plain)
        assert calls.interception(target) is plain
        assert calls.interception(target, calls.CAPTURE) is plain  # capture runs the plain one
        calls.intercept(target, captured, calls.CAPTURE)
        assert calls.interception(target, calls.CAPTURE) is captured  # its own wins
        calls.intercept(target, plain)
        assert calls.interception(target, calls.CAPTURE) is captured  # and stays
        assert calls.interception(target) is plain
    finally:
        del calls.INTERCEPTIONS[id(target)]
    assert calls.interception(target) is None


def test_a_capture_only_entry_is_not_intercepted_in_plain_mode():
    class Callable:
        def __call__(self):
            return "called"

    target = Callable()
    try:
        calls.intercept(target, lambda vm, args, kwargs: "captured", calls.CAPTURE)
        assert run(lambda: target(), (), None) == "called"
    finally:
        del calls.INTERCEPTIONS[id(target)]
