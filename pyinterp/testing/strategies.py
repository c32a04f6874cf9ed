"""Hypothesis strategies that write random, well-typed Python programs.

The main strategy is :func:`programs`: it draws a :class:`Program`, the
source text of a small module whose entry point is ::

    def f(log, a, b, x, s, xs, d): ...

together with matching arguments (``log`` is a fresh list that the generated
code appends to; ``a``/``b`` are ints, ``x`` a float, ``s`` a str, ``xs`` a
list of ints and ``d`` a dict of str to int).  Feed it to
:func:`pyinterp.testing.differential.assert_same_source`::

    @given(programs(families=["exceptions"]))
    def test_exceptions(program):
        assert_same_source(program.source, program.entry, program.args)

How programs stay well-typed
----------------------------
The writer tracks, for every point of the program, the names in scope and
their types (``int``, ``float``, ``str``, ``bool``, ``list`` of ints,
``dict`` of str to int, ``set`` of ints, generated classes, callables).
Every expression is drawn for a wanted type from the names of that type.
Names bound inside a block (a loop body, a branch, a handler, a ``case``)
are forgotten after the block, so nothing is read that may be unbound; a
name is never re-bound to a value of another type; a nested function assigns
only its own fresh names or names it declares ``nonlocal``/``global``.
Exceptions such as ``ZeroDivisionError``, ``IndexError`` or ``KeyError``
still happen on purpose: exception paths are compared too.

How programs stay small and fast
--------------------------------
Loops are bounded: ``for`` runs over ``range`` of at most 6 or a slice
``[:6]``, ``while`` carries a counter capped at 5 that the body can't touch,
loops nest at most twice in ``f`` and once elsewhere, and calls go only to
functions defined earlier (no recursion).  Inside loops, int assignments are
reduced modulo a constant and str/list assignments are truncated, so values
can't grow exponentially.  Exponents and shifts are small literals.

The programs are deterministic: no ``id()``, no hashing of strings into
sets, no time or randomness.

Families
--------
:data:`FAMILIES` names the language areas that can be switched on:
``expressions``, ``control``, ``exceptions``, ``closures``, ``generators``,
``comprehensions``, ``classes``, ``unpacking`` and ``match``.  Simple
statements (assignments, ``log.append``, ``print``, container mutation) and
the full expression language are always available.
"""
import keyword
import warnings

import attrs
from hypothesis import strategies as st

__all__ = [
    "FAMILIES",
    "Program",
    "arguments",
    "functions",
    "programs",
    "ENTRY_PARAMS",
]

FAMILIES = (
    "expressions",
    "control",
    "exceptions",
    "closures",
    "generators",
    "comprehensions",
    "classes",
    "unpacking",
    "match",
)
"""Names of the language areas a generated program can exercise."""

ENTRY_PARAMS = (("log", "log"), ("a", "int"), ("b", "int"), ("x", "float"),
                ("s", "str"), ("xs", "list"), ("d", "dict"))
"""Parameters of the generated entry point ``f``, with their types."""

VALUE_TYPES = ("int", "float", "str", "bool", "list", "dict", "set")

_STR_ALPHABET = "abxyz AB"
_LOOP_CAP = 6


# ---------------------------------------------------------------------------
# Public records and strategies
# ---------------------------------------------------------------------------
@attrs.frozen(repr=False)
class Program:
    """A generated program: module source, entry point name and arguments.

    Its ``repr`` is valid Python, so a failing example printed by Hypothesis
    can be pasted into ``@example(...)`` as it is.
    """

    source: str
    args: tuple
    entry: str = "f"
    families: tuple = ()

    def __repr__(self):
        if "'''" in self.source or "\\" in self.source or not self.source.endswith("\n"):
            text = repr(self.source)
        else:
            text = "'''\\\n%s'''" % self.source  # a backslash-newline starts the text
        return "Program(source=%s, args=%r, entry=%r, families=%r)" % (
            text, self.args, self.entry, self.families)


def arguments():
    """Strategy for the arguments of ``f(log, a, b, x, s, xs, d)``.

    Gives a tuple ``([], a, b, x, s, xs, d)`` of small, finite values (the
    ``log`` is always a new empty list).
    """
    small_int = st.one_of(st.integers(-4, 12), st.sampled_from([100, 255, -1000, 2 ** 33]))
    small_float = st.one_of(
        st.sampled_from([0.0, 0.5, -1.5, 2.25, 10.0, -0.0, 1e16]),
        st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False).map(lambda v: round(v, 3)),
    )
    small_str = st.text(alphabet=_STR_ALPHABET, max_size=5)
    key = st.text(alphabet="abkpz", min_size=1, max_size=2)
    return st.tuples(
        st.just(None).map(lambda _: []),
        small_int,
        small_int,
        small_float,
        small_str,
        st.lists(st.integers(-5, 20), max_size=5),
        st.dictionaries(key, st.integers(-3, 9), max_size=4),
    )


def programs(families=None, max_statements=24):
    """Strategy for a :class:`Program` exercising the given ``families``.

    ``families`` is an iterable of names from :data:`FAMILIES` (``None``
    means all of them, the "mixed" setting).  ``max_statements`` bounds the
    number of statements in the whole program.  Every program compiles; most
    run to completion natively (some raise on purpose).
    """
    fams = tuple(FAMILIES if families is None else families)
    unknown = set(fams) - set(FAMILIES)
    if unknown or not fams:
        raise ValueError("unknown families: %s (choose from %s)"
                         % (", ".join(sorted(unknown)) or "none given", ", ".join(FAMILIES)))
    return _programs(fams, max_statements)


@st.composite
def _programs(draw, fams, max_statements):
    writer = _Writer(draw, frozenset(fams), max_statements)
    source = writer.module()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no SyntaxWarning either
            compile(source, "<fuzz>", "exec")
    except (SyntaxError, SyntaxWarning) as exc:  # a bug in this module, not in the interpreter
        numbered = "\n".join("%4d  %s" % (i + 1, line) for i, line in enumerate(source.split("\n")))
        raise AssertionError("generated program does not compile: %s\n%s" % (exc, numbered))
    return Program(source=source, args=draw(arguments()), entry="f", families=fams)


def functions(families=None, max_statements=24):
    """Strategy for program source text alone (see :func:`programs`).

    The source defines ``f(log, a, b, x, s, xs, d)``; draw its arguments
    from :func:`arguments`.
    """
    return programs(families, max_statements).map(lambda p: p.source)


# ---------------------------------------------------------------------------
# Scopes and types
# ---------------------------------------------------------------------------
def _fn_type(params, ret, kind="fn"):
    """Type of a callable: ("fn" | "gen", parameter types, return type)."""
    return (kind, tuple(params), ret)


@attrs.define
class _Scope:
    vars: dict                      # readable name -> type
    own: set                        # names this function may assign
    log: "str | None" = "log"       # name of the side-effect log, if any
    loop: int = 0                   # enclosing loops in this function
    max_loops: int = 2
    handler: "str | None" = None    # innermost handler's exception name
    in_handler: bool = False        # inside an except block (bare raise ok)
    star: bool = False              # directly in an except* block
    ret: "str | None" = None        # return type of the function
    generator: bool = False         # yield allowed
    method_of: "str | None" = None  # generating a method body of this class
    fn_depth: int = 0               # nesting of function definitions
    nonlocal_ok: frozenset = frozenset()  # outer locals usable by nonlocal
    globals_declared: frozenset = frozenset()
    declared: frozenset = frozenset()     # names declared nonlocal or global here
    repeatable: bool = False        # a function that may be called many times
    yields: list = attrs.Factory(list)  # shared by a generator's blocks
    block_new: list = attrs.Factory(list)  # names bound in this block ("<fn>": a def)

    def child(self, **changes):
        new = attrs.evolve(self, vars=dict(self.vars), own=set(self.own), block_new=[])
        for key, value in changes.items():
            setattr(new, key, value)
        return new

    def bind(self, name, ty):
        """Bind a new local ``name`` of type ``ty`` in this block."""
        self.vars[name] = ty
        self.own.add(name)
        self.block_new.append(name)

    def names(self, ty):
        return [n for n, t in self.vars.items() if t == ty]

    def own_names(self, ty):
        return [n for n in self.names(ty) if n in self.own]


@attrs.define
class _ClassInfo:
    name: str
    base: "_ClassInfo | None"
    features: set
    root: "_ClassInfo | None" = None

    def has(self, feature):
        info = self
        while info is not None:
            if feature in info.features:
                return True
            info = info.base
        return False

    @property
    def top(self):
        return self.root or self


def _pattern_type(pattern, ty):
    """The type of every value that ``pattern`` (drawn for ``ty``) matches."""
    if pattern.startswith(("str(", "'")):
        return "str"
    if pattern.startswith(("int(", "bool(", "-", "True")) or pattern[0].isdigit():
        return "int"
    if pattern.startswith(("[", "(", "list(")):
        return "list" if ty == "list" else "any"
    if pattern.startswith(("{", "dict(")):
        return "dict"
    return "any"


_ODD_CLASS = [
    "class Odd:",
    "    def __init__(self, v):",
    "        self.v = v",
    "    def __bool__(self):",
    "        return self.v",
    "    def __len__(self):",
    "        return self.v",
    "    def __index__(self):",
    "        return self.v",
    "    def __iter__(self):",
    "        return self.v",
    "    def __eq__(self, other):",
    "        return NotImplemented",
    "    def __lt__(self, other):",
    "        return self.v",
    "    def __add__(self, other):",
    "        return NotImplemented",
    "    def __radd__(self, other):",
    "        return ('radd', other)",
    "    def __contains__(self, x):",
    "        return self.v",
    "    def __getitem__(self, i):",
    "        return i",
    "    def __format__(self, spec):",
    "        return 'O' + spec",
    "    def __str__(self):",
    "        return 'odd'",
    "    def __repr__(self):",
    "        return 'Odd()'",
]
"""A class whose dunders return wrong types: probes of the data model's checks."""


def _indent(lines, n=1):
    pad = "    " * n
    return [pad + line for line in lines]


