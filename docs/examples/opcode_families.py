"""One tiny function per opcode family, for the learning path of
docs/opcodes.md (its listings show their bytecode)."""
import os.path

LIMIT = 10


def stack(a, b, c):
    print(a)                 # the call's result is dropped: POP_TOP
    return a < b < c         # b is compared twice: SWAP and COPY


def names(x):
    y = x                    # a local
    return y + LIMIT         # a global


def arith(a, xs):
    return -a + xs[0] * 2 < 10


def build(a, b):
    return [a, b], {"k": a}, f"{a}!"


def control(n):
    total = 0
    for i in range(n):
        if i % 2:
            total += i
    return total


def calls(xs):
    return max(xs, key=abs)


def exceptions(d):
    try:
        return d["k"]
    except KeyError:
        return None


def generators(n):
    yield from range(n)


def imports():
    from os import sep
    return sep + os.path.basename("a/b")


def pattern(point):
    match point:
        case (0, y):
            return y
        case _:
            return None
