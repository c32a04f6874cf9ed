"""One tiny function per opcode family, for the learning path of
docs/opcodes.md (its listings show the steps each one executes)."""
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


def countdown(n):
    while n:
        yield n              # the frame stops here, and resumes on next()
        n -= 1


def generators(n):
    return sum(countdown(n))


def imports():
    import os.path           # binds os; os.path is imported too
    from os import sep
    return os.path.sep + sep


def pattern(point):
    match point:
        case (0, y):
            return y
        case _:
            return None


ARGUMENTS = {
    "stack": (1, 2, 3), "names": (1,), "arith": (1, [2]), "build": (1, 2),
    "control": (4,), "calls": ([3, -5],), "exceptions": ({},), "generators": (2,),
    "imports": (), "pattern": ((0, 5),),
}
"""The arguments each example is called with."""