# ---------------------------------------------------------------------------
# The writer
# ---------------------------------------------------------------------------
class _Writer:
    """Writes one program, drawing every choice from Hypothesis.

    Choices are ordered simplest-first, so shrinking moves towards simple
    programs.
    """

    BUILTIN_RAISE = ("ValueError", "KeyError", "IndexError", "RuntimeError",
                     "ZeroDivisionError", "LookupError", "ArithmeticError",
                     "OverflowError", "AttributeError")

    CLASS_FEATURES = ("repr", "get", "prop", "static", "classmethod", "add", "radd", "eq", "lt",
                      "len", "getitem", "iter", "bool", "contains", "call", "getattr", "index",
                      "neg", "iadd", "match_args", "setattr", "del")
    """Optional members of a generated root class (each drawn with 35% chance)."""

    def __init__(self, draw, families, max_statements):
        self.draw = draw
        self.fam = families
        self.budget = max_statements
        self.counter = 0
        self.classes = {}
        self.exc_classes = []
        self.last_pattern_class = None  # set by pattern() for class patterns
        self.module_vars = {"counter": "int"}  # G is a log, not typed

    # -- drawing helpers ----------------------------------------------------
    def choice(self, seq):
        seq = list(seq)
        return seq[self.draw(st.integers(0, len(seq) - 1))] if len(seq) > 1 else seq[0]

    def integer(self, lo, hi):
        return self.draw(st.integers(lo, hi))

    def flip(self, percent=50):
        """True with ``percent`` % chance; shrinks to False."""
        return self.draw(st.integers(0, 99)) >= 100 - percent

    def pick(self, options):
        """Choose among ``(weight, thunk)`` pairs and call the thunk."""
        options = [(w, f) for w, f in options if w > 0]
        total = sum(w for w, _ in options)
        n = self.draw(st.integers(0, total - 1))
        for weight, thunk in options:
            if n < weight:
                return thunk()
            n -= weight
        raise AssertionError("unreachable")

    def fresh(self, prefix="v"):
        self.counter += 1
        name = "%s%d" % (prefix, self.counter)
        assert not keyword.iskeyword(name)
        return name

    def has(self, family):
        return family in self.fam

    # -- literals -------------------------------------------------------------
    def literal(self, ty):
        if ty == "int":
            return self.choice(["0", "1", "2", "3", "(-1)", "5", "7", "10", "(-4)", "100",
                                "255", "(2 ** 40)", "(-3)"])
        if ty == "float":
            return self.choice(["0.5", "1.0", "(-2.25)", "0.0", "3.5", "1e+16", "(-0.0)",
                                "0.1", "1e+300"])
        if ty == "str":
            return repr(self.choice(["a", "", "ab", "xyz", "b a", "Ab", "aa", "zz"]))
        if ty == "bool":
            return self.choice(["True", "False"])
        if ty == "list":
            return self.choice(["[]", "[1, 2, 3]", "[0]", "[5, -2, 7, 1]", "[3, 3]"])
        if ty == "dict":
            return self.choice(["{}", "{'a': 1}", "{'a': 1, 'b': 2}", "{'k': -3, 'z': 0}"])
        if ty == "set":
            return self.choice(["set()", "{1, 2}", "{0, 5, 9}"])
        if ty in self.classes:
            return self.construct(ty, _Scope({}, set()), 0)
        if ty == "any":
            return "None"
        raise AssertionError(ty)

    def atom(self, ty, scope):
        names = scope.names(ty)
        if names and self.flip(70):
            return self.choice(names)
        return self.literal(ty)

    # -- expressions ------------------------------------------------------------
    def expr(self, ty, scope, depth=2):
        """An expression of type ``ty`` using the names in ``scope``."""
        if depth <= 0:
            return self.atom(ty, scope)
        method = getattr(self, "e_" + ty, None)
        if method is None:  # a class type
            return self.e_object(ty, scope, depth)
        return method(scope, depth)

    def calls_returning(self, ty, scope, depth):
        """Options calling a visible callable whose return type is ``ty``."""
        options = []
        for name, t in scope.vars.items():
            if isinstance(t, tuple) and t[0] == "fn" and t[2] == ty:
                options.append((3, lambda name=name, t=t: self.call(name, t[1], scope, depth)))
        return options

    def call(self, name, params, scope, depth):
        args = []
        for p in params:
            if p == "log":
                args.append(scope.log or "G")
            else:
                args.append(self.expr(p, scope, depth - 1))
        return "%s(%s)" % (name, ", ".join(args))

    def gen_calls(self, scope, depth):
        """Expressions creating a generator from a visible generator function."""
        return [self.call(n, t[1], scope, depth) for n, t in scope.vars.items()
                if isinstance(t, tuple) and t[0] == "gen"]

    def objects(self, scope, feature=None):
        """Names of visible class instances (whose class has ``feature``)."""
        out = []
        for name, t in scope.vars.items():
            info = self.classes.get(t) if isinstance(t, str) else None
            if info is not None and (feature is None or info.has(feature)):
                out.append(name)
        return out

    def iter_source(self, scope, depth):
        """A bounded iterable of ints, for loops and comprehensions."""
        return self.pick([
            (3, lambda: "range(%d)" % self.integer(0, 5)),
            (3, lambda: "%s[:%d]" % (self.atom("list", scope), _LOOP_CAP)),
            (2, lambda: "range(%s %% 5)" % self.expr("int", scope, depth - 1)),
            (1, lambda: "range(%d, %d, %s)" % (self.integer(-3, 6), self.integer(-3, 6),
                                              self.choice(["1", "2", "-1", "3"]))),
            (1, lambda: "sorted(%s)[:%d]" % (self.expr("set", scope, depth - 1), _LOOP_CAP)),
            (1, lambda: "reversed(%s[:%d])" % (self.expr("list", scope, depth - 1), _LOOP_CAP)),
        ])

    def e_int(self, scope, d):
        e = lambda ty="int", dd=d - 1: self.expr(ty, scope, dd)  # noqa: E731
        options = [
            (6, lambda: self.atom("int", scope)),
            (8, lambda: "(%s %s %s)" % (e(), self.choice("+ - * // % & | ^".split()), e())),
            (2, lambda: "(%s ** %d)" % (e(), self.integer(0, 3))),
            (2, lambda: "(%s %s %d)" % (e(), self.choice(["<<", ">>"]), self.integer(0, 8))),
            (2, lambda: "(%s%s)" % (self.choice(["-", "~", "+"]), e())),
            (3, lambda: "len(%s)" % e(self.choice(["str", "list", "dict", "set"]))),
            (2, lambda: "%s(%s, %s)" % (self.choice(["min", "max"]), e(), e())),
            (1, lambda: "abs(%s)" % e()),
            (3, lambda: "(%s if %s else %s)" % (e(), self.cond(scope, d - 1), e())),
            (1, lambda: "(%s %s %s)" % (e(), self.choice(["and", "or"]), e())),
            (1, lambda: "%s[%s]" % (e("list"), e())),
            (1, lambda: "sum(%s)" % e("list")),
            (2, lambda: "%s.get(%s, %s)" % (e("dict"), e("str"), e())),
            (1, lambda: "%s[%s]" % (e("dict"), e("str"))),
            (1, lambda: "int(%s)" % e(self.choice(["bool", "float"]))),
            (1, lambda: "round(%s)" % e("float")),
            (1, lambda: "%s.count(%s)" % (e("str"), e("str"))),
            (1, lambda: "%s.find(%s)" % (e("str"), e("str"))),
            (1, lambda: "(%s).bit_length()" % e()),
            (1, lambda: "(%s + %s)" % (e("bool"), e())),
            (1, lambda: "int(%s)" % repr(self.choice(["7", "-12", " 3 ", "0x1"]))),
            (1, lambda: "divmod(%s, %s)[%d]" % (e(), e(), self.integer(0, 1))),
            (1, lambda: "%s(%s, key=lambda q: %s, default=-1)" % (
                self.choice(["max", "min"]), e("list"), self.lambda_body("int", scope))),
            (1, lambda: "functools.reduce(lambda p, q: (%s) %% 1000, %s, %s)" % (
                self.choice(["p + q", "p * q - 1", "p ^ q", "max(p, q)"]), e("list"), e())),
        ]
        if self.has("comprehensions") or self.has("generators"):
            options.append((2, lambda: self.genexp("sum", "int", scope, d)))
        if self.has("comprehensions"):
            options.append((1, lambda: "len(%s)" % self.comprehension("list", scope, d)))
        if self.has("generators") and scope.method_of is None:
            gens = self.gen_calls(scope, d)
            if gens:
                options.append((3, lambda: "sum(%s)" % self.choice(gens)))
                options.append((2, lambda: "next(%s, -1)" % self.choice(gens)))
        options += self.calls_returning("int", scope, d)
        options += self.class_int_options(scope, d)
        return self.pick(options)

    def e_float(self, scope, d):
        e = lambda ty="float", dd=d - 1: self.expr(ty, scope, dd)  # noqa: E731
        return self.pick([
            (5, lambda: self.atom("float", scope)),
            (6, lambda: "(%s %s %s)" % (e(), self.choice("+ - * /".split()),
                                        e(self.choice(["float", "int"])))),
            (2, lambda: "(%s / %s)" % (e("int"), e("int"))),
            (2, lambda: "float(%s)" % e("int")),
            (1, lambda: "(%s ** %d)" % (e(), self.integer(0, 3))),
            (1, lambda: "(-%s)" % e()),
            (1, lambda: "abs(%s)" % e()),
            (1, lambda: "round(%s, %d)" % (e(), self.integer(0, 3))),
            (1, lambda: "(%s if %s else %s)" % (e(), self.cond(scope, d - 1), e())),
            (1, lambda: "max(%s, %s)" % (e(), e())),
            (1, lambda: "(%s // %s)" % (e(), e())),
            (1, lambda: "float(%s)" % repr(self.choice(["1.5", "inf", "-2", "nan"]))),
        ] + self.calls_returning("float", scope, d))

    def e_str(self, scope, d):
        e = lambda ty="str", dd=d - 1: self.expr(ty, scope, dd)  # noqa: E731
        options = [
            (5, lambda: self.atom("str", scope)),
            (5, lambda: "(%s + %s)" % (e(), e())),
            (2, lambda: "(%s * (%s %% 3))" % (e(), e("int"))),
            (3, lambda: "str(%s)" % e(self.choice(["int", "float", "bool", "list"]))),
            (2, lambda: "%s.%s()" % (e(), self.choice(["upper", "lower", "strip", "title",
                                                      "swapcase"]))),
            (2, lambda: "%s[%s:%s]" % (e(), e("int"), e("int"))),
            (1, lambda: "%s[::-1]" % e()),
            (1, lambda: "%s[%s]" % (e(), e("int"))),
            (3, lambda: self.fstring(scope, d)),
            (1, lambda: "%r.join(%s)" % (self.choice(["-", "", ", "]), e())),
            (1, lambda: "'-'.join([str(q) for q in %s])" % e("list")),
            (1, lambda: "(%r %% (%s, %s))" % ("%s/%d", e(), e("int"))),
            (1, lambda: "repr(%s)" % e(self.choice(["str", "int", "float", "list", "dict"]))),
            (1, lambda: "chr(65 + %s %% 26)" % e("int")),
            (2, lambda: "(%s if %s else %s)" % (e(), self.cond(scope, d - 1), e())),
            (1, lambda: "(%s or %s)" % (e(), e())),
            (1, lambda: "%s.replace(%s, %s)" % (e(), e(), e())),
            (1, lambda: "type(%s).__name__" % e(self.choice(VALUE_TYPES))),
            (1, lambda: "format(%s, %r)" % (e("int"), self.choice(["5", "<4", "x", "+"]))),
        ]
        if self.has("classes"):
            for name in self.objects(scope, "repr"):
                options.append((2, lambda name=name: "%s(%s)" % (self.choice(["repr", "str"]), name)))
        return self.pick(options + self.calls_returning("str", scope, d))

    def fstring(self, scope, d):
        parts = []
        for _ in range(self.integer(1, 3)):
            ty = self.choice(["int", "str", "float", "bool", "list"])
            spec = ""
            if ty == "int":
                spec = self.choice(["", "", ":>4", ":03d", ":x", "!r"])
            elif ty == "float":
                spec = self.choice(["", ":.2f", ":g", ":e"])
            elif ty == "str":
                spec = self.choice(["", "!r", ":<3", ":^5", "!s"])
            inner = self.expr(ty, scope, d - 1)
            if self.flip(10):
                spec = "=" + spec.replace("!r", "")
            parts.append(self.choice(["", "-", " ", "x="]) + "{ %s%s}" % (inner, spec))
        body = "".join(parts)
        if "'" not in body:
            return "f'%s'" % body
        if '"' not in body:
            return 'f"%s"' % body
        return "f'''%s'''" % body

    def cond(self, scope, d):
        """A condition: usually a bool, sometimes any value (truthiness)."""
        d = max(d, 1)
        if self.flip(80):
            return self.expr("bool", scope, d)
        ty = self.choice(["int", "str", "list", "dict", "float"] + list(self.classes))
        return self.expr(ty, scope, d)

    def e_bool(self, scope, d):
        e = lambda ty, dd=d - 1: self.expr(ty, scope, dd)  # noqa: E731
        ordered = ["int", "float", "str", "list"]

        def compare():
            ty = self.choice(ordered + ["bool", "dict", "set"])
            ops = ["<", "<=", ">", ">=", "==", "!="] if ty in ordered else ["==", "!="]
            if ty == "set":
                ops += ["<=", "<"]
            if ty in ("int", "float"):
                other = lambda: e(self.choice(["int", "float"]))  # noqa: E731
            else:
                other = lambda: e(ty)  # noqa: E731
            text = e(ty)
            for _ in range(self.choice([1, 1, 1, 2, 3])):
                text += " %s %s" % (self.choice(ops), other())
            return "(%s)" % text

        options = [
            (4, lambda: self.atom("bool", scope)),
            (10, compare),
            (3, lambda: "(%s %s %s)" % (e("int"), self.choice(["in", "not in"]),
                                        e(self.choice(["list", "set"])))),
            (2, lambda: "(%s %s %s)" % (e("str"), self.choice(["in", "not in"]),
                                        e(self.choice(["str", "dict"])))),
            (3, lambda: "(not %s)" % self.cond(scope, d - 1)),
            (4, lambda: "(%s %s %s)" % (self.cond(scope, d - 1), self.choice(["and", "or"]),
                                        self.cond(scope, d - 1))),
            (2, lambda: "bool(%s)" % e(self.choice(VALUE_TYPES))),
            (1, lambda: "isinstance(%s, %s)" % (e(self.choice(VALUE_TYPES)),
                                                self.choice(["int", "str", "(int, float)",
                                                             "bool", "list"]))),
            (1, lambda: "%s.startswith(%s)" % (e("str"), e("str"))),
            (1, lambda: "(%s is %sNone)" % (self.choice(scope.names("int") or ["a"]),
                                            self.choice(["", "not "]))),
            (1, lambda: "(%s if %s else %s)" % (e("bool"), self.cond(scope, d - 1), e("bool"))),
            (1, lambda: "%s.isdigit()" % e("str")),
        ]
        if self.has("comprehensions") or self.has("generators"):
            options.append((2, lambda: self.genexp(self.choice(["any", "all"]), "bool", scope, d)))
        if self.has("classes"):
            options += self.class_bool_options(scope, d)
        return self.pick(options + self.calls_returning("bool", scope, d))

    def e_list(self, scope, d):
        e = lambda ty="list", dd=d - 1: self.expr(ty, scope, dd)  # noqa: E731
        options = [
            (5, lambda: self.atom("list", scope)),
            (4, lambda: "[%s]" % ", ".join(e("int") for _ in range(self.integer(0, 3)))),
            (2, lambda: "list(range(%d))" % self.integer(0, 5)),
            (4, lambda: "(%s + %s)" % (e(), e())),
            (1, lambda: "(%s * (%s %% 3))" % (e(), e("int"))),
            (2, lambda: "sorted(%s%s)" % (e(self.choice(["list", "set"])),
                                          self.choice(["", ", reverse=True"]))),
            (2, lambda: "%s[%s:%s]" % (e(), e("int"), e("int"))),
            (1, lambda: "%s[::%s]" % (e(), self.choice(["-1", "2", "-2"]))),
            (1, lambda: "list(%s.values())" % e("dict")),
            (1, lambda: "sorted(%s, key=lambda %s: %s)" % (e(), "q", self.choice(
                ["-q", "q % 3", "abs(q - 2)", "(q % 2, -q)"]))),
            (1, lambda: "list(map(abs, %s))" % e()),
            (1, lambda: "list(filter(None, %s))" % e()),
            (1, lambda: "list(map(lambda q: %s, %s))" % (self.lambda_body("int", scope), e())),
            (1, lambda: "list(filter(lambda q: %s, %s))" % (self.lambda_body("bool", scope),
                                                            e())),
            (1, lambda: "(%s if %s else %s)" % (e(), self.cond(scope, d - 1), e())),
            (1, lambda: "[len(%s)]" % e("str")),
            (1, lambda: "list(%s.encode())" % e("str")),
        ]
        if self.has("comprehensions"):
            options.append((5, lambda: self.comprehension("list", scope, d)))
        if self.has("generators") and scope.method_of is None:
            gens = self.gen_calls(scope, d)
            if gens:
                options.append((4, lambda: "list(%s)" % self.choice(gens)))
            options.append((2, lambda: self.genexp("list", "list", scope, d)))
        if self.has("unpacking"):
            options.append((3, lambda: "[%s]" % ", ".join(
                self.choice(["*%s" % e(), e("int"), "*range(%d)" % self.integer(0, 3)])
                for _ in range(self.integer(1, 3)))))
        if self.has("classes"):
            for name in self.objects(scope, "iter") + self.objects(scope, "getitem"):
                options.append((2, lambda name=name: "list(%s)" % name))
        return self.pick(options + self.calls_returning("list", scope, d))

    def e_dict(self, scope, d):
        e = lambda ty="dict", dd=d - 1: self.expr(ty, scope, dd)  # noqa: E731
        options = [
            (5, lambda: self.atom("dict", scope)),
            (3, lambda: "{%s}" % ", ".join("%s: %s" % (e("str"), e("int"))
                                           for _ in range(self.integer(0, 3)))),
            (1, lambda: "dict(%s)" % e()),
            (1, lambda: "dict(zip(%s, %s))" % (e("str"), e("list"))),
            (1, lambda: "(%s if %s else %s)" % (e(), self.cond(scope, d - 1), e())),
            (1, lambda: "(%s | %s)" % (e(), e())),
        ]
        if self.has("comprehensions"):
            options.append((4, lambda: self.comprehension("dict", scope, d)))
        if self.has("unpacking"):
            options.append((3, lambda: "{**%s, %s: %s}" % (e(), e("str"), e("int"))))
            options.append((1, lambda: "dict(**%s)" % e()))
        return self.pick(options + self.calls_returning("dict", scope, d))

    def e_set(self, scope, d):
        e = lambda ty="set", dd=d - 1: self.expr(ty, scope, dd)  # noqa: E731
        options = [
            (5, lambda: self.atom("set", scope)),
            (2, lambda: "set(%s)" % e("list")),
            (2, lambda: "{%s}" % ", ".join(e("int") for _ in range(self.integer(1, 3)))),
            (3, lambda: "(%s %s %s)" % (e(), self.choice(["|", "&", "-", "^"]), e())),
        ]
        if self.has("comprehensions"):
            options.append((4, lambda: self.comprehension("set", scope, d)))
        if self.has("unpacking"):
            options.append((2, lambda: "{*%s, *%s}" % (e("list"), e())))
        return self.pick(options + self.calls_returning("set", scope, d))

    def e_any(self, scope, d):
        return self.atom("any", scope)

    def lambda_body(self, ty, scope):
        """The body of ``lambda q: ...`` (``q`` an int), for map/filter/key."""
        inner = scope.child()
        inner.vars["q"] = "int"
        return self.expr(ty, inner, 1)

    def loggable(self, scope, d=2):
        """Any value worth logging: a typed expression, a tuple, handler state."""
        options = [
            (10, lambda: self.expr(self.choice(VALUE_TYPES + tuple(self.classes)), scope, d)),
            (2, lambda: "(%s, %s)" % (self.expr(self.choice(VALUE_TYPES), scope, d - 1),
                                      self.expr(self.choice(VALUE_TYPES), scope, d - 1))),
        ]
        if self.has("exceptions"):
            options.append((1, lambda: "sys.exc_info()[0]"))
        if self.has("expressions") and scope.fn_depth == 0 and scope.log == "log":
            # Frame introspection: lookasides in the interpreter.
            options.append((1, lambda: "sorted(locals())"))
            own = sorted(n for n in scope.own if scope.vars.get(n) == "int")
            if own:
                options.append((1, lambda: "eval(%r)" % ("%s + 1" % self.choice(own))))
        for name, t in scope.vars.items():
            if t == "any":
                options.append((3, lambda name=name: name))
            elif t == "exc":
                options.append((3, lambda name=name: self.choice([
                    "%s.args" % name, "repr(%s)" % name, "type(%s).__name__" % name,
                    "str(%s)" % name, "type(%s.__context__).__name__" % name,
                    "type(%s.__cause__).__name__" % name, "%s.__suppress_context__" % name])))
            elif t == "excgroup":
                options.append((3, lambda name=name: self.choice([
                    "repr(%s.exceptions)" % name, "%s.message" % name,
                    "type(%s).__name__" % name, "len(%s.exceptions)" % name])))
        return self.pick(options)

    # -- comprehensions and generator expressions -------------------------------
    def comprehension(self, kind, scope, d):
        inner = scope.child()
        clauses = []
        for i in range(self.choice([1, 1, 1, 2])):
            var = self.fresh("c")
            if i == 0:
                source = self.pick([
                    (4, lambda: "%s[:8]" % self.expr("list", scope, d - 1)),
                    (2, lambda: "range(%d)" % self.integer(0, 6)),
                    (1, lambda: self.expr("set", scope, d - 1)),
                ])
            else:
                source = "range(%s %% 3)" % self.choice(inner.names("int") or ["2"])
            clauses.append("for %s in %s" % (var, source))
            inner.vars[var] = "int"
            if self.flip(40):
                clauses.append("if %s" % self.expr("bool", inner, 1))
        if kind == "dict" and self.flip(30):
            k, v = self.fresh("k"), self.fresh("c")
            inner = scope.child()
            inner.vars.update({k: "str", v: "int"})
            cond = " if %s" % self.expr("bool", inner, 1) if self.flip(40) else ""
            return "{%s: %s for %s, %s in %s.items()%s}" % (
                self.expr("str", inner, 1), self.expr("int", inner, 1), k, v,
                self.expr("dict", scope, d - 1), cond)
        head = " ".join(clauses)
        if kind == "list":
            return "[%s %s]" % (self.expr("int", inner, 1), head)
        if kind == "set":
            return "{%s %% 7 %s}" % (self.expr("int", inner, 1), head)
        return "{%s: %s %s}" % (self.expr("str", inner, 1), self.expr("int", inner, 1), head)

    def genexp(self, consumer, ty, scope, d):
        inner = scope.child()
        var = self.fresh("c")
        inner.vars[var] = "int"
        source = "%s[:8]" % self.expr("list", scope, d - 1)
        cond = " if %s" % self.expr("bool", inner, 1) if self.flip(40) else ""
        item = self.expr("bool" if consumer in ("any", "all") else "int", inner, 1)
        return "%s(%s for %s in %s%s)" % (consumer, item, var, source, cond)

    # -- classes ------------------------------------------------------------------
    def construct(self, cls, scope, d):
        info = self.classes[cls]
        args = [self.expr("int", scope, d - 1)]
        if info.base is not None and self.flip(50):
            args.append(self.expr("int", scope, d - 1))
        return "%s(%s)" % (cls, ", ".join(args))

    def e_object(self, cls, scope, d):
        info = self.classes[cls]
        top = info.top
        same = [n for n in self.objects(scope) if self.classes[scope.vars[n]].top is top]
        options = [
            (4, lambda: self.atom(cls, scope)),
            (3, lambda: self.construct(cls, scope, d)),
        ]
        if cls == top.name:
            if top.has("add") and same:
                options.append((3, lambda: "(%s + %s)" % (
                    self.choice(same), self.expr("int", scope, d - 1) if self.flip(50)
                    else self.choice(same))))
            if top.has("radd") and same:
                options.append((2, lambda: "(%s + %s)" % (self.expr("int", scope, d - 1),
                                                        self.choice(same))))
            if top.has("neg") and same:
                options.append((1, lambda: "(-%s)" % self.choice(same)))
        if info.has("classmethod"):
            options.append((1, lambda: "%s.make(%s)" % (cls, self.expr("int", scope, d - 1))))
        names = [n for n in self.objects(scope) if scope.vars[n] == cls]
        if len(names) >= 1:
            options.append((1, lambda: "(%s if %s else %s)" % (
                self.choice(names), self.cond(scope, d - 1), self.choice(names))))
        return self.pick(options + self.calls_returning(cls, scope, d))

    def class_int_options(self, scope, d):
        if not self.classes:
            return []
        objs = self.objects(scope)
        opts = []
        e = lambda: self.expr("int", scope, d - 1)  # noqa: E731
        for name in objs:
            info = self.classes[scope.vars[name]]
            opts.append((2, lambda name=name: "%s.v" % name))
            if info.has("get") and scope.method_of is None:
                opts.append((2, lambda name=name: "%s.get(%s)" % (name, e())))
            if info.has("len"):
                opts.append((1, lambda name=name: "len(%s)" % name))
            if info.has("getitem"):
                opts.append((1, lambda name=name: "%s[%s]" % (name, e())))
            if info.has("prop"):
                opts.append((1, lambda name=name: "%s.dbl" % name))
            if info.has("static"):
                opts.append((1, lambda name=name: "%s.sm(%s)" % (name, e())))
            if info.has("call"):
                opts.append((1, lambda name=name: "%s(%s)" % (name, e())))
            if info.has("getattr"):
                opts.append((1, lambda name=name: "%s.%s" % (name, self.choice(["zq", "zzz"]))))
            if info.has("index"):
                opts.append((1, lambda name=name: "%s[%s]" % (self.expr("list", scope, d - 1),
                                                               name)))
            if info.has("iter") or info.has("getitem"):
                opts.append((1, lambda name=name: "sum(%s)" % name))
            if info.base is not None:
                opts.append((1, lambda name=name: "%s.w" % name))
        for cls in self.classes:
            opts.append((1, lambda cls=cls: "%s.cnt" % cls))
        return opts

    def class_bool_options(self, scope, d):
        objs = self.objects(scope)
        if not objs:
            return []
        opts = []
        for name in objs:
            info = self.classes[scope.vars[name]]
            same = [n for n in objs if self.classes[scope.vars[n]].top is info.top]
            opts.append((1, lambda name=name, same=same: "(%s %s %s)" % (
                name, self.choice(["==", "!=", "is", "is not"]), self.choice(same))))
            if info.top.has("lt"):
                opts.append((1, lambda name=name, same=same: "(%s %s %s)" % (
                    name, self.choice(["<", ">"]), self.choice(same))))
            if info.has("contains") or info.has("iter") or info.has("getitem"):
                opts.append((1, lambda name=name: "(%s in %s)" % (
                    self.expr("int", scope, d - 1), name)))
            opts.append((1, lambda name=name: "bool(%s)" % name))
            opts.append((1, lambda name=name: "isinstance(%s, %s)" % (
                name, self.choice(list(self.classes)))))
            opts.append((1, lambda name=name: "hasattr(%s, 'w')" % name))
        return opts

    def write_class(self, name, base):
        features = set()
        if base is None:
            for feature in self.CLASS_FEATURES:
                if self.flip(35):
                    features.add(feature)
        else:
            for feature in ["repr", "get", "radd", "len", "bool", "iter", "match_args"]:
                if self.flip(40):
                    features.add(feature)
        info = _ClassInfo(name, base, features, base.top if base else None)
        self.classes[name] = info
        lines = ["class %s%s:" % (name, "(%s)" % base.name if base else "")]
        body = ["cnt = 0"]
        if "match_args" in features:
            body.append("__match_args__ = %r" % ((("v",) if base is None else ("v", "w")),))
        if base is None:
            body += ["def __init__(self, v):", "    self.v = v", "    %s.cnt += 1" % name]
        else:
            body += ["def __init__(self, v, w=1):", "    super().__init__(v)",
                     "    self.w = w"]
        has_base = base is not None and base.has

        if "repr" in features:
            if base is None:
                body += ["def __repr__(self):", "    return f'%s({self.v!r})'" % name]
            else:
                body += ["def __repr__(self):", "    return f'%s({self.v!r}, {self.w!r})'" % name]
        if "get" in features:
            body += ["def get(self, k):"] + _indent(self.method_body(info))
        if "prop" in features:
            body += ["@property", "def dbl(self):", "    return self.v * 2",
                     "@dbl.setter", "def dbl(self, val):", "    self.v = val // 2"]
        if "static" in features:
            body += ["@staticmethod", "def sm(p):", "    return p * 3 + 1"]
        if "classmethod" in features:
            body += ["@classmethod", "def make(cls, p):", "    return cls(p)"]
        if "add" in features:
            body += ["def __add__(self, other):",
                     "    if isinstance(other, %s):" % name,
                     "        return %s(self.v + other.v)" % name,
                     "    if isinstance(other, int):",
                     "        return %s(self.v + other)" % name,
                     "    return NotImplemented"]
        if "radd" in features:
            top = info.top.name
            if base is None:
                body += ["def __radd__(self, other):",
                         "    if isinstance(other, int):",
                         "        return %s(other * 10 + self.v)" % top,
                         "    return NotImplemented"]
            else:
                fallback = ("super().__radd__(other)" if has_base("radd")
                            else "%s(other + self.v)" % top)
                body += ["def __radd__(self, other):",
                         "    if isinstance(other, %s):" % top,
                         "        return %s(other.v * 100 + self.v)" % top,
                         "    return %s" % fallback]
        if "eq" in features:
            body += ["def __eq__(self, other):",
                     "    if isinstance(other, %s):" % name,
                     "        return self.v == other.v",
                     "    return NotImplemented"]
        if "lt" in features:
            body += ["def __lt__(self, other):", "    return self.v < other.v"]
        if "len" in features:
            if has_base and has_base("len"):
                body += ["def __len__(self):", "    return super().__len__() + 1"]
            else:
                body += ["def __len__(self):", "    return self.v % 4"]
        if "getitem" in features:
            body += ["def __getitem__(self, i):", "    if i >= 3:",
                     "        raise IndexError(i)", "    return self.v + i"]
        if "iter" in features:
            if has_base and has_base("iter"):
                body += ["def __iter__(self):", "    yield from super().__iter__()",
                         "    yield self.w"]
            else:
                body += ["def __iter__(self):", "    yield self.v", "    yield self.v + 1"]
        if "bool" in features:
            if has_base and has_base("bool"):
                body += ["def __bool__(self):", "    return not super().__bool__()"]
            else:
                body += ["def __bool__(self):", "    return self.v % 2 == 0"]
        if "contains" in features:
            body += ["def __contains__(self, x):", "    return x == self.v"]
        if "call" in features:
            body += ["def __call__(self, p):", "    return self.v - p"]
        if "getattr" in features:
            body += ["def __getattr__(self, name):", "    if name.startswith('z'):",
                     "        return len(name)", "    raise AttributeError(name)"]
        if "index" in features:
            body += ["def __index__(self):", "    return self.v % 3"]
        if "neg" in features:
            body += ["def __neg__(self):", "    return %s(-self.v)" % name]
        if "iadd" in features:
            body += ["def __iadd__(self, other):", "    self.v += other", "    return self"]
        if "setattr" in features:
            body += ["def __setattr__(self, name, value):", "    G.append(('set', name))",
                     "    object.__setattr__(self, name, value)"]
        if "del" in features:
            body += ["def __del__(self):", "    G.append(('del', %s, self.v))" % repr(name)]
        return lines + _indent(body)

    def method_body(self, info):
        scope = self.function_scope({"self": info.name, "k": "int"}, ret="int", log=None)
        scope.method_of = info.name
        scope.max_loops = 1
        scope.repeatable = True
        lines = []
        if info.base is not None and info.base.has("get"):
            lines.append("k = k + super().get(k)")
        lines += self.block(scope, 1, 0, 2)
        lines.append("return %s" % self.expr("int", scope, 2))
        return lines

    # -- statements -----------------------------------------------------------------
    def function_scope(self, params, ret, log="log", fn_depth=0):
        names = dict(self.module_vars)
        names.update(params)
        return _Scope(vars=names, own=set(params), log=log, ret=ret, fn_depth=fn_depth)

    def block(self, scope, depth, lo=1, hi=3):
        """A list of statements (lines) in ``scope``; new names stay in it."""
        lines = []
        for _ in range(self.integer(lo, hi)):
            if self.budget <= 0:
                break
            self.budget -= 1
            lines += self.stmt(scope, depth)
        if not lines:
            lines.append(self.simple_stmt(scope) if self.flip(50) else "pass")
        return lines

    def simple_stmt(self, scope):
        target = scope.log
        value = self.loggable(scope)
        if target:
            return "%s.append(%s)" % (target, value)
        return "G.append(%s)" % value

    def stmt(self, scope, depth):
        f = self.has
        loops_ok = scope.loop < scope.max_loops
        options = [
            (8, lambda: self.assign_new(scope)),
            (5, lambda: self.assign_existing(scope)),
            (3, lambda: self.augassign(scope)),
            (6, lambda: [self.simple_stmt(scope)]),
            (2, lambda: self.print_stmt(scope)),
            (2, lambda: self.mutate(scope)),
            (1, lambda: self.del_stmt(scope)),
        ]
        if f("expressions"):
            options += [(4, lambda: self.walrus(scope)), (2, lambda: self.assign_new(scope)),
                        (3, lambda: self.probe_stmt(scope)),
                        (1, lambda: self.iter_sentinel(scope)),
                        (1, lambda: ["assert %s, %s" % (self.expr("bool", scope),
                                                        self.expr("str", scope, 1))])]
        if depth > 0:
            options += [
                (6 if f("control") else 2, lambda: self.if_stmt(scope, depth)),
                (4 if f("control") else 1, lambda: self.for_stmt(scope, depth) if loops_ok
                 else self.if_stmt(scope, depth)),
            ]
            if f("control"):
                options += [(3, lambda: self.while_stmt(scope, depth) if loops_ok
                             else self.if_stmt(scope, depth))]
            if f("exceptions"):
                options += [(7, lambda: self.try_stmt(scope, depth)),
                            (3, lambda: self.with_stmt(scope, depth)),
                            (2, lambda: self.try_star(scope, depth))]
            if f("closures") and scope.fn_depth < 2:
                options += [(6, lambda: self.def_stmt(scope, depth)),
                            (2, lambda: self.lambda_stmt(scope))]
            if f("generators") and scope.fn_depth < 2:
                options += [(4, lambda: self.def_generator(scope, depth)),
                            (3, lambda: self.drive_generator(scope))]
            if f("match"):
                options += [(8, lambda: self.match_stmt(scope, depth))]
        if f("control") and scope.loop and not scope.star:
            options += [(2, lambda: ["break"]), (2, lambda: ["continue"]),
                        (1, lambda: ["if %s:" % self.cond(scope, 1), "    break"]),
                        (1, lambda: ["if %s:" % self.cond(scope, 1), "    continue"])]
        if scope.ret and not scope.star and f("control"):
            options += [(1, lambda: ["if %s:" % self.cond(scope, 1),
                                     "    return %s" % self.return_expr(scope)])]
        if f("exceptions"):
            options += [(4, lambda: self.raise_stmt(scope)),
                        (1, lambda: ["warnings.warn(%s, %s, stacklevel=%d)" % (
                            self.expr("str", scope, 1),
                            self.choice(["UserWarning", "RuntimeWarning", "DeprecationWarning"]),
                            self.integer(1, 2))])]
        if f("closures"):
            options += [(2, lambda: self.call_stmt(scope)),
                        (1, lambda: ["G.append(%s)" % self.loggable(scope)])]
        if f("generators") and scope.generator:
            options += [(8, lambda: self.yield_stmt(scope))]
        if f("comprehensions"):
            options += [(4, lambda: self.assign_new(
                scope, self.choice(["list", "set", "dict"]),
                lambda ty: self.comprehension(ty, scope, 2))),
                (1, lambda: self.late_binding(scope))]
        if f("classes"):
            options += [(2, lambda: self.local_class(scope)) if depth > 0 else (0, None),
                        (3, lambda: self.probe_stmt(scope)),
                        (4, lambda: self.assign_new(scope, self.choice(list(self.classes)))),
                        (3, lambda: self.object_stmt(scope))]
        if f("unpacking"):
            options += [(8, lambda: self.unpack_stmt(scope))]
        return self.pick(options)

    # simple statements
    def assign_new(self, scope, ty=None, make=None):
        if ty is None:
            ty = self.choice(VALUE_TYPES + tuple(self.classes))
        name = self.fresh()
        value = make(ty) if make else self.expr(ty, scope)
        scope.bind(name, ty)
        if self.flip(10):  # chained assignment: both names share the value
            other = self.fresh()
            scope.bind(other, ty)
            return ["%s = %s = %s" % (name, other, value)]
        return ["%s = %s" % (name, value)]

    @staticmethod
    def must_bound(scope, name=None):
        """True where a re-assignment may run many times and compound.

        That is inside a loop, or in a function that may be called many
        times when the target outlives the call (``name`` declared
        ``nonlocal``/``global``, or an attribute: ``name`` is None).
        """
        if scope.loop:
            return True
        return scope.repeatable and (name is None or name in scope.declared)

    def bounded(self, ty, value, scope, name=None):
        """Keep re-assigned values from growing without bound (see must_bound)."""
        if not self.must_bound(scope, name):
            return value
        if ty == "int":
            return "(%s) %% %d" % (value, self.choice([97, 1000, 7]))
        if ty in ("str", "list"):
            return "(%s)[:%d]" % (value, self.choice([8, 3]))
        return value

    def assign_existing(self, scope):
        candidates = [n for n in scope.own if scope.vars.get(n) in VALUE_TYPES + tuple(self.classes)]
        if not candidates:
            return self.assign_new(scope)
        name = self.choice(sorted(candidates))
        ty = scope.vars[name]
        return ["%s = %s" % (name, self.bounded(ty, self.expr(ty, scope), scope, name))]

    def augassign(self, scope):
        choices = []
        for name in sorted(scope.own):
            ty = scope.vars.get(name)
            if ty == "int":
                ops = ["+=", "-=", "|=", "^=", "&=", "//=", "%="]
                if not self.must_bound(scope, name):
                    ops.append("*=")
                choices.append((name, ty, ops, "int"))
            elif ty == "float":
                choices.append((name, ty, ["+=", "-=", "*=", "/="], "float"))
            elif ty == "str":
                choices.append((name, ty, ["+="], "str"))
            elif ty == "list":
                choices.append((name, ty, ["+="], "list"))
            elif ty == "set":
                choices.append((name, ty, ["|=", "&=", "-="], "set"))
        if not choices:
            return self.assign_new(scope)
        name, ty, ops, rty = self.choice(choices)
        if ty in ("str", "list") and self.must_bound(scope, name):
            value = self.literal(ty)
        else:
            value = self.expr(rty, scope, 1)
        return ["%s %s %s" % (name, self.choice(ops), value)]

    def print_stmt(self, scope):
        args = [self.expr(self.choice(["int", "str", "float", "bool", "list"]), scope, 1)
                for _ in range(self.integer(1, 3))]
        extra = self.choice(["", "", ", sep='|'", ", end=' ~ '", ", file=sys.stderr"])
        return ["print(%s%s)" % (", ".join(args), extra)]

    def mutate(self, scope):
        lists = scope.names("list")
        dicts = scope.names("dict")
        sets = scope.names("set")
        options = []
        e = lambda ty: self.expr(ty, scope, 1)  # noqa: E731
        if lists:
            lst = lambda: self.choice(lists)  # noqa: E731
            options += [
                (3, lambda: ["%s.append(%s)" % (lst(), e("int"))]),
                (1, lambda: ["%s.pop()" % lst()]),
                (1, lambda: ["%s.insert(%s, %s)" % (lst(), e("int"), e("int"))]),
                (2, lambda: ["%s[%s] = %s" % (lst(), e("int"), e("int"))]),
                (1, lambda: ["%s.sort()" % lst()]),
                (1, lambda: ["del %s[%s]" % (lst(), e("int"))]),
                (1, lambda: ["%s.extend(%s)" % (lst(), self.literal("list"))]),
                (1, lambda: ["%s[%s:%s] = %s" % (lst(), e("int"), e("int"), self.literal("list"))]),
                (1, lambda: ["del %s[%s:%s]" % (lst(), e("int"), e("int"))]),
                (2, lambda: ["%s[%s] %s %s" % (lst(), e("int"), self.choice(["+=", "-=", "|="]),
                                               e("int"))]),
            ]
        if dicts:
            dct = lambda: self.choice(dicts)  # noqa: E731
            options += [
                (3, lambda: ["%s[%s] = %s" % (dct(), e("str"), e("int"))]),
                (1, lambda: ["%s.pop(%s, None)" % (dct(), e("str"))]),
                (1, lambda: ["del %s[%s]" % (dct(), e("str"))]),
                (1, lambda: ["%s.setdefault(%s, %s)" % (dct(), e("str"), e("int"))]),
                (1, lambda: ["%s.update(%s)" % (dct(), self.literal("dict"))]),
                (2, lambda: ["%s[%s] %s %s" % (dct(), e("str"), self.choice(["+=", "^="]),
                                               e("int"))]),
            ]
        if sets:
            options += [(1, lambda: ["%s.add(%s)" % (self.choice(sets), e("int"))]),
                        (1, lambda: ["%s.discard(%s)" % (self.choice(sets), e("int"))])]
        if not options:
            return [self.simple_stmt(scope)]
        return self.pick(options)

    def probe_stmt(self, scope):
        """An operation that may break the data model's rules, with its error logged.

        Operands are ``Odd`` objects (whose dunders return wrong types or
        ``NotImplemented``), class instances, or values of mismatched types:
        the interpreter's own operator dispatch must raise the same errors
        with the same messages, or return the same fallback results.
        """
        out = scope.log or "G"
        odd = "Odd(%s)" % self.choice(["True", "1", "-1", "'x'", "0", "[1]", "False",
                                       "2 ** 70", self.expr("int", scope, 1)])
        e = lambda ty: self.expr(ty, scope, 1)  # noqa: E731
        # "@" marks where the odd value goes (``odd`` may itself contain
        # "%", as in ``Odd(a % 3)``, so no %-formatting here).
        probes = [
            "bool(@)", "len(@)", "[10, 20, 30][@]", "list(@)", "@ == " + odd,
            "@ != 1", "@ < 3", "3 > @", "1 + @", "@ + 1", "2 in @", "@[1:2]",
            "@[::2]", 'f"{@:>3}"' if '"' not in odd else "format(@, '>3')", "str(@)",
            "not @", "(1 if @ else 2)", "@ and 1",
            "'%s' % @", "divmod(@, 1)", "range(@)", "hash(@)", "@ * 2", "abs(@)",
            "[0] * @", "'ab'[@]", "sorted([@, 1])", "max(@, 0)",
        ]
        expr = self.choice(probes).replace("@", odd)
        others = [
            lambda: "%s + %s" % (e("int"), e("str")),
            lambda: "%s * %s" % (e("str"), e("float")),
            lambda: "%s < %s" % (e("list"), e("str")),
            lambda: "None + %s" % e("int"),
            lambda: "(%s)[%s]" % (e("dict"), e("list")),
            lambda: "len(%s)" % e("int"),
            lambda: "int(%s)" % e("list"),
            lambda: "sum([%s])" % e("str"),
            lambda: "sorted([%s, %s])" % (e("int"), e("str")),
            lambda: "%r %% %s" % ("%d", e("str")),
            lambda: "[%s][0](%s)" % (e("str"), e("int")),
            # (parenthesized: ``0.nope`` does not even parse)
            lambda: "(%s).nope" % e(self.choice(VALUE_TYPES)),
            lambda: "{%s: 1}" % e("list"),
        ]
        objs = self.objects(scope)
        if objs:
            obj = self.choice(objs)
            others += [lambda: "%s + %s" % (obj, e("str")), lambda: "%s + %s" % (e("str"), obj),
                       lambda: "%s <= %s" % (obj, obj), lambda: "-%s" % obj,
                       lambda: "len(%s)" % obj, lambda: "%s[0]" % obj, lambda: "iter(%s)" % obj,
                       lambda: "%s(1)" % obj, lambda: "1 in %s" % obj, lambda: "%s < 1" % obj,
                       lambda: "%s.nope" % obj, lambda: "%s.v.w" % obj]
            if self.classes[scope.vars[obj]].has("eq"):  # unhashable; else an id-based hash
                others.append(lambda: "hash(%s)" % obj)
        if self.flip(50):
            expr = self.choice(others)()
        name = self.fresh("e")
        return ["try:",
                "    %s.append(%s)" % (out, expr),
                "except (TypeError, ValueError, OverflowError, IndexError, AttributeError) as %s:"
                % name,
                "    %s.append((type(%s).__name__, str(%s)))" % (out, name, name)]

    def iter_sentinel(self, scope):
        """``iter(callable, sentinel)`` over a Python and a C callable."""
        name, out = self.fresh(), scope.log or "G"
        items = ", ".join(self.expr("int", scope, 1) for _ in range(self.integer(1, 4)))
        return ["%s = [%s, 0, 7]" % (name, items),
                "%s.append(list(iter(lambda: %s.pop() if %s else 0, 0)))" % (out, name, name),
                "%s.append(list(iter(%s.pop, 7)) if %s else None)" % (out, name, name)]

    def del_stmt(self, scope):
        """``del`` a name bound earlier in this block (none captured by a def)."""
        if "<fn>" in scope.block_new:
            return [self.simple_stmt(scope)]
        names = [n for n in scope.block_new if n in scope.vars]
        if not names:
            return [self.simple_stmt(scope)]
        name = self.choice(names)
        del scope.vars[name]
        scope.own.discard(name)
        scope.block_new.remove(name)
        return ["del %s" % name]

    def walrus(self, scope):
        name = self.fresh()
        ty = self.choice(["int", "str", "list"])
        value = self.expr(ty, scope)
        scope.bind(name, ty)
        if scope.log:
            return ["%s.append((%s := %s))" % (scope.log, name, value)]
        return ["print((%s := %s))" % (name, value)]

    def call_stmt(self, scope):
        fns = [(n, t) for n, t in scope.vars.items() if isinstance(t, tuple) and t[0] == "fn"]
        if not fns:
            return [self.simple_stmt(scope)]
        name, t = self.choice(fns)
        return [self.call(name, t[1], scope, 2)]

    # compound statements
    def if_stmt(self, scope, depth):
        lines = ["if %s:" % self.cond(scope, 2)]
        lines += _indent(self.block(scope.child(), depth - 1))
        for _ in range(self.choice([0, 0, 1, 2])):
            lines.append("elif %s:" % self.cond(scope, 2))
            lines += _indent(self.block(scope.child(), depth - 1))
        if self.flip(50):
            lines.append("else:")
            lines += _indent(self.block(scope.child(), depth - 1))
        return lines

    def for_stmt(self, scope, depth):
        inner = scope.child(loop=scope.loop + 1)
        var = self.fresh("i")
        if self.flip(20):
            source = "%s[:%d]" % (self.atom("str", scope), _LOOP_CAP)
            inner.vars[var] = "str"
        elif self.flip(15):
            source = "list(%s)[:%d]" % (self.atom("dict", scope), _LOOP_CAP)
            inner.vars[var] = "str"
        else:
            source = self.iter_source(scope, 2)
            inner.vars[var] = "int"
        lines = ["for %s in %s:" % (var, source)]
        lines += _indent(self.block(inner, depth - 1))
        if self.flip(30):
            lines.append("else:")
            lines += _indent(self.block(scope.child(), depth - 1))
        return lines

    def while_stmt(self, scope, depth):
        counter = self.fresh("w")
        scope.vars[counter] = "int"  # readable, never assigned by the body
        inner = scope.child(loop=scope.loop + 1)
        cond = "%s < %d" % (counter, self.integer(1, 5))
        if self.flip(60):
            cond += " and %s" % self.cond(inner, 1)
        lines = ["%s = 0" % counter, "while %s:" % cond, "    %s += 1" % counter]
        lines += _indent(self.block(inner, depth - 1))
        if self.flip(30):
            lines.append("else:")
            lines += _indent(self.block(scope.child(), depth - 1))
        return lines

    # exceptions
    def exc_type(self, for_raise=True):
        names = list(self.BUILTIN_RAISE) + self.exc_classes
        if not for_raise:
            names += ["Exception", "TypeError", "(KeyError, IndexError)",
                      "(ValueError, ZeroDivisionError)", "BaseException"]
        return self.choice(names)

    def new_exception(self, scope):
        ty = self.exc_type()
        args = ", ".join(self.expr(self.choice(["int", "str"]), scope, 1)
                         for _ in range(self.choice([1, 0, 2])))
        return "%s(%s)" % (ty, args)

    def raise_stmt(self, scope):
        options = [
            (5, lambda: "raise %s" % self.new_exception(scope)),
            (2, lambda: "raise %s from %s" % (self.new_exception(scope),
                                              self.new_exception(scope))),
            (1, lambda: "raise %s from None" % self.new_exception(scope)),
        ]
        options.append((1, lambda: "raise %s" % self.exc_type()))
        if scope.in_handler:
            options.append((4, lambda: "raise"))
            if scope.handler:
                options.append((1, lambda: "%s.add_note(%s); raise" % (
                    scope.handler, self.expr("str", scope, 1))))
                options.append((2, lambda: "raise %s from %s" % (
                    self.new_exception(scope), scope.handler)))
                options.append((1, lambda: "raise %s" % scope.handler))
        text = self.pick(options)
        if self.flip(75):
            return ["if %s:" % self.cond(scope, 1), "    " + text]
        return [text]

    def try_stmt(self, scope, depth):
        body = self.block(scope.child(), depth - 1)
        if self.flip(60):  # at a statement boundary: first or last
            if self.flip(50):
                body = self.raise_stmt(scope) + body
            else:
                body = body + self.raise_stmt(scope)
        lines = ["try:"] + _indent(body)
        handlers = self.choice([1, 1, 2, 0, 3])
        for i in range(handlers):
            inner = scope.child(in_handler=True)
            kind = self.integer(0, 3)
            if kind == 0 or kind == 3 and i < handlers - 1:
                name = self.fresh("e")
                lines.append("except %s as %s:" % (self.exc_type(False), name))
                inner.vars[name] = "exc"
                inner.handler = name
            elif kind == 1:
                lines.append("except %s:" % self.exc_type(False))
            elif kind == 2:
                lines.append("except (%s, %s):" % (self.exc_type(), self.exc_type()))
            else:
                lines.append("except:")
            lines += _indent(self.block(inner, depth - 1))
        if handlers and self.flip(30):
            lines.append("else:")
            lines += _indent(self.block(scope.child(), depth - 1))
        if not handlers or self.flip(40):
            lines.append("finally:")
            lines += _indent(self.block(scope.child(), depth - 1))
        return lines

    def try_star(self, scope, depth):
        members = []
        for _ in range(self.integer(1, 3)):
            if self.flip(20):
                members.append("ExceptionGroup('inner', [%s])" % self.new_exception(scope))
            else:
                members.append(self.new_exception(scope))
        body = self.pick([
            (3, lambda: ["raise ExceptionGroup(%s, [%s])" % (self.expr("str", scope, 1),
                                                            ", ".join(members))]),
            (1, lambda: ["raise %s" % self.new_exception(scope)]),
            (2, lambda: self.block(scope.child(), 1)),
        ])
        lines = ["try:"] + _indent(body)
        for _ in range(self.integer(1, 2)):
            inner = scope.child(in_handler=True, star=True, loop=0, ret=None)
            ty = self.exc_type(False).replace("BaseException", "Exception")
            if self.flip(60):
                name = self.fresh("eg")
                lines.append("except* %s as %s:" % (ty, name))
                inner.vars[name] = "excgroup"
            else:
                lines.append("except* %s:" % ty)
            stmts = []
            for _ in range(self.integer(1, 2)):
                stmts += self.pick([
                    (4, lambda: [self.simple_stmt(inner)]),
                    (1, lambda: self.raise_stmt(inner.child(handler=None))),
                    (1, lambda: self.assign_new(inner)),
                ])
            lines += _indent(stmts)
        if self.flip(30):
            lines.append("finally:")
            lines += _indent([self.simple_stmt(scope)])
        return lines

    def with_stmt(self, scope, depth):
        items = []
        inner = scope.child()
        for _ in range(self.choice([1, 1, 2])):
            name = self.fresh("m")
            if self.flip(30):
                items.append("cm(%s) as %s" % (self.expr("str", scope, 1), name))
            else:
                items.append("CM(%s, %s) as %s" % (self.expr("str", scope, 1),
                                                   self.choice(["False", "True"]), name))
            inner.vars[name] = "str"
        return ["with %s:" % ", ".join(items)] + _indent(self.block(inner, depth - 1))

    # closures
    def def_stmt(self, scope, depth):
        name = self.fresh("g")
        params = [(self.fresh("p"), self.choice(["int", "int", "str", "list", "float"]))
                  for _ in range(self.integer(0, 2))]
        ret = self.choice(["int", "int", "str", "list", "bool"])
        inner = scope.child(loop=0, max_loops=1, in_handler=False, handler=None, star=False,
                            ret=ret, generator=False, fn_depth=scope.fn_depth + 1,
                            repeatable=True, declared=frozenset())
        inner.own = {p for p, _ in params}
        inner.nonlocal_ok = frozenset(n for n in scope.own if scope.vars.get(n) in
                                      VALUE_TYPES and n not in scope.globals_declared)
        inner.globals_declared = frozenset()
        header = []
        defaults = []
        for i, (p, t) in enumerate(params):
            inner.vars[p] = t
            if i == len(params) - 1 and self.flip(30):
                defaults.append("%s=%s" % (p, self.expr(t, scope, 1)))
            else:
                defaults.append(p)
        declared = set()
        if inner.nonlocal_ok and self.flip(60):
            var = self.choice(sorted(inner.nonlocal_ok))
            header.append("nonlocal %s" % var)
            declared.add(var)
        if self.flip(25):
            header.append("global counter")
            declared.add("counter")
            inner.globals_declared = frozenset({"counter"})
        inner.own |= declared
        inner.declared = frozenset(declared)
        body = header + self.block(inner, depth - 1)
        body.append("return %s" % self.expr(ret, inner))
        scope.vars[name] = _fn_type([t for _, t in params], ret)
        scope.block_new.append("<fn>")
        lines = ["def %s(%s):" % (name, ", ".join(defaults))] + _indent(body)
        call = [] if self.flip(50) else ["%s.append(%s)" % (scope.log or "G",
                                                            self.call(name, [t for _, t in params],
                                                                      scope, 2))]
        return lines + call

    def lambda_stmt(self, scope):
        name = self.fresh("h")
        p = self.fresh("p")
        pty = self.choice(["int", "str"])
        ret = self.choice(["int", "bool", "str"])
        inner = scope.child()
        inner.vars[p] = pty
        body = self.expr(ret, inner, 2)
        scope.vars[name] = _fn_type([pty], ret)
        scope.block_new.append("<fn>")
        return ["%s = lambda %s: %s" % (name, p, body)]

    def late_binding(self, scope):
        name = self.fresh("v")
        var = self.fresh("c")
        return ["%s = [(lambda: %s * 2) for %s in range(%d)]" % (name, var, var,
                                                                  self.integer(0, 3)),
                "%s.append([h() for h in %s])" % (scope.log or "G", name)]

    # generators
    def def_generator(self, scope, depth):
        name = self.fresh("gen")
        n = self.fresh("n")
        inner = scope.child(loop=0, max_loops=1, in_handler=False, handler=None, star=False,
                            ret="int", generator=True, fn_depth=scope.fn_depth + 1,
                            repeatable=True, declared=frozenset(), yields=[],
                            globals_declared=frozenset())
        inner.own = {n}
        inner.vars[n] = "int"
        inner.nonlocal_ok = frozenset()
        body = self.block(inner, depth - 1, 1, 3)
        if not inner.yields:
            body.insert(0, "yield %s" % self.expr("int", inner, 1))
        if self.flip(70):
            body.append("return %s" % self.expr("int", inner, 1))
        scope.vars[name] = _fn_type(["int"], "int", kind="gen")
        scope.block_new.append("<fn>")
        return ["def %s(%s):" % (name, n)] + _indent(body)

    def yield_stmt(self, scope):
        scope.yields.append(1)
        options = [
            (5, lambda: ["yield %s" % self.expr("int", scope)]),
            (2, lambda: ["yield from %s" % self.expr("list", scope, 1)]),
        ]

        def received():
            name = self.fresh("r")
            scope.vars[name] = "any"
            return ["%s = yield %s" % (name, self.expr("int", scope, 1))]

        options.append((3, received))
        subgens = [(n, t) for n, t in scope.vars.items() if isinstance(t, tuple) and t[0] == "gen"]
        if subgens:
            def delegate():
                sub, t = self.choice(subgens)
                name = self.fresh("r")
                scope.vars[name] = "int"
                scope.own.add(name)
                return ["%s = yield from %s" % (name, self.call(sub, t[1], scope, 1))]
            options.append((4, delegate))
        return self.pick(options)

    def drive_generator(self, scope):
        gens = self.gen_calls(scope, 2)
        if not gens:
            return [self.simple_stmt(scope)]
        name = self.fresh("gv")
        out = scope.log or "G"
        lines = ["%s = %s" % (name, self.choice(gens)), "%s.append(next(%s, None))" % (out, name)]
        steps = []
        for _ in range(self.integer(1, 3)):
            steps.append(self.pick([
                (4, lambda: "%s.append(%s.send(%s))" % (out, name, self.expr("int", scope, 1))),
                (3, lambda: "%s.append(next(%s))" % (out, name)),
                (1, lambda: "%s.append(%s.throw(%s))" % (out, name, self.new_exception(scope))),
                (1, lambda: "%s.close()" % name),
                (1, lambda: "%s.append(list(%s))" % (out, name)),
            ]))
        if self.flip(70):
            stop = self.fresh("e")
            lines += ["try:"] + _indent(steps) + ["except StopIteration as %s:" % stop,
                                                  "    %s.append(('stop', %s.value))" % (out, stop)]
        else:
            lines += steps
        return lines

    # classes
    def object_stmt(self, scope):
        objs = self.objects(scope)
        if not objs:
            return self.assign_new(scope, self.choice(list(self.classes)))
        name = self.choice(objs)
        info = self.classes[scope.vars[name]]
        value = lambda: self.bounded("int", self.expr("int", scope, 1), scope)  # noqa: E731
        options = [(3, lambda: ["%s.v = %s" % (name, value())]),
                   (2, lambda: ["%s.v %s %s" % (name, self.choice(["+=", "-=", "^="]),
                                                self.expr("int", scope, 1))])]
        if info.has("prop"):
            options.append((2, lambda: ["%s.dbl = %s" % (name, value())]))
        if info.has("iadd") and name in scope.own:
            options.append((2, lambda: ["%s += %s" % (name, self.expr("int", scope, 1))]))
        options.append((2, lambda: ["%s.append(%s)" % (scope.log or "G", self.choice([
            "%s.v" % name, "type(%s).__name__" % name, "%s.cnt" % name,
            "getattr(%s, 'w', None)" % name]))]))
        if info.has("get") and scope.method_of is None:
            options.append((2, lambda: ["%s.append(%s.get(%s))" % (scope.log or "G", name,
                                                                    self.expr("int", scope, 1))]))
        return self.pick(options)

    def local_class(self, scope):
        """A class statement inside a function: class body and methods close over locals."""
        name, out = self.fresh("K"), scope.log or "G"
        ints = scope.names("int")
        outer = self.choice(ints) if ints else "0"
        body = ["z = %s" % self.expr("int", scope, 1),
                "def m(self, p):",
                "    return p + self.z + %s" % outer]
        base = ""
        if "C0" in self.classes and self.flip(50):
            base = "(C0)"
            body += ["def __init__(self, p=1):",
                     "    super().__init__(p + %s)" % outer,
                     "    self.k = __class__.__name__"]
        scope.block_new.append("<fn>")
        lines = ["class %s%s:" % (name, base)] + _indent(body)
        lines.append("%s.append(%s().m(%s))" % (out, name, self.expr("int", scope, 1)))
        if base:
            lines.append("%s.append(%s(%s).v)" % (out, name, self.expr("int", scope, 1)))
        lines.append("%s.append((%s.z, %s.__qualname__))" % (out, name, name))
        return lines

    # unpacking
    def unpack_stmt(self, scope):
        e = lambda ty, d=1: self.expr(ty, scope, d)  # noqa: E731

        def bind(*pairs):
            for name, ty in pairs:
                scope.bind(name, ty)

        def pair():
            t1, t2 = self.choice(VALUE_TYPES), self.choice(VALUE_TYPES)
            n1, n2 = self.fresh(), self.fresh()
            line = "%s, %s = %s, %s" % (n1, n2, e(t1), e(t2))
            bind((n1, t1), (n2, t2))
            return [line]

        def star_first():
            n1, n2 = self.fresh(), self.fresh()
            line = "%s, *%s = [%s, *%s]" % (n1, n2, e("int"), e("list"))
            bind((n1, "int"), (n2, "list"))
            return [line]

        def star_last():
            n1, n2, n3 = self.fresh(), self.fresh(), self.fresh()
            line = "*%s, %s, %s = (*%s, %s, %s)" % (n1, n2, n3, e("list"), e("int"), e("str"))
            bind((n1, "list"), (n2, "int"), (n3, "str"))
            return [line]

        def nested():
            n1, n2, n3 = self.fresh(), self.fresh(), self.fresh()
            line = "(%s, %s), %s = (%s, %s), %s" % (n1, n2, n3, e("int"), e("str"), e("float"))
            bind((n1, "int"), (n2, "str"), (n3, "float"))
            return [line]

        def risky():  # may raise ValueError: too many / not enough values
            n1, n2 = self.fresh(), self.fresh()
            line = "%s, %s = %s" % (n1, n2, e("list"))
            bind((n1, "int"), (n2, "int"))
            return [line]

        def swap():
            for ty in ("int", "str", "list"):
                names = scope.own_names(ty)
                if len(names) >= 2:
                    a, b = names[:2] if self.flip(50) else names[-2:]
                    return ["%s, %s = %s, %s" % (a, b, b, a)]
            return pair()

        def loop():
            if scope.loop >= scope.max_loops:
                return pair()
            inner = scope.child(loop=scope.loop + 1)
            n1, n2 = self.fresh("i"), self.fresh("i")
            head = self.pick([
                (2, lambda: ("enumerate(%s[:6])" % e("list"), "int", "int")),
                (2, lambda: ("list(%s.items())[:6]" % e("dict"), "str", "int")),
                (1, lambda: ("zip(%s, %s)" % (e("str"), e("list")), "str", "int")),
            ])
            inner.vars[n1], inner.vars[n2] = head[1], head[2]
            return (["for %s, %s in %s:" % (n1, n2, head[0])]
                    + _indent(self.block(inner, 0, 1, 2)))

        def star_call():
            name = self.fresh("g")
            out = scope.log or "G"
            return ["def %s(p, /, *rest, k=1, **kw):" % name,
                    "    return [p, len(rest), k, sorted(kw)]",
                    "%s.append(%s(%s, *%s, **%s))" % (out, name, e("int"), e("list"),
                                                      e("dict")),
                    "%s.append(%s(*%s, %s, k=%s))" % (out, name, "[%s]" % e("int"),
                                                     e("int"), e("int"))]

        def print_star():
            return ["print(*%s, sep=%s)" % (e("list"), e("str"))]

        return self.pick([(4, pair), (3, star_first), (2, star_last), (2, nested),
                          (1, risky), (2, swap), (2, loop), (2, star_call), (1, print_star)])

    # match
    def match_stmt(self, scope, depth):
        subject_types = ["int", "str", "list", "dict"] + list(self.classes)
        if self.flip(25):
            t1, t2 = self.choice(subject_types), self.choice(subject_types)
            subject = "(%s if %s else %s)" % (self.expr(t1, scope, 1), self.cond(scope, 1),
                                              self.expr(t2, scope, 1))
            types_ = [t1, t2]
        else:
            t1 = self.choice(subject_types)
            subject = self.expr(t1, scope, 1)
            types_ = [t1]
        lines = ["match %s:" % subject]
        for _ in range(self.integer(1, 4)):
            inner = scope.child()
            bound = {}
            ty = self.choice(types_) if self.flip(80) else self.choice(subject_types)
            self.last_pattern_class = None
            pattern = self.pattern(ty, bound, 2)
            if self.flip(25):
                name = self.fresh("m")
                pattern = "(%s) as %s" % (pattern, name)
                bound[name] = self.last_pattern_class or _pattern_type(pattern, ty)
            for n, t in bound.items():
                inner.vars[n] = t
                inner.own.add(n)
            guard = ""
            if self.flip(25):
                guard = " if %s" % self.cond(inner, 1)
            lines.append("    case %s%s:" % (pattern, guard))
            lines += _indent(self.block(inner, depth - 1, 1, 2), 2)
        if self.flip(60):
            inner = scope.child()
            if self.flip(50):
                lines.append("    case _:")
            else:
                name = self.fresh("m")
                inner.vars[name] = "any"
                lines.append("    case %s:" % name)
            lines += _indent(self.block(inner, depth - 1, 1, 2), 2)
        return lines

    def pattern(self, ty, bound, depth):
        """A refutable pattern for a subject of type ``ty``; names go to ``bound``."""
        def cap(t):
            name = self.fresh("m")
            bound[name] = t
            return name

        if ty == "int":
            return self.pick([
                (3, lambda: self.choice(["0", "1", "-1", "7", "100"])),
                (2, lambda: " | ".join(self.choice(["1", "2", "3", "5", "-4", "True"])
                                       for _ in range(self.integer(2, 3)))),
                (3, lambda: "int(%s)" % cap("int")),
                (1, lambda: "bool()"),
                (1, lambda: "int()"),
                (1, lambda: "str()"),
            ])
        if ty == "str":
            return self.pick([
                (3, lambda: repr(self.choice(["a", "", "ab", "xyz"]))),
                (2, lambda: "%r | %r" % (self.choice(["a", "b"]), self.choice(["", "zz"]))),
                (3, lambda: "str(%s)" % cap("str")),
                (1, lambda: "[%s, *%s]" % (cap("any"), cap("any"))),
            ])
        if ty == "list":
            def seq():
                parts = []
                starred = False
                for _ in range(self.integer(0, 3)):
                    kind = self.integer(0, 4)
                    if kind == 0 and not starred:
                        starred = True
                        parts.append("*%s" % (cap("list") if self.flip(60) else "_"))
                    elif kind == 1:
                        parts.append(self.choice(["0", "1", "3", "(1 | 2)", "_"]))
                    elif kind == 2 and depth > 0:
                        parts.append("int(%s)" % cap("int"))
                    else:
                        parts.append(cap("int"))
                if not parts:
                    return self.choice(["[]", "()"])
                if self.flip(50):
                    return "[%s]" % ", ".join(parts)
                return "(%s%s)" % (", ".join(parts), "," if len(parts) == 1 else "")
            return self.pick([(5, seq), (1, lambda: "list()"), (1, lambda: "[]")])
        if ty == "dict":
            def mapping():
                keys = sorted({self.choice(["'a'", "'b'", "'k'", "'z'"])
                               for _ in range(self.integer(0, 2))})
                parts = []
                for k in keys:
                    parts.append("%s: %s" % (k, cap("int") if self.flip(60)
                                             else self.choice(["0", "1", "_", "int()"])))
                if self.flip(30):
                    parts.append("**%s" % cap("dict"))
                return "{%s}" % ", ".join(parts)
            return self.pick([(5, mapping), (1, lambda: "dict()")])
        cls = self.choice([ty, self.classes[ty].top.name])
        info = self.classes[cls]
        parts = []
        if info.has("match_args") and self.flip(50):
            parts.append(cap("int") if self.flip(70) else self.choice(["0", "1"]))
        elif self.flip(60):
            parts.append("v=%s" % (cap("int") if self.flip(70) else self.choice(["0", "1"])))
        if info.base is not None and self.flip(30):
            parts.append("w=%s" % cap("int"))
        self.last_pattern_class = cls
        return "%s(%s)" % (cls, ", ".join(parts))

    # -- the module -----------------------------------------------------------------
    def module(self):
        lines = ["import sys", "import functools", "counter = 0", "G = []"]
        if self.has("exceptions"):
            lines += ["import contextlib", "import warnings"]
            self.exc_classes = ["E0", "E1", "E2"]
            lines += [
                "class E0(Exception):", "    pass",
                "class E1(E0):", "    pass",
                "class E2(ValueError):",
                "    def __init__(self, n=0, *rest):",
                "        super().__init__('E2', n, *rest)",
                "        self.n = n",
                "class CM:",
                "    def __init__(self, tag, suppress):",
                "        self.tag = tag",
                "        self.suppress = suppress",
                "    def __enter__(self):",
                "        G.append(('enter', self.tag))",
                "        return self.tag",
                "    def __exit__(self, et, ev, tb):",
                "        G.append(('exit', self.tag, et.__name__ if et else None))",
                "        return self.suppress",
                "@contextlib.contextmanager",
                "def cm(tag):",
                "    G.append(('in', tag))",
                "    try:",
                "        yield tag",
                "    finally:",
                "        G.append(('out', tag))",
            ]
        if self.has("classes") or self.has("expressions"):
            lines += _ODD_CLASS
        if self.has("classes") or (self.has("match") and self.flip(60)):
            lines += self.write_class("C0", None)
            if self.flip(60):
                lines += self.write_class("C1", self.classes["C0"])
        module_scope = self.function_scope({}, ret=None)
        if self.has("closures") or (self.has("generators") and self.flip(50)):
            for _ in range(self.integer(0, 2)):
                lines += self.module_function(module_scope)
        if self.has("generators"):
            for _ in range(self.integer(1, 2)):
                lines += self.module_generator(module_scope)
        params = dict(ENTRY_PARAMS[1:])
        scope = self.function_scope(params, ret="*")
        scope.vars.update({n: t for n, t in module_scope.vars.items() if isinstance(t, tuple)})
        scope.nonlocal_ok = frozenset()
        body = []
        if (self.has("closures") or self.has("control")) and self.flip(30):
            body.append("global counter")
            scope.own.add("counter")
            scope.globals_declared = frozenset({"counter"})
        body += self.block(scope, 3, 2, 5)
        body.append("return %s" % self.return_value(scope))
        lines.append("def f(%s):" % ", ".join(n for n, _ in ENTRY_PARAMS))
        lines += _indent(body)
        return "\n".join(lines) + "\n"

    def module_function(self, module_scope):
        name = self.fresh("helper")
        params = {self.fresh("p"): self.choice(["int", "str", "list"])
                  for _ in range(self.integer(1, 2))}
        ret = self.choice(["int", "str", "list", "bool"])
        scope = self.function_scope(params, ret=ret, log=None, fn_depth=1)
        scope.vars.update({n: t for n, t in module_scope.vars.items() if isinstance(t, tuple)})
        scope.max_loops = 1
        scope.repeatable = True
        body = []
        if self.flip(40):
            body.append("global counter")
            scope.own.add("counter")
            scope.globals_declared = scope.declared = frozenset({"counter"})
        body += self.block(scope, 2, 1, 3)
        body.append("return %s" % self.expr(ret, scope))
        module_scope.vars[name] = _fn_type(list(params.values()), ret)
        return ["def %s(%s):" % (name, ", ".join(params))] + _indent(body)

    def module_generator(self, module_scope):
        name = self.fresh("gen")
        scope = self.function_scope({"log": "log", "n": "int"}, ret="int", fn_depth=1)
        scope.vars.update({n: t for n, t in module_scope.vars.items() if isinstance(t, tuple)})
        scope.generator = True
        scope.max_loops = 1
        scope.repeatable = True
        body = []
        has_yield = False
        if self.flip(50):
            has_yield = True
            i = self.fresh("i")
            inner = scope.child(loop=1)
            inner.vars[i] = "int"
            loop_body = ["%s = yield %s" % (self.fresh("r"), self.expr("int", inner, 1))]
            rname = loop_body[0].split(" ")[0]
            inner.vars[rname] = "any"
            loop_body += self.block(inner, 1, 0, 2)
            body += ["for %s in range(n %% 4):" % i] + _indent(loop_body)
        if self.has("exceptions") and self.flip(50):
            has_yield = True
            inner = scope.child()
            body += ["try:"] + _indent(["yield %s" % self.expr("int", scope, 1)]
                                       + self.block(inner, 1, 0, 2))
            body += ["finally:", "    log.append('cleanup')"]
        body += self.block(scope, 2, 1, 3)
        if not (scope.yields or has_yield):
            body.append("yield n")
        body.append("return %s" % self.expr("int", scope, 1))
        module_scope.vars[name] = _fn_type(["log", "int"], "int", kind="gen")
        return ["def %s(log, n):" % name] + _indent(body)

    def return_expr(self, scope):
        if scope.ret == "*":
            return self.return_value(scope)
        return self.expr(scope.ret, scope)

    def return_value(self, scope):
        n = self.choice([1, 2, 1, 3])
        values = [self.expr(self.choice(VALUE_TYPES + tuple(self.classes)), scope)
                  for _ in range(n)]
        if n == 1:
            return values[0]
        return "(%s)" % ", ".join(values)
