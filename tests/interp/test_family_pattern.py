"""Differential tests: the ``pattern`` opcode family (``match``/``case``).

MATCH_MAPPING, MATCH_SEQUENCE, MATCH_KEYS, MATCH_CLASS (plus GET_LEN and
the COPY/SWAP juggling the compiler emits): literal, capture, wildcard,
value, group, sequence (with star), mapping (with ``**rest``), class
(positional via ``__match_args__``, keyword, builtins matching themselves),
or-, as- and guarded patterns, and their errors.
"""
import pytest

from pyinterp.testing import case, run_case

CLASSIFY = """
    import collections
    class Point:
        __match_args__ = ("x", "y")
        def __init__(self, x, y):
            self.x = x
            self.y = y
    class Point3(Point):
        __match_args__ = ("x", "y", "z")
        def __init__(self, x, y, z):
            super().__init__(x, y)
            self.z = z
    class Color:
        RED = "red"
        GREEN = "green"
    log = []
    def classify(subject):
        match subject:
            case None:
                return "literal None"
            case True:
                return "literal True"
            case 0 | 0.0:
                return "zero (or-pattern)"
            case -1:
                return "negative literal"
            case 1 + 2j:
                return "complex literal"
            case "hello" | b"bytes":
                return "string literal"
            case Color.RED:
                return "value pattern RED"
            case Point(x=0, y=0):
                return "origin (keyword class pattern)"
            case Point3(a, b, c) if a == b == c:
                return ("diagonal 3d", a)
            case Point(x, y) if x == y:
                return ("diagonal", x)
            case Point(x, (1 | 2) as y):
                return ("small y", x, y)
            case Point():
                return "some point"
            case bool(b):
                return ("bool", b)
            case int(n) if n > 100:
                return ("big int", n)
            case str() as s if len(s) > 3:
                return ("long str", s)
            case float(x) | int(x):
                return ("number", x)
            case []:
                return "empty sequence"
            case [x]:
                return ("one", x)
            case [1, *rest]:
                return ("starts with 1", rest)
            case [*init, "end"]:
                return ("ends with end", init)
            case [first, *_, last] if isinstance(first, str):
                return ("str-first", first, last)
            case (a, b) | [a, b, _]:
                return ("pair-or-triple", a, b)
            case {"type": "move", "dx": dx, **rest}:
                return ("move", dx, rest)
            case {"type": kind}:
                return ("typed", kind)
            case {}:
                return "other mapping"
            case _:
                return ("wildcard", type(subject).__name__)
"""

SUBJECTS = [
    "None", "True", "False", "0", "0.0", "-1", "1 + 2j", "'hello'", "b'bytes'", "'red'",
    "Point(0, 0)", "Point3(2, 2, 2)", "Point(3, 3)", "Point(5, 2)", "Point(5, 7)",
    "500", "7", "2.5", "'abcd'", "'ab'", "[]", "(9,)", "[1, 2, 3]", "['a', 'end']",
    "['s', 0, 0, 'z']", "(4, 5)", "[4, 5, 6]", "{'type': 'move', 'dx': 3, 'dy': 4}",
    "{'type': 'jump'}", "{'other': 1}", "{1, 2}", "collections.OrderedDict(type='od')",
    "collections.deque([1, 9])", "range(1, 4)", "'x'", "bytearray(b'ab')", "{}",
]


@pytest.mark.parametrize("subject", SUBJECTS)
def test_pattern_kinds(subject):
    run_case(case(CLASSIFY + "    def f():\n        return classify(%s)\n" % subject))


