"""Where the callable, ``self`` and CPython's NULL sit on the stack for a call.

The one call-layout difference between the supported versions:

* 3.11/3.12 push ``[NULL, callable, args...]`` or ``[method, self, args...]``;
* 3.13 pushes ``[callable, NULL, args...]`` or ``[method, self, args...]``.

So the method form is the same everywhere, and only the place of the NULL
differs.  :func:`push_with_null` (used by ``LOAD_GLOBAL``, ``LOAD_ATTR`` and
``LOAD_SUPER_ATTR``) puts it where the running version wants it, and
:func:`pop_call` reads both layouts with one rule, because on 3.11/3.12 the
second slot is never NULL and on 3.13 the first one never is.
"""
import sys

from .signals import NULL

if sys.version_info >= (3, 13):
    def push_with_null(stack, value):
        """Push ``value`` followed by NULL (3.13: ``[callable, NULL]``)."""
        stack.append(value)
        stack.append(NULL)
else:
    def push_with_null(stack, value):
        """Push NULL followed by ``value`` (3.11/3.12: ``[NULL, callable]``)."""
        stack.append(NULL)
        stack.append(value)


def pop_call(stack, nargs):
    """Pop a call's two callable slots and ``nargs`` arguments.

    Returns ``(callable, args)`` with ``self`` (if any) first in ``args``.
    """
    fn, args = peek_call(stack, nargs)
    del stack[len(stack) - nargs - 2:]
    return fn, args


def peek_call(stack, nargs):
    """``(callable, args)`` of the call on top of the stack, as
    :func:`pop_call` gives them, leaving the stack as it is."""
    base = len(stack) - nargs - 2
    first = stack[base]
    second = stack[base + 1]
    if first is NULL:            # 3.11/3.12 [NULL, callable, args]
        return second, stack[base + 2:]
    if second is NULL:           # 3.13 [callable, NULL, args]
        return first, stack[base + 2:]
    return first, stack[base + 1:]  # [method, self, args] on every version


def callable_at(stack, depth):
    """The callable of the call whose two callable slots end ``depth``
    entries below the top (``depth`` 1: they are the top two)."""
    first = stack[-depth - 1]
    return stack[-depth] if first is NULL else first