CASES = {
    "capture_binds_after_match_and_leaks": case("""
        def f(v):
            match v:
                case [x, y]:
                    pass
            return x, y
    """, args=([1, 2],), expect=(1, 2)),
    "no_case_matches": case("""
        def f(v):
            match v:
                case 1:
                    return "one"
            return "fell through"
    """, args=(2,), expect="fell through"),
    "guard_evaluated_after_binding": case("""
        log = []
        def check(v):
            log.append(v)
            return v > 1
        def f():
            out = []
            for v in (1, 2):
                match v:
                    case n if check(n):
                        out.append(("guard true", n))
                    case n:
                        out.append(("guard false", n))
            return out
    """),
    "match_args_too_many_positional": case("""
        class P:
            __match_args__ = ("a",)
        def f():
            match P():
                case P(1, 2):
                    pass
    """, raises=TypeError),
    "no_match_args": case("""
        class P:
            pass
        def f():
            match P():
                case P(1):
                    pass
    """, raises=TypeError),
    "match_args_not_tuple": case("""
        class P:
            __match_args__ = ["a"]
            a = 1
        def f():
            match P():
                case P(1):
                    pass
    """, raises=TypeError),
    "class_pattern_not_a_type": case("""
        notatype = 5
        def f():
            match 1:
                case notatype():
                    pass
    """, raises=TypeError),
    "duplicate_attribute_subpatterns": case("""
        class P:
            __match_args__ = ("a",)
            a = 1
        def f():
            match P():
                case P(x, a=y):
                    pass
    """, raises=TypeError),
    "builtin_self_match_too_many": case("""
        def f():
            match 5:
                case int(a, b):
                    pass
    """, raises=TypeError),
    "missing_attribute_is_no_match": case("""
        class P:
            __match_args__ = ("a", "b")
            a = 1
        def f():
            match P():
                case P(a, b):
                    return "matched"
                case P(a):
                    return ("partial", a)
    """, expect=("partial", 1)),
    "attribute_access_is_interpreted": case("""
        log = []
        class P:
            __match_args__ = ("v",)
            @property
            def v(self):
                log.append("property read")
                return 3
            def __getattr__(self, name):
                log.append(("getattr", name))
                if name == "w":
                    return 4
                raise AttributeError(name)
        def f():
            match P():
                case P(v, w=w, q=q):
                    return "no"
                case P(v, w=w):
                    return v, w
    """),
    "isinstance_check_honours_metaclass": case("""
        class Meta(type):
            def __instancecheck__(cls, inst):
                return inst == "duck"
        class Duck(metaclass=Meta):
            pass
        def f():
            out = []
            for s in ("duck", "goose"):
                match s:
                    case Duck():
                        out.append("duck-typed")
                    case _:
                        out.append("not")
            return out
    """, expect=["duck-typed", "not"]),
    "mapping_uses_get_and_duplicate_key_error": case("""
        log = []
        class M(dict):
            def get(self, key, default=None):
                log.append(key)
                return dict.get(self, key, default)
        def f():
            match M(a=1, b=2):
                case {"a": 1, "b": b}:
                    return b
    """, expect=2),
    "mapping_duplicate_keys": case("""
        class NS:
            K = "k"
        def f():
            match {"k": 1, "j": 2}:
                case {"k": 1, NS.K: 2}:
                    pass
    """, raises=ValueError),
    "mapping_rest_copy": case("""
        def f():
            d = {"a": 1, "b": 2, "c": 3}
            match d:
                case {"a": _, **rest}:
                    rest["z"] = 0
                    return rest, d
    """),
    "user_mapping_and_sequence_abc": case("""
        import collections.abc as abc
        class MyMap(abc.Mapping):
            def __init__(self, d): self.d = d
            def __getitem__(self, k): return self.d[k]
            def __iter__(self): return iter(self.d)
            def __len__(self): return len(self.d)
        class MySeq(abc.Sequence):
            def __getitem__(self, i):
                if i >= 3:
                    raise IndexError(i)
                return i * 10
            def __len__(self): return 3
        def f():
            out = []
            for s in (MyMap({"k": "v", "x": 1}), MySeq()):
                match s:
                    case {"k": v, **others}:
                        out.append(("map", v, others))
                    case [a, *b]:
                        out.append(("seq", a, b))
            return out
    """),
    "str_and_bytes_are_not_sequences": case("""
        def f():
            out = []
            for s in ("ab", b"ab", bytearray(b"ab"), ["a", "b"]):
                match s:
                    case [x, y]:
                        out.append(("seq", x, y))
                    case _:
                        out.append("not a sequence")
            return out
    """),
    "value_pattern_uses_eq": case("""
        log = []
        class Eq:
            def __eq__(self, other):
                log.append(other)
                return other == "yes"
        class NS:
            E = Eq()
        def f():
            out = []
            for s in ("no", "yes"):
                match s:
                    case NS.E:
                        out.append("matched")
                    case _:
                        out.append("missed")
            return out, log
    """),
    "nested_patterns": case("""
        def f(cmd):
            match cmd:
                case {"action": "draw", "shape": ("circle" | "disk") as shape, "at": [x, y]}:
                    return shape, x, y
                case {"action": "draw", "shape": [*points]} if len(points) > 2:
                    return "polygon", len(points)
            return "unknown"
    """, args=({"action": "draw", "shape": "disk", "at": (1, 2)},), expect=("disk", 1, 2)),
    "dataclass_match_args": case("""
        from dataclasses import dataclass
        @dataclass
        class Item:
            name: str
            qty: int = 1
        def f():
            match Item("pen", 3):
                case Item(name, qty=q) if q > 2:
                    return name, q
    """, expect=("pen", 3)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_patterns(name):
    run_case(CASES[name])
