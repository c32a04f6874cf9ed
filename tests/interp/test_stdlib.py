"""Differential tests on real standard-library code.

Each test runs a function that drives a pure-Python stdlib module natively
and under ``pyinterp.interpret``, and compares everything observable: the
return value, the exception (type, message, ``__cause__``/``__context__``),
printed output on stdout and stderr, and ``sys.exc_info()`` afterwards
(:mod:`pyinterp.testing.differential` does the comparing).  Nobody here
wrote the code under test, and the whole call tree runs inside the
interpreter: ``test_call_tree_is_interpreted`` checks that with
``sys.setprofile``.

Values returned are mostly plain data (strings, tuples, lists) so that the
comparison never depends on how the differential runner renders objects.
"""
import _pydecimal
import argparse
import ast
import collections
import configparser
import copy
import ctypes
import dataclasses
import difflib
import dis
import email.feedparser
import email.generator
import email.headerregistry
import enum
import fractions
import functools
import gc
import html.parser
import io
import ipaddress
import json
import json.decoder
import json.scanner
import locale
import logging
import os
import pprint
import re
import re._compiler
import re._parser
import shlex
import statistics
import string
import sys
import textwrap
import tokenize
import types
import typing
import urllib.parse
import warnings

import pytest

import pyinterp
from pyinterp import config
from pyinterp.testing.differential import canonical, diff_outcomes, run


def same(fn, *args):
    """Run ``fn(*args)`` natively and interpreted; assert identical outcomes.

    The native run must return (a scenario that fails natively by mistake
    must not pass silently); the native return value is returned.
    """
    native = run(fn, args)
    interpreted = run(fn, args, interpreted=True)
    lines = diff_outcomes(native, interpreted)
    if lines and native.raised is None and interpreted.raised is None \
            and type(native.value) is list and type(interpreted.value) is list:
        # Scenarios return a list of results: point at the first that differs.
        for i, (a, b) in enumerate(zip(native.value, interpreted.value)):
            if canonical(a) != canonical(b):
                lines = ["result [%d] differs:" % i, "   native:      %s" % canonical(a),
                         "   interpreted: %s" % canonical(b)] + [
                    line for line in lines if not line.startswith(("returned", "   "))]
                break
    assert not lines, "pyinterp diverges from CPython on %s:\n%s\n%s" % (
        fn.__name__, "\n".join(lines), interpreted.traceback)
    assert native.raised is None, native.traceback
    return native.value


def attempt(fn, *args, **kwargs):
    """``fn(*args, **kwargs)``, or the exception's type, message and chain."""
    try:
        return fn(*args, **kwargs)
    except Exception as exc:
        return describe(exc)


def describe(exc):
    chain = []
    while exc is not None and len(chain) < 4:
        chain.append((type(exc).__name__, re.sub(r"0x[0-9a-f]+", "0x?", str(exc))))
        exc = exc.__cause__ or exc.__context__
    return ("raised",) + tuple(chain)


# ---------------------------------------------------------------------------
# textwrap
# ---------------------------------------------------------------------------
TEXT = ("The quick brown fox jumps over the lazy dog; pack my box with five "
        "dozen liquor jugs.  Sphinx of black quartz, judge my vow!  "
        "Supercalifragilisticexpialidocious-hyphenated-words\tand\ttabs. ")


def textwrap_scenarios(text):
    out = []
    for width in (12, 25, 40, 79):
        wrapper = textwrap.TextWrapper(
            width=width, initial_indent="* ", subsequent_indent="  ",
            break_long_words=width < 30, break_on_hyphens=width != 25,
            fix_sentence_endings=True, expand_tabs=True, tabsize=4)
        out.append(wrapper.wrap(text * 2))
    out.append(textwrap.fill(text, width=30, max_lines=3, placeholder=" [..]"))
    out.append(textwrap.shorten(text, width=50))
    out.append(textwrap.dedent("    def f():\n        return 1\n\n    x = f()\n"))
    out.append(textwrap.indent("a\n\nb\n  c\n", "> ", lambda line: True))
    out.append(textwrap.indent("a\n\nb\n", "+ "))
    out.append(textwrap.wrap("", 10))
    out.append(attempt(textwrap.wrap, "abc", 0))
    out.append(attempt(textwrap.fill, text, width=5, max_lines=1, placeholder="[...........]"))
    return out


def test_textwrap():
    result = same(textwrap_scenarios, TEXT)
    assert result[-2][0] == "raised" and "invalid width" in result[-2][1][1]


# ---------------------------------------------------------------------------
# difflib
# ---------------------------------------------------------------------------
OLD = """\
import os
def f(a, b):
    return a + b

def g():
    pass
class K:
    x = 1
""".splitlines(keepends=True)
NEW = """\
import os
import sys
def f(a, b, c=0):
    return a + b + c

class K:
    x = 2
    y = 3
""".splitlines(keepends=True)


def difflib_scenarios(old, new):
    out = []
    out.append("".join(difflib.unified_diff(old, new, "a.py", "b.py", n=1)))
    out.append("".join(difflib.context_diff(old, new, "a.py", "b.py")))
    out.append(list(difflib.ndiff(old, new)))
    matcher = difflib.SequenceMatcher(None, "private Thread currentThread;",
                                      "private volatile Thread currentThread;")
    out.append((matcher.ratio(), matcher.quick_ratio(), matcher.get_opcodes(),
                matcher.get_matching_blocks()))
    matcher = difflib.SequenceMatcher(lambda c: c == " ", "a b c d e f g", "a c b d f e g")
    out.append(list(matcher.get_grouped_opcodes(1)))
    out.append(difflib.get_close_matches("appel", ["ape", "apple", "peach", "puppy"]))
    out.append(difflib.get_close_matches("wheel", keyword_names(), n=4, cutoff=0.3))
    out.append(list(difflib.restore(difflib.ndiff(old, new), 2)))
    difflib.HtmlDiff._default_prefix = 0  # a class-level counter: same ids in each run
    html = difflib.HtmlDiff(wrapcolumn=20).make_table(old, new, context=True, numlines=1)
    out.append(html)
    return out


def keyword_names():
    import keyword

    return keyword.kwlist


def test_difflib():
    result = same(difflib_scenarios, OLD, NEW)
    assert result[0].startswith("--- a.py")


# ---------------------------------------------------------------------------
# json (pure-Python encoder and scanner)
# ---------------------------------------------------------------------------
class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y


class PointEncoder(json.JSONEncoder):
    def default(self, o):
        if isinstance(o, Point):
            return {"__point__": [o.x, o.y]}
        if isinstance(o, (set, frozenset)):
            return sorted(o)
        return super().default(o)


def python_decoder(**kwargs):
    decoder = json.JSONDecoder(**kwargs)
    decoder.scan_once = json.scanner.py_make_scanner(decoder)
    decoder.parse_string = json.decoder.py_scanstring
    return decoder


def json_scenarios():
    data = {
        "name": "caf\u00e9 \u2603 \"quoted\"\n\ttab",
        "nums": [0, -1, 2 ** 70, 1.5, -0.0, 1e300, float("inf")],
        "nested": {"empty_list": [], "empty_dict": {}, "bools": [True, False, None]},
        "points": [Point(1, 2), Point(-3, 4.5)],
        "set": {3, 1, 2},
        7: "int key",
        2.5: "float key",
        None: "null key",
    }
    out = []
    pretty = PointEncoder(indent=2, sort_keys=False).encode(data)
    out.append(pretty)
    out.append(PointEncoder(indent="\t", ensure_ascii=False, separators=(",", ": ")).encode(data))
    out.append(list(PointEncoder(indent=1).iterencode([data["nested"], "x"])))
    out.append(attempt(json.JSONEncoder(indent=2, allow_nan=False).encode, [float("nan")]))
    out.append(attempt(json.JSONEncoder(indent=2).encode, {(1, 2): 3}))
    out.append(json.JSONEncoder(indent=2, skipkeys=True).encode({(1, 2): 3, "k": [1]}))
    circular = [1]
    circular.append(circular)
    out.append(attempt(json.JSONEncoder(indent=2).encode, circular))
    out.append(attempt(json.JSONEncoder(indent=2).encode, [object()]))

    decoder = python_decoder()
    decoded = decoder.decode(pretty.replace("Infinity", "1e999"))
    out.append(decoded)
    hooked = python_decoder(object_pairs_hook=lambda pairs: pairs,
                            parse_float=lambda s: ("float", s),
                            parse_int=lambda s: ("int", s),
                            parse_constant=lambda s: ("const", s))
    out.append(hooked.decode('{"a": [1, 2.5e3, -Infinity, NaN], "b": {"c": null}}'))
    out.append(python_decoder(object_hook=lambda d: sorted(d.items())).decode(
        '[{"z": 1, "a": {"q": "\\ud83d\\ude00"}}]'))
    out.append(json.decoder.py_scanstring('"ab\\u00e9\\n\\"c" tail', 1))
    out.append(json.decoder.py_scanstring('"raw\tcontrol"', 1, False))
    for bad in ('{"a": 1,}', '[1, 2', '"unterminated', '{"a" 1}', '[1] x',
                '"\\uZZZZ"', '"\\q"', '', '{"a":\n  [tru]}', '"\x01"'):
        try:
            python_decoder().decode(bad)
        except json.JSONDecodeError as exc:
            out.append((str(exc), exc.msg, exc.pos, exc.lineno, exc.colno))
    return out


def test_json():
    result = same(json_scenarios)
    assert '"__point__"' in result[0]


# ---------------------------------------------------------------------------
# argparse
# ---------------------------------------------------------------------------
class KeyValue(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        items = dict(getattr(namespace, self.dest) or {})
        for value in values:
            key, sep, val = value.partition("=")
            if not sep:
                raise argparse.ArgumentError(self, "expected KEY=VALUE, got %r" % value)
            items[key] = val
        setattr(namespace, self.dest, items)


def port(text):
    value = int(text)
    if not 0 < value < 65536:
        raise argparse.ArgumentTypeError("port out of range: %d" % value)
    return value


def build_parser():
    parser = argparse.ArgumentParser(
        prog="deploy", description="Deploy things.", epilog="Have fun.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter, fromfile_prefix_chars=None)
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more output")
    parser.add_argument("--port", type=port, default=8080, help="listen port")
    parser.add_argument("--define", "-D", nargs="+", action=KeyValue, metavar="K=V")
    parser.add_argument("--tag", action="append", default=[], help="tags")
    parser.add_argument("--level", choices=["low", "high"], default="low")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--fast", action="store_true")
    group.add_argument("--safe", action="store_false", dest="fast")
    parser.add_argument("--version", action="version", version="%(prog)s 1.0")
    subparsers = parser.add_subparsers(dest="command", required=True, title="commands")
    push = subparsers.add_parser("push", help="push a build", aliases=["p"])
    push.add_argument("target")
    push.add_argument("files", nargs="*", default=["a.out"])
    push.add_argument("--ratio", type=float, default=0.5)
    pull = subparsers.add_parser("pull", help="pull a build")
    pull.add_argument("source", nargs="?", default="origin")
    pull.add_argument("--depth", type=int, required=True)
    return parser


def argparse_scenarios():
    parser = build_parser()
    out = [parser.format_help(), parser.format_usage()]
    good = [
        ["-vv", "--port", "99", "-D", "a=1", "b=2", "--tag", "x", "--tag=y", "push", "srv",
         "f1", "f2", "--ratio", "0.25"],
        ["--safe", "--level", "high", "pull", "--depth", "3"],
        ["p", "host"],
        ["-v", "push", "--", "-weird", "--ratio"],
    ]
    for argv in good:
        out.append(sorted(vars(parser.parse_args(argv)).items()))
    out.append(parser.parse_known_args(["push", "t", "--unknown", "1"])[1])
    bad = [
        [], ["--port", "0", "push", "t"], ["--port", "abc", "push", "t"],
        ["-D", "novalue", "push", "t"], ["--level", "mid", "push", "t"],
        ["--fast", "--safe", "push", "t"], ["pull"], ["nosuch"], ["--bogus", "push", "t"],
        ["--version"], ["push", "--help"], ["--verb", "push", "t"],
    ]
    for argv in bad:
        try:
            result = parser.parse_args(argv)
        except SystemExit as exc:
            out.append(("exit", exc.code))
        else:
            out.append(("ok", sorted(vars(result).items())))
    plain = argparse.ArgumentParser(prog="p", exit_on_error=False, add_help=False)
    plain.add_argument("n", type=int)
    out.append(attempt(plain.parse_args, ["x"]))
    out.append(attempt(plain.add_argument, "n"))
    return out


def test_argparse():
    result = same(argparse_scenarios)
    assert ("exit", 2) in result and ("exit", 0) in result


# ---------------------------------------------------------------------------
# dataclasses
# ---------------------------------------------------------------------------
def dataclass_scenarios():
    @dataclasses.dataclass(order=True)
    class Version:
        major: int
        minor: int = 0
        patch: int = 0
        label: str = dataclasses.field(default="", compare=False, repr=False)

        def __post_init__(self):
            if self.major < 0:
                raise ValueError("negative major version")

        @property
        def text(self):
            return "%d.%d.%d" % (self.major, self.minor, self.patch)

    @dataclasses.dataclass(frozen=True)
    class Pair:
        left: typing.Any
        right: typing.Any = None

    @dataclasses.dataclass
    class Inventory:
        owner: str
        items: list = dataclasses.field(default_factory=list)
        counts: dict = dataclasses.field(default_factory=dict)
        total: int = dataclasses.field(init=False, default=0)
        scale: dataclasses.InitVar[int] = 1
        KIND: typing.ClassVar[str] = "inv"

        def __post_init__(self, scale):
            self.total = scale * len(self.items)

    @dataclasses.dataclass(kw_only=True, slots=True)
    class Options:
        verbose: bool = False
        name: str

    @dataclasses.dataclass
    class Derived(Version):
        extra: tuple = (1,)

    out = []
    versions = [Version(1, 2, 3), Version(1, 0), Version(0, 9, 9, "rc"), Version(1, 2, 3, "x")]
    out.append([repr(v) for v in sorted(versions)])
    out.append([v.text for v in versions])
    out.append((versions[0] == versions[3], versions[1] < versions[0], versions[2] >= versions[1]))
    out.append(attempt(Version, -1))
    out.append(attempt(Version, 1, 2, 3, "l", 5))
    pair = Pair(Pair(1, [2, 3]), {"k": Version(4)})
    out.append(repr(pair))
    out.append(dataclasses.asdict(pair))
    out.append(dataclasses.astuple(pair))
    out.append(dataclasses.asdict(pair, dict_factory=lambda kv: list(kv)))
    out.append(repr(dataclasses.replace(pair, right=5)))
    out.append(attempt(setattr, pair, "left", 0))
    out.append(attempt(delattr, pair, "left"))
    out.append((hash(Pair(1, 2)) == hash(Pair(1, 2)), attempt(hash, pair)))
    inventory = Inventory("me", ["a", "b"], scale=3)
    out.append((repr(inventory), inventory.total, Inventory.KIND))
    out.append(attempt(dataclasses.replace, inventory, total=1))
    out.append(repr(dataclasses.replace(inventory, owner="you", scale=2)))
    out.append([(f.name, f.type if isinstance(f.type, str) else repr(f.type), f.init, f.compare)
                for f in dataclasses.fields(Inventory)])
    options = Options(name="n")
    out.append((repr(options), Options.__slots__, hasattr(options, "__dict__")))
    out.append(attempt(Options, True, "x"))
    out.append(repr(Derived(1, extra=(2,))))
    out.append(dataclasses.is_dataclass(Derived) and not dataclasses.is_dataclass(1))
    out.append(attempt(dataclasses.asdict, 1))
    Dynamic = dataclasses.make_dataclass(
        "Dynamic", ["a", ("b", int), ("c", list, dataclasses.field(default_factory=list))],
        namespace={"total": lambda self: self.a + self.b})
    dynamic = Dynamic(1, 2)
    out.append((repr(dynamic), dynamic.total()))

    def bad_default():
        @dataclasses.dataclass
        class Bad:
            x: list = []
        return Bad

    out.append(attempt(bad_default))

    def bad_order():
        @dataclasses.dataclass
        class Bad:
            x: int = 0
            y: int
        return Bad

    out.append(attempt(bad_order))
    return out


def test_dataclasses():
    result = same(dataclass_scenarios)
    assert result[0][0].endswith("Version(major=0, minor=9, patch=9)")


# ---------------------------------------------------------------------------
# enum
# ---------------------------------------------------------------------------
def enum_scenarios():
    class Color(enum.Enum):
        RED = 1
        GREEN = 2
        BLUE = 3
        CRIMSON = 1  # an alias

        @property
        def lower(self):
            return self.name.lower()

        @classmethod
        def _missing_(cls, value):
            if isinstance(value, str):
                return cls[value.upper()]
            return None

    class Perm(enum.Flag):
        R = 4
        W = 2
        X = 1
        RW = R | W

    class Level(enum.IntEnum):
        LOW = enum.auto()
        MID = enum.auto()
        HIGH = enum.auto()

    class Mode(enum.StrEnum):
        READ = enum.auto()
        WRITE = "w"

    class Planet(enum.Enum):
        MERCURY = (3.303e+23, 2.4397e6)
        EARTH = (5.976e+24, 6.37814e6)

        def __init__(self, mass, radius):
            self.mass = mass
            self.radius = radius

        @property
        def gravity(self):
            return 6.673e-11 * self.mass / (self.radius * self.radius)

    class Bits(enum.IntFlag, boundary=enum.KEEP):
        A = 1
        B = 2

    out = []
    out.append([repr(c) for c in Color])
    out.append([(name, repr(member)) for name, member in Color.__members__.items()])
    out.append((Color(2).name, Color["BLUE"].value, Color.CRIMSON is Color.RED, Color("green").lower))
    out.append(attempt(Color, 7))
    out.append(attempt(Color.__getitem__, "PURPLE"))
    out.append((repr(Perm.R | Perm.W), repr(Perm(7)), [p.name for p in Perm], repr(~Perm.R),
                Perm.RW in Perm(7), bool(Perm(0)), repr(Perm.R & Perm.X), list(Perm(6))))
    out.append(attempt(Perm, 8))
    out.append((Level.MID + 1, Level.HIGH > Level.LOW, str(Level.MID), format(Level.LOW),
                repr(Level(3)), sorted([Level.HIGH, Level.LOW])))
    out.append((Mode.READ, str(Mode.WRITE), Mode("w") is Mode.WRITE, Mode.READ.upper()))
    out.append([(p.name, round(p.gravity, 3)) for p in Planet])
    out.append((repr(Bits(5)), int(Bits.A | Bits.B)))
    Animal = enum.Enum("Animal", "ANT BEE CAT", start=10)
    out.append([(a.name, a.value) for a in Animal])
    Shape = enum.IntEnum("Shape", [("SQUARE", 4), ("TRIANGLE", 3)])
    out.append(sorted(Shape))

    def duplicate():
        @enum.unique
        class Dup(enum.Enum):
            A = 1
            B = 1
        return Dup

    out.append(attempt(duplicate))

    def reuse_name():
        class Twice(enum.Enum):
            A = 1
            A = 2  # noqa: PIE794
        return Twice

    out.append(attempt(reuse_name))

    def extend():
        class More(Color):
            PINK = 9
        return More

    out.append(attempt(extend))
    out.append(attempt(setattr, Color, "RED", 5))
    return out


def test_enum():
    result = same(enum_scenarios)
    assert result[0][0] == "<Color.RED: 1>"


# ---------------------------------------------------------------------------
# fractions and statistics
# ---------------------------------------------------------------------------
def fraction_scenarios():
    F = fractions.Fraction
    values = [F(3, 4), F("-1/3"), F(0.125), F("1.25e-2"), F(7), F(2, -6), F("  10/4 ")]
    out = [[str(v) for v in values]]
    total = F(0)
    for v in values:
        total += v
    out.append(str(total))
    a, b = F(22, 7), F(-5, 11)
    out.append([str(x) for x in (a + b, a - b, a * b, a / b, a // b, a % b, -a, abs(b),
                                 a ** 2, a ** -2, b ** 3)])
    out.append((a > b, a == F(44, 14), a == 22 / 7, b < 0, a + 1.5, 2 ** F(1, 2),
                divmod(a, b), float(b), int(a), round(a, 2), round(F(5, 2)), hash(F(1, 2)) == hash(0.5)))
    out.append(str(F(3.14159265358979).limit_denominator(1000)))
    out.append(F(123, 456).as_integer_ratio())
    out.append([attempt(F, *args) for args in [(1, 0), ("1/x",), ("",), (1.5, 2), (float("nan"),)]])
    out.append(attempt(lambda: F(1, 3) ** F(1, 2)))
    out.append(attempt(lambda: F(0) ** -1))
    return out


def test_fractions():
    same(fraction_scenarios)


def statistics_scenarios():
    data = [2.5, 3.25, 5.5, 11.25, 11.75, 1, 4, 4]
    F = fractions.Fraction
    out = [statistics.mean(data), statistics.fmean(data, weights=range(1, 9)),
           statistics.median(data), statistics.median_low(data), statistics.median_high(data),
           statistics.median_grouped([1, 2, 2, 3, 4, 4, 4, 4, 4, 5], 2),
           statistics.mode(data), statistics.multimode("aabbbbccddddeee"),
           statistics.pstdev(data), statistics.stdev(data), statistics.pvariance(data),
           statistics.variance([1, 2, 3, 4, 4.5]), statistics.quantiles(data, n=4),
           statistics.quantiles(data, n=5, method="inclusive"),
           statistics.geometric_mean([1, 2, 4, 8]), statistics.harmonic_mean([40, 60], weights=[5, 30])]
    out.append(str(statistics.mean([F(1, 3), F(1, 2), F(2, 7)])))
    out.append(str(statistics.variance([F(1, 3), F(1, 2), F(2, 7)])))
    out.append(statistics.correlation([1, 2, 3, 4, 5], [2, 4, 5, 4, 5]))
    out.append(tuple(statistics.linear_regression([1, 2, 3, 4, 5], [2, 4, 5, 4, 5])))
    dist = statistics.NormalDist.from_samples([2.5, 3.1, 2.1, 2.4, 2.7, 3.5])
    out.append((repr(dist), dist.cdf(3.0), dist.inv_cdf(0.9), dist.overlap(statistics.NormalDist(3, 1)),
                repr(dist + 1), repr(dist * 2), dist.quantiles(4), dist.zscore(2)))
    for bad in ([statistics.mean, []], [statistics.stdev, [1]], [statistics.harmonic_mean, [1, -1]],
                [statistics.quantiles, [1], ], [statistics.geometric_mean, [0, 1]]):
        out.append(attempt(bad[0], bad[1]))
    return out


def test_statistics():
    same(statistics_scenarios)


# ---------------------------------------------------------------------------
# shlex and ipaddress
# ---------------------------------------------------------------------------
def shlex_scenarios():
    out = [shlex.split("cmd -x 'single quoted' \"double \\\"q\\\"\" back\\ slash # not a comment"),
           shlex.split("a 'b c' # comment here", comments=True),
           shlex.split("posixless 'x y'", posix=False),
           [shlex.quote(s) for s in ("", "safe", "it's", "a b", "$HOME", "é")],
           shlex.join(["echo", "a b", "it's"])]
    lexer = shlex.shlex("a && b || (c; d) > out.txt 2>&1", posix=True, punctuation_chars=True)
    out.append(list(lexer))
    lexer = shlex.shlex("key=value other = 'quoted value' x.y", posix=True)
    lexer.whitespace_split = False
    lexer.wordchars += "."
    out.append([token for token in lexer])
    lexer = shlex.shlex(io.StringIO("one two\nthree"), infile="input.txt")
    out.append((lexer.get_token(), lexer.get_token(), lexer.lineno, lexer.error_leader()))
    lexer.push_token("pushed")
    out.append((lexer.get_token(), lexer.get_token(), lexer.get_token(), lexer.get_token()))
    out.append(attempt(shlex.split, "unterminated 'quote"))
    out.append(attempt(shlex.split, "trailing escape\\"))
    return out


def test_shlex():
    same(shlex_scenarios)


def ipaddress_scenarios():
    net = ipaddress.ip_network("192.168.0.0/28")
    addr = ipaddress.ip_address("10.1.2.3")
    v6 = ipaddress.IPv6Address("2001:db8::1")
    out = [[str(h) for h in net.hosts()], str(net.netmask), str(net.hostmask),
           str(net.broadcast_address), net.num_addresses, str(addr + 300), int(addr),
           (addr.is_private, addr.is_global, addr.is_loopback, addr.is_multicast),
           v6.exploded, v6.compressed, str(v6.reverse_pointer), repr(v6),
           [str(s) for s in net.subnets(prefixlen_diff=2)], str(net.supernet(new_prefix=20)),
           str(ipaddress.ip_interface("10.0.0.5/24").network),
           [str(n) for n in ipaddress.collapse_addresses(
               [ipaddress.ip_network("10.0.0.0/25"), ipaddress.ip_network("10.0.0.128/25"),
                ipaddress.ip_network("10.0.1.0/24")])],
           [str(n) for n in ipaddress.summarize_address_range(
               ipaddress.IPv4Address("10.0.0.3"), ipaddress.IPv4Address("10.0.0.20"))],
           [str(n) for n in ipaddress.ip_network("10.0.0.0/24").address_exclude(
               ipaddress.ip_network("10.0.0.64/27"))],
           sorted([ipaddress.ip_address("10.0.0.2"), ipaddress.ip_address("9.255.255.255"),
                   ipaddress.ip_address("10.0.0.1")]),
           ipaddress.ip_address("10.0.0.9") in net, ipaddress.ip_address("192.168.0.9") in net,
           net.overlaps(ipaddress.ip_network("192.168.0.8/29")),
           str(ipaddress.IPv6Network("2001:db8::/126")[2]),
           str(ipaddress.IPv6Address("2001::1").teredo), str(v6.ipv4_mapped),
           str(ipaddress.ip_address("::ffff:1.2.3.4").ipv4_mapped),
           format(addr, "b"), format(addr, "#x"), format(v6, "_X")]
    for bad in ("300.1.1.1", "1.2.3", "192.168.0.1/24", "::g", "1.2.3.4/33", "01.2.3.4"):
        out.append(attempt(ipaddress.ip_network, bad))
    out.append(attempt(ipaddress.ip_network, "192.168.0.1/24", strict=True))
    out.append(attempt(lambda: addr < v6))
    return out


def test_ipaddress():
    same(ipaddress_scenarios)


# ---------------------------------------------------------------------------
# copy.deepcopy
# ---------------------------------------------------------------------------
class Tree:
    def __init__(self, value, children=()):
        self.value = value
        self.children = list(children)
        self.parent = None
        for child in self.children:
            child.parent = self


class Memo:
    """Custom __deepcopy__ / __copy__, counting how often they run."""

    calls = []

    def __init__(self, payload):
        self.payload = payload

    def __copy__(self):
        Memo.calls.append("copy")
        return Memo(self.payload)

    def __deepcopy__(self, memo):
        Memo.calls.append("deepcopy %d" % len(memo))
        return Memo(copy.deepcopy(self.payload, memo))


class Reduced:
    def __init__(self, a, b=None):
        self.a = a
        self.b = b

    def __reduce_ex__(self, protocol):
        return (Reduced, (self.a,), {"b": self.b}, None, None)


class Slotted:
    __slots__ = ("x", "y")

    def __init__(self, x, y):
        self.x = x
        self.y = y


class State:
    def __init__(self):
        self.data = [1, 2]
        self.cache = {"expensive": True}

    def __getstate__(self):
        return {"data": self.data}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.cache = "rebuilt"


def deepcopy_scenarios():
    Memo.calls = []
    tree = Tree("root", [Tree("a"), Tree("b", [Tree("c"), Tree("d")])])
    shared = [1, [2, 3]]
    data = {"tree": tree, "again": [tree, (tree, shared)], "shared": shared,
            "set": frozenset({1, 2}), "memo": Memo([shared]),
            "reduced": Reduced([1], {"k": shared}), "slots": Slotted([1], shared),
            "state": State(), "od": collections.OrderedDict(a=[1]),
            "dd": collections.defaultdict(list, {"x": [shared]})}
    data["self"] = data
    clone = copy.deepcopy(data)
    out = [clone["tree"] is clone["again"][0], clone["again"][1][0] is clone["tree"],
           clone["tree"] is not tree, clone["self"] is clone,
           clone["tree"].children[1].children[0].parent is clone["tree"].children[1],
           [c.value for c in clone["tree"].children[1].children],
           clone["shared"] is clone["again"][1][1] and clone["shared"] is not shared,
           clone["set"] is data["set"], clone["memo"].payload[0] is clone["shared"],
           (clone["reduced"].a, clone["reduced"].b["k"] is clone["shared"]),
           (clone["slots"].x, clone["slots"].y is clone["shared"]),
           (clone["state"].data, clone["state"].cache), type(clone["od"]).__name__,
           (clone["dd"]["x"][0] is clone["shared"], clone["dd"].default_factory is list)]
    shallow = copy.copy(data)
    out.append((shallow["tree"] is tree, copy.copy(data["memo"]).payload is data["memo"].payload))
    out.append(list(Memo.calls))
    out.append(attempt(copy.deepcopy, iter([1])))
    return out


def test_deepcopy():
    result = same(deepcopy_scenarios)
    assert result[:5] == [True, True, True, True, True]


# ---------------------------------------------------------------------------
# re's parser and compiler
# ---------------------------------------------------------------------------
PATTERNS = [
    r"(?P<name>[a-z_]\w*)\s*=\s*(\d+|'[^']*')(?:\s*#.*)?$",
    r"(a|bc)+?x{2,5}[^\d\s]\b(?=y)(?<!z)",
    r"(?i)(?:caf\u00e9|na(?#comment)ive){1,3}?\Z",
    r"^(\d{4})-(\d\d)-(\d\d)(?:T(\d\d):(\d\d))?(?(4)Z|)$",
    r"(?x) \[ (?P<inner> [^\]]* ) \] \s* (?P=inner) # verbose",
    r"[\w.+-]+@[\w-]+\.[\w.]+|<[^>]+>|\$\{[A-Z_]+\}",
    r"(?s:.)*?(?>a+)b|c*+d",
]


def regex_scenarios(patterns, salt):
    out = []
    for i, text in enumerate(patterns):
        pattern = text + "(?:%s%d)?" % (salt, i)  # fresh pattern: no cache hits
        parsed = re._parser.parse(pattern, 0)
        out.append((len(parsed), parsed.state.groups, sorted(parsed.state.groupdict.items()),
                    parsed.getwidth(), str(list(parsed))[:400]))
        compiled = re._compiler.compile(pattern, 0)
        out.append((compiled.groups, sorted(compiled.groupindex.items()), compiled.flags))
    samples = re._compiler.compile("(?:%s)?" % salt + patterns[0], 0)
    out.append(samples.match("answer = 42 # comment").groups())
    dates = re._compiler.compile(patterns[3] + salt[:0], 0)
    out.append([m and m.groups() for m in map(dates.match, ["2024-01-02", "2024-01-02T10:30Z",
                                                            "2024-01-02T10:30", "24-1-2"])])
    out.append(re._compiler.compile(patterns[5] + "|" + salt, re.ASCII).findall(
        "mail a.b+c@d-e.org or <tag> or ${HOME} " + salt))
    for bad in ["(unclosed" + salt, "a{3,2}" + salt, "[z-a]" + salt, "(?P<1x>a)" + salt,
                "*" + salt, "(?<=a+)b" + salt, r"\p" + salt, "(?P=missing)" + salt]:
        try:
            re._compiler.compile(bad, 0)
        except re.error as exc:
            out.append((str(exc), exc.msg, exc.pos, exc.lineno, exc.colno))
    return out


_salt_counter = [0]


def fresh_salt():
    _salt_counter[0] += 1
    return "salt%d_%d" % (os.getpid(), _salt_counter[0])


def test_re_parser_and_compiler():
    salt = fresh_salt()
    result = same(regex_scenarios, PATTERNS, salt)
    assert result[len(PATTERNS) * 2] == ("answer", "42")


# ---------------------------------------------------------------------------
# tokenize
# ---------------------------------------------------------------------------
SOURCE = '''\
# -*- coding: utf-8 -*-
import os  # comment
@decorator(1, key="v")
async def f(x: int = 0x1F, *args, **kw) -> "str":
    """Doc string
    over lines."""
    y = x ** 2 + 1.5e-3j - 0o17 // 0b101
    s = f"{x!r:>{y}} {{literal}}" rb'\\x00' u"uni\u00e9"
    if (a := [1, 2,
              3]) and not x: return ...
    while x:
        x -= 1; continue
    return lambda q, /, *, r=1: q @ r
def g():
\treturn 1  # a block indented with a tab (mixing tabs and spaces is a TabError on 3.12+)
'''


def tokenize_scenarios(source):
    out = []
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    out.append([(tokenize.tok_name[t.type], t.string, t.start, t.end) for t in tokens])
    out.append([(t.exact_type, t.string) for t in tokens if t.type == tokenize.OP])
    encoded = list(tokenize.tokenize(io.BytesIO(source.encode("utf-8")).readline))
    out.append((encoded[0].string, len(encoded)))
    out.append(tokenize.untokenize(tokens))
    out.append(tokenize.untokenize([(t.type, t.string) for t in tokens]))
    out.append(tokenize.detect_encoding(io.BytesIO(b"# coding: latin-1\nx = 1\n").readline))
    for bad in ("x = (1,\n", "def f():\n  return 1\n return 2\n", "'''never closed\n"):
        try:
            list(tokenize.generate_tokens(io.StringIO(bad).readline))
        except (tokenize.TokenError, IndentationError) as exc:
            out.append((type(exc).__name__, exc.args))
    return out


def test_tokenize():
    result = same(tokenize_scenarios, SOURCE)
    assert result[0][0][0] == "COMMENT"


# ---------------------------------------------------------------------------
# pprint
# ---------------------------------------------------------------------------
class Wide:
    def __init__(self, n):
        self.n = n

    def __repr__(self):
        return "Wide(%s)" % ("#" * self.n)


def pprint_scenarios():
    data = {"key%02d" % i: [list(range(i)), {"x": i, "y": (i, str(i) * i)}, {i, -i}]
            for i in range(10)}
    data["nested"] = {"deep": {"deeper": {"deepest": [("t",) * 3] * 4}}}
    data["text"] = "a fairly long string that will need to be wrapped " * 3
    data["bytes"] = bytes(range(40))
    data["objects"] = [Wide(10), Wide(70), collections.OrderedDict(b=1, a=2),
                       collections.Counter("abracadabra"), collections.deque(range(30), maxlen=40),
                       collections.defaultdict(int, {"z": 1}), types_namespace()]
    recursive = [1, 2]
    recursive.append(recursive)
    data["recursive"] = recursive
    out = [pprint.pformat(data, width=60), pprint.pformat(data, compact=True, sort_dicts=False),
           pprint.pformat(data, depth=2, indent=3), pprint.saferepr(data),
           pprint.pformat(data, width=120, underscore_numbers=True),
           pprint.isreadable(data), pprint.isrecursive(data), pprint.isreadable({"a": [1, (2,)]})]
    stream = io.StringIO()
    pprint.PrettyPrinter(stream=stream, width=30).pprint(data["nested"])
    out.append(stream.getvalue())
    pprint.pprint([1e10, 2 ** 80, "x" * 90], width=40)
    pprint.pp({"b": 1, "a": [2] * 30})
    # "<Recursion on list with id=...>": ids differ between runs.
    return [re.sub(r"id=\d+", "id=?", x) if isinstance(x, str) else x for x in out]


def types_namespace():
    import types

    return types.SimpleNamespace(a=1, b=[1, 2], c="text")


def test_pprint():
    same(pprint_scenarios)


# ---------------------------------------------------------------------------
# typing
# ---------------------------------------------------------------------------
T = typing.TypeVar("T")
K = typing.TypeVar("K", bound=typing.Hashable)
P = typing.ParamSpec("P")


def typing_scenarios():
    V = typing.TypeVar("V", int, str)

    class Box(typing.Generic[T]):
        def __init__(self, item: T) -> None:
            self.item = item

        def get(self) -> T:
            return self.item

        def map(self, fn: "typing.Callable[[T], K]") -> "Box[K]":
            return Box(fn(self.item))

    class Table(Box[typing.Dict[K, V]], typing.Generic[K, V]):
        pass

    class Point(typing.NamedTuple):
        x: int
        y: int = 0
        label: str = "p"

        def norm(self) -> int:
            return abs(self.x) + abs(self.y)

    class Movie(typing.TypedDict, total=False):
        title: typing.Required[str]
        year: int

    class Sequel(Movie):
        prequel: Movie

    @typing.runtime_checkable
    class Closer(typing.Protocol):
        def close(self) -> None: ...

    class Sized2(typing.Protocol):
        size: int

    class File:
        def close(self):
            pass

    def annotated(a: int, b: "typing.List[Box[str]]", c: typing.Annotated[float, "unit"] = 1.0,
                  *args: str, d: typing.Optional["Point"] = None,
                  **kw: typing.Literal["x", "y"]) -> typing.Union[int, str, None]:
        return a

    def decorated(fn: typing.Callable[P, T]) -> typing.Callable[P, typing.List[T]]:
        return fn

    @typing.overload
    def over(x: int) -> int: ...

    @typing.overload
    def over(x: str) -> str: ...

    def over(x):
        return x

    out = []
    out.append((repr(Box[int]), repr(Table[str, int]), Box(3).get(), Box("s").map(len).get(),
                Table.__parameters__, typing.get_origin(Box[int]) is Box,
                typing.get_args(Table[str, int]), repr(Table.__orig_bases__)))
    out.append(attempt(lambda: Box[int, str]))
    out.append(attempt(lambda: Table[str]))
    out.append(attempt(lambda: typing.Generic[int]))
    point = Point(3, -4)
    out.append((repr(point), point.norm(), Point._fields, Point._field_defaults,
                repr(point._replace(label="q")), point._asdict(), repr(Point._make([1, 2, "m"])),
                Point.__annotations__))
    out.append(attempt(Point, 1, 2, 3, 4))
    out.append((Movie.__required_keys__, Movie.__optional_keys__, Sequel.__required_keys__,
                sorted(Sequel.__annotations__), Movie(title="t", year=1),
                typing.is_typeddict(Sequel)))
    out.append((isinstance(File(), Closer), isinstance(1, Closer), issubclass(File, Closer)))
    out.append(attempt(isinstance, File(), Sized2))
    out.append(attempt(Closer))
    hints = typing.get_type_hints(annotated, globalns=None, localns=locals())
    out.append(sorted((k, repr(v)) for k, v in hints.items()))
    out.append(sorted((k, repr(v)) for k, v in
                      typing.get_type_hints(annotated, localns=locals(), include_extras=True).items()))
    out.append(repr(typing.get_type_hints(Box.map, localns={"K": K, "Box": Box})))
    out.append(repr(typing.get_type_hints(Point)))
    out.append(repr(typing.get_type_hints(decorated)))
    out.append(attempt(typing.get_type_hints, annotated))
    out.append((repr(typing.Union[int, str, None]), repr(typing.Optional[typing.Union[int, T]]),
                repr(typing.Callable[..., typing.Tuple[int, ...]]), repr(typing.Literal[1, "a", None]),
                repr(typing.Union[int, int]), typing.Union[int, str] == typing.Union[str, int],
                repr(typing.List[T][int]), repr(typing.Dict[K, V][str, int]),
                repr(typing.Callable[P, T][[int, str], bool]), repr(list[T][float]),
                typing.get_args(typing.Dict[str, int]), repr(typing.Annotated[int, "m"].__metadata__)))
    out.append(attempt(lambda: typing.Union[()]))
    out.append(attempt(lambda: typing.Literal[1][2]))
    out.append(attempt(typing.cast, int, "not converted"))
    out.append([f.__qualname__ for f in typing.get_overloads(over)])
    out.append((typing.assert_type(1, int), typing.reveal_type.__name__))
    UserId = typing.NewType("UserId", int)
    out.append((UserId(5), repr(UserId), UserId.__supertype__))
    out.append(attempt(type, "Sub", (UserId,), {}))
    return out


def test_typing():
    result = same(typing_scenarios)
    assert result[0][2:4] == (3, 1)


# ---------------------------------------------------------------------------
# More of the standard library: warnings, logging, email, decimal, ast,
# contextlib/functools, and a handful of text-processing modules
# ---------------------------------------------------------------------------
def _deprecated_api(stacklevel):
    warnings.warn("old API, stacklevel %d" % stacklevel, DeprecationWarning, stacklevel=stacklevel)


def _calls_deprecated(stacklevel):
    _deprecated_api(stacklevel)


def warnings_scenarios():
    out = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for level in (0, 1, 2, 3, 4, 1000):  # 4: the first frame outside the run
            _calls_deprecated(level)
        warnings.warn("plain")
        warnings.warn(RuntimeWarning("an instance"), UserWarning)
        warnings.warn("custom", category=type("MyWarning", (UserWarning,), {}))
        locale.getdefaultlocale()  # deprecated (3.11+): the stdlib warns with stacklevel=2
        out.append(attempt(warnings.warn, "bad", int))
        out.append(attempt(warnings.warn))
    out.append([(str(w.message), w.category.__name__, os.path.basename(w.filename), w.lineno)
                for w in caught])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        for i in range(3):
            warnings.warn("once per line")  # the registry dedups this line
            _deprecated_api(2)
        warnings.warn("once per line")
    out.append([(str(w.message), w.lineno) for w in caught])
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        out.append(attempt(_calls_deprecated, 2))
        warnings.simplefilter("always")
        warnings.showwarning = lambda *a, **k: out.append(("shown", str(a[0]), a[3]))
        warnings.warn("to showwarning")
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = lambda message, category, filename, lineno, file=None, line=None: \
            sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))
        warnings.warn("printed to stderr with its source line", stacklevel=1)
    return out


def test_warnings():
    same(warnings_scenarios)


class OneLineFormatter(logging.Formatter):
    """Exceptions as one line: tracebacks show interpreter frames."""

    def formatException(self, exc_info):
        return "!! %s: %s" % (exc_info[0].__name__, exc_info[1])

    def format(self, record):
        record.tag = "<%s>" % record.levelname.lower()
        return super().format(record)


def logging_scenarios():
    logger = logging.getLogger("pyinterp.tests.stdlib.scenario")
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(OneLineFormatter(
        "%(tag)s %(levelname)-7s %(name)s %(funcName)s:%(lineno)d %(filename)s %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    records = []

    class Collect(logging.Handler):
        def emit(self, record):
            records.append((record.levelno, record.getMessage(), record.funcName, record.lineno))

    collect = Collect(level=logging.WARNING)
    collect.addFilter(lambda record: "skip" not in record.msg)
    logger.addHandler(collect)
    try:
        def work(n):
            logger.debug("debug %d", n)
            logger.info("info %s %r", "x", [n])
            logger.warning("warn %(a)s", {"a": n})
            logger.warning("skip this one")
            try:
                {}[n]
            except KeyError:
                logger.exception("failed on %d", n)
            logger.log(logging.ERROR, "err", stack_info=False)

        work(1)
        adapter = logging.LoggerAdapter(logger, {"extra": 1})
        adapter.error("via adapter")
        logger.critical("done: %.2f", 1.5)
        logging.getLogger("pyinterp.tests.stdlib.scenario.child").error("child %s", "propagates")
    finally:
        logger.removeHandler(handler)
        logger.removeHandler(collect)
    return stream.getvalue(), records


def test_logging():
    same(logging_scenarios)


RAW_EMAIL = """\
From: Ann Example <ann@example.org>
To: bob@example.com, "Carl, Jr." <carl@example.net>
Subject: =?utf-8?q?caf=C3=A9_menu?=
Date: Mon, 02 Jan 2023 10:00:00 +0000
Content-Type: multipart/alternative; boundary="XX"
MIME-Version: 1.0

--XX
Content-Type: text/plain; charset=utf-8

Hello there.
--XX
Content-Type: text/html

<b>Hello</b> there.
--XX--
"""


def email_scenarios(raw):
    import email
    import email.message
    import email.policy
    import email.utils

    message = email.message_from_string(raw, policy=email.policy.default)
    out = [str(message["subject"]), [a.addr_spec for a in message["to"].addresses],
           message["from"].addresses[0].display_name, str(message["date"].datetime),
           [part.get_content_type() for part in message.walk()],
           message.get_body(("plain",)).get_content(), message.is_multipart(),
           type(message["subject"]).__module__]
    reply = email.message.EmailMessage()
    reply["Subject"] = "Re: caf\u00e9"
    reply["To"] = email.utils.formataddr(("Ann Example", "ann@example.org"))
    reply.set_content("Thanks!\n")
    reply.add_attachment(b"\x00\x01binary", maintype="application", subtype="octet-stream",
                         filename="data.bin")
    text = reply.as_string()
    out.append(re.sub(r"===============\d+==", "=BOUNDARY=", text))
    out.append(email.utils.parseaddr("Carl <carl@example.net>"))
    return out


def test_email():
    result = same(email_scenarios, RAW_EMAIL)
    assert result[7] == "email.headerregistry"  # classes made by type(name, bases, ns)


def decimal_scenarios():
    import _pydecimal as decimal

    D = decimal.Decimal
    context = decimal.Context(prec=28, rounding=decimal.ROUND_HALF_EVEN)
    out = []
    a, b = D("1.1"), D("3")
    out.append([str(x) for x in (a + b, a - b, a * b, context.divide(a, b), a // b, a % b,
                                 context.sqrt(D(2)), context.exp(D(1)), context.ln(D(10)),
                                 context.log10(D("0.001")), context.power(D(2), D("0.5")),
                                 D("1e-5").quantize(D("0.01")), D("123.456").to_integral_value(),
                                 D("-0"), D("NaN"), D("-Infinity"), D(0.1), D((1, (3, 1, 4), -2)))])
    out.append((D("1.30") == D("1.3"), D("2.5") < 3, hash(D("1.5")) == hash(1.5),
                D("7.25").as_integer_ratio(), float(D("0.1")), int(D("-7.9")), round(D("2.675"), 2),
                D("12345.6789").adjusted(), str(D("1.23E+5").normalize()), format(D("1234.5"), ",.2f")))
    with decimal.localcontext() as local:
        local.prec = 5
        local.rounding = decimal.ROUND_DOWN
        out.append(str(D(1) / D(7)))
    out.append(attempt(lambda: D("abc")))
    strict = decimal.Context(traps=[decimal.DivisionByZero, decimal.InvalidOperation])
    out.append(attempt(strict.divide, D(1), D(0)))
    out.append(attempt(strict.sqrt, D(-1)))
    lenient = decimal.Context(traps=[])
    out.append((str(lenient.divide(D(1), D(0))), sorted(f.__name__ for f, v in lenient.flags.items() if v)))
    return out


def test_decimal():
    same(decimal_scenarios)


AST_SOURCE = """\
from __future__ import annotations
import os as _os, sys
@decorator(arg, *rest, key=value)
async def f(a, /, b: int = 1, *args, c, d=2, **kw) -> list[int]:
    \"\"\"Docstring.\"\"\"
    global g
    x = [i async for i in aiter() if i] + [*a, *b]
    y = {k: v for k, v in kw.items()} | {**kw}
    async with ctx() as (m, n):
        await z
    match x:
        case [1, *rest] if rest: pass
        case {"k": v, **others}: pass
        case Point(x=0) | None: pass
    return lambda q, *, r=1: (q @ r, f"{q!r:>{r}}", not q, -q ** 2)
class A(B, metaclass=M):
    x: int = 3
    def g(self): yield from self; del self.x; raise E from None
try:
    pass
except* (ValueError, TypeError) as eg:
    pass
finally:
    a = b if c else d
"""


def ast_scenarios(source):
    import ast

    tree = ast.parse(source)
    out = [ast.unparse(tree), ast.dump(tree, include_attributes=True)[:3000],
           [type(node).__name__ for node in ast.walk(tree)][:120]]

    class Renamer(ast.NodeTransformer):
        def visit_Name(self, node):
            if node.id == "x":
                return ast.copy_location(ast.Name(id="renamed", ctx=node.ctx), node)
            return node

    class Counter(ast.NodeVisitor):
        def __init__(self):
            self.counts = collections.Counter()

        def generic_visit(self, node):
            self.counts[type(node).__name__] += 1
            super().generic_visit(node)

    renamed = ast.fix_missing_locations(Renamer().visit(ast.parse(source)))
    out.append(ast.unparse(renamed))
    counter = Counter()
    counter.visit(tree)
    out.append(sorted(counter.counts.items()))
    out.append(ast.literal_eval("{'a': (1, 2.5, -3j), 'b': [None, True, b'x'], 'c': {1, 2}}"))
    out.append(attempt(ast.literal_eval, "f(1)"))
    out.append(attempt(ast.parse, "def f(:\n"))
    out.append(ast.get_docstring(tree.body[2]))
    return out


def test_ast():
    same(ast_scenarios, AST_SOURCE)


def contextlib_functools_scenarios():
    import contextlib
    import functools
    import operator

    log = []

    @contextlib.contextmanager
    def managed(tag):
        log.append("enter %s" % tag)
        try:
            yield tag.upper()
        except KeyError as exc:
            log.append("caught %r" % (exc,))
            raise ValueError("converted") from exc
        finally:
            log.append("exit %s" % tag)

    out = []
    with contextlib.ExitStack() as stack:
        out.append(stack.enter_context(managed("a")))
        stack.callback(log.append, "callback")
        with contextlib.suppress(ZeroDivisionError):
            1 / 0
    out.append(attempt(lambda: managed("b").__enter__() and (_ for _ in ()).throw(KeyError("k"))))

    def nested():
        with managed("c"):
            raise KeyError("k")

    out.append(attempt(nested))

    def callback_fails():
        with contextlib.ExitStack() as stack:
            stack.callback(lambda: 1 / 0)
            raise KeyError("inner")

    out.append(attempt(callback_fails))
    with contextlib.redirect_stdout(io.StringIO()) as buffer:
        print("captured")
    out.append(buffer.getvalue())

    @functools.singledispatch
    def kind(x):
        return "object"

    @kind.register
    def _(x: int):
        return "int"

    @kind.register(list)
    @kind.register(tuple)
    def _(x):
        return "sequence of %d" % len(x)

    @functools.total_ordering
    class Version:
        def __init__(self, v):
            self.v = v

        def __eq__(self, other):
            return self.v == other.v

        def __lt__(self, other):
            return self.v < other.v

    class Lazy:
        computed = 0

        @functools.cached_property
        def value(self):
            Lazy.computed += 1
            return [Lazy.computed]

        def scale(self, factor, x):
            return factor * x

        double = functools.partialmethod(scale, 2)

    @functools.lru_cache(maxsize=2)
    def square(n):
        log.append("square %d" % n)
        return n * n

    lazy = Lazy()
    out.append((kind(1), kind([1, 2]), kind((1,)), kind("s"), kind(True)))
    out.append((Version(1) >= Version(2), Version(3) > Version(2), Version(2) <= Version(2)))
    out.append((lazy.value is lazy.value, Lazy.computed, lazy.double(21)))
    out.append(([square(i % 3) for i in range(7)], tuple(square.cache_info())))
    out.append(functools.reduce(operator.mul, range(1, 8), 1))
    out.append(sorted(["b", "C", "a"], key=functools.cmp_to_key(
        lambda x, y: (x.lower() > y.lower()) - (x.lower() < y.lower()))))
    wrapped = functools.wraps(square)(lambda n: n)
    out.append((wrapped.__name__, wrapped.__wrapped__ is square))
    out.append(list(log))
    return out


def test_contextlib_functools():
    same(contextlib_functools_scenarios)


def text_module_scenarios():
    import configparser
    import html.parser
    import string
    import urllib.parse

    out = []
    template = string.Template("$who likes ${what}; $$5")
    out.append((template.substitute(who="tim", what="kung pao"), template.safe_substitute(who="x"),
                attempt(template.substitute, who="x")))
    formatter = string.Formatter()
    out.append(formatter.format("{0:>5}|{name!r}|{0.real}|{items[1]}", 3, name="n", items=[7, 8]))
    out.append(string.capwords("  hello   big world "))
    parser = configparser.ConfigParser(interpolation=configparser.ExtendedInterpolation())
    parser.read_string("[DEFAULT]\nbase = /srv\n[app]\npath = ${base}/app\nport = 8080\n"
                       "flag = yes\n[other]\nx = ${app:path}/x\n")
    written = io.StringIO()
    parser.write(written)
    out.append((parser.sections(), parser["app"]["path"], parser.getint("app", "port"),
                parser.getboolean("app", "flag"), parser["other"]["x"], written.getvalue(),
                dict(parser["app"])))
    out.append(attempt(parser.read_string, "[dup]\na=1\n[dup]\n"))

    events = []

    class Collector(html.parser.HTMLParser):
        def handle_starttag(self, tag, attrs):
            events.append(("start", tag, attrs))

        def handle_endtag(self, tag):
            events.append(("end", tag))

        def handle_data(self, data):
            events.append(("data", data))

        def handle_comment(self, data):
            events.append(("comment", data))

    collector = Collector()
    collector.feed("<html><body class='x' id=y><p>Hi &amp; bye &lt;3<br/>t</p><!-- c -->"
                   "<script>if (a<b) x;</script></body></html>")
    collector.close()
    out.append(events)
    parts = urllib.parse.urlsplit("https://user:pw@example.com:8080/a/b;p?q=1&r=%20x#frag")
    out.append((parts, parts.port, parts.hostname, urllib.parse.parse_qsl(parts.query),
                urllib.parse.urlencode({"a": "b c", "d": [1, 2]}, doseq=True),
                urllib.parse.quote("a b/c?d"), urllib.parse.urljoin("http://a/b/c/d;p?q", "../../g"),
                urllib.parse.unquote("%E2%82%AC")))
    Point3 = collections.namedtuple("Point3", "x y z", defaults=(0,))
    out.append((repr(Point3(1, 2)), Point3.__module__, Point3(1, 2)._asdict(),
                attempt(collections.namedtuple, "Bad", "x x")))
    return out


def test_text_modules():
    same(text_module_scenarios)


class Defaulting(dict):
    """A dict subclass with a Python __missing__ that may raise KeyError."""

    log = []

    def __missing__(self, key):
        Defaulting.log.append(key)
        if key == "absent":
            raise KeyError("no default for %r" % key)
        return key * 2


def collections_scenarios():
    Defaulting.log = []
    out = []
    counter = collections.Counter()
    for word in "the cat and the hat and the bat".split():
        counter[word] += 1
    out.append((counter.most_common(2), sorted(counter.elements())[:5], counter["missing"],
                counter + collections.Counter("tt"), counter - collections.Counter(the=5)))
    defaulting = Defaulting(a=1)
    out.append((defaulting["a"], defaulting["bc"], defaulting.get("zz"),
                attempt(lambda: defaulting["absent"]), attempt(lambda: defaulting[[1]]),
                list(Defaulting.log)))

    class Registry(collections.UserDict):
        def __missing__(self, key):
            return "<%s>" % key

        def __setitem__(self, key, value):
            super().__setitem__(key.lower(), value)

    registry = Registry({"A": 1})
    registry["B"] = 2
    registry.update(C=3)
    out.append((dict(registry), registry["x"], "a" in registry, len(registry), registry.get("q", 0),
                repr(registry), registry.pop("b"), sorted(registry.keys())))

    class Stack(collections.UserList):
        def push(self, item):
            self.append(item)

    stack = Stack([1, 2])
    stack.push(3)
    stack += [4]
    out.append((list(stack), stack[1:3], type(stack[1:3]).__name__, stack * 2, 3 in stack,
                stack.index(3), sorted(stack, reverse=True)))
    text = collections.UserString("Hello")
    out.append((text.upper(), text + "!", text[1:], text.split("l"), "ell" in text))
    chain = collections.ChainMap({"a": 1}, {"a": 2, "b": 3})
    child = chain.new_child({"c": 4})
    out.append((chain["a"], chain["b"], sorted(child), child.parents["a"], attempt(lambda: chain["z"])))
    ordered = collections.OrderedDict.fromkeys("abcde")
    ordered.move_to_end("b")
    ordered.move_to_end("e", last=False)
    out.append((list(ordered), ordered.popitem(), ordered.popitem(last=False)))
    ring = collections.deque(range(5), maxlen=4)
    ring.rotate(2)
    ring.appendleft(9)
    out.append((list(ring), ring.maxlen))
    return out


def test_collections():
    result = same(collections_scenarios)
    assert result[1][-1] == ["bc", "absent"]  # __missing__ ran once per miss


# Callbacks handed to C functions (itertools, functools.cmp_to_key, bisect):
# module-level, so that the call-tree test can check they run interpreted.
def _parity(n):
    return n % 2


def _small(n):
    return n < 4


def _compare_lengths(a, b):
    return (len(a) > len(b)) - (len(a) < len(b))


def _product(total, n):
    return total * n


def _score(word):
    return len(word)


class Countdown:
    """An iterator whose protocol is Python code."""

    def __init__(self, start):
        self.value = start

    def __iter__(self):
        return self

    def __next__(self):
        if self.value <= 0:
            raise StopIteration
        self.value -= 1
        return self.value + 1


def itertools_scenarios():
    import bisect
    import functools
    import heapq
    import itertools
    import operator

    words = "the quick brown fox jumps over the lazy dog".split()
    out = [[(key, list(group)) for key, group in itertools.groupby(sorted(range(10), key=_parity),
                                                                 key=_parity)],
           [(key, len(list(group))) for key, group in itertools.groupby(Countdown(6), _small)],
           list(itertools.accumulate(Countdown(5), _product, initial=1)),
           list(itertools.accumulate(range(5), func=operator.sub)),
           list(itertools.starmap(divmod, [(7, 2), (9, 4)])),
           list(itertools.filterfalse(_small, Countdown(7))),
           list(itertools.takewhile(_small, range(10))),
           list(itertools.dropwhile(_small, Countdown(6))),
           sorted(words, key=functools.cmp_to_key(_compare_lengths)),
           max(words, key=functools.cmp_to_key(_compare_lengths))]
    ordered = sorted(words, key=_score)
    out.append((bisect.bisect_left(ordered, 4, key=_score), bisect.bisect_right(ordered, 4, key=_score)))
    bisect.insort(ordered, "abcd", key=_score)
    out.append(ordered)
    out.append((heapq.nlargest(3, words, key=_score), heapq.nsmallest(2, Countdown(9)),
                list(heapq.merge([1, 4, 9], Countdown(3), [2, 5], key=_parity))))
    out.append(list(itertools.chain(Countdown(2), "ab", Countdown(1))))
    out.append(list(itertools.islice(itertools.cycle(Countdown(3)), 7)))
    out.append([list(pair) for pair in itertools.zip_longest(Countdown(3), "ab", fillvalue="-")])
    out.append(attempt(lambda: list(itertools.starmap(5, [(1,)]))))
    out.append(attempt(itertools.groupby, 5))
    return out


def test_itertools_callbacks():
    same(itertools_scenarios)


# ---------------------------------------------------------------------------
# The call tree really is interpreted
# ---------------------------------------------------------------------------
# Under pyinterp, a Python function is interpreted: CPython never creates a
# real frame for it.  sys.setprofile sees every real frame, so the frames
# that start directly below one of pyinterp's own frames are exactly the
# places where CPython ran Python code on pyinterp's behalf.  Each must be
# one of:
#
# * pyinterp's own machinery: the decoder's ``dis``, ``ctypes`` in
#   excstate, the import system behind ``IMPORT_NAME``, the argument binders
#   compiled by pyinterp.interp.binding (they carry the callee's name but run none
#   of its code) and ``types._calculate_meta``;
# * a callback made by C code that pyinterp runs natively: a special method
#   in NATIVE_CALLBACK_NAMES (hashing dict keys, comparing items inside
#   tuples and lists, ``repr`` of container items and ``%`` formatting,
#   ``type.__new__`` calling ``__set_name__``/``__init_subclass__``,
#   ``isinstance`` calling ``__instancecheck__``...), a function behind a
#   ``functools.lru_cache`` wrapper (the C wrapper calls it on a cache miss),
#   or one of NATIVE_CALLBACK_FUNCTIONS;
# * a replacement function called by ``re.Pattern.sub``/``subn`` (see
#   _pattern_sub: a known gap).
#
# Everything else must be interpreted.  Each scenario also names "hot"
# functions that must never get a real frame at all, not even below a
# native callback (so functions reached only through an ``lru_cache`` miss,
# which runs natively with everything below it, are not listed as hot).

_PYINTERP_DIRS = tuple(os.path.dirname(os.path.abspath(m.__file__)) + os.sep
                       for m in (pyinterp, pyinterp.opcodes))
_BINDING_FILE = os.path.abspath(sys.modules["pyinterp.interp.binding"].__file__)
_HOST_LIBRARY_FILES = frozenset({
    dis.__file__, ctypes.__file__,
    "<frozen importlib._bootstrap>", "<frozen importlib._bootstrap_external>",
})
_HOST_LIBRARY_CODES = frozenset({types._calculate_meta.__code__})

NATIVE_CALLBACK_NAMES = frozenset({
    "__hash__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
    "__repr__", "__str__", "__format__", "__index__", "__int__", "__float__", "__round__",
    "__set_name__", "__init_subclass__", "__instancecheck__", "__subclasscheck__",
    "__subclasshook__", "__typing_subst__", "__del__",
    # object.__reduce_ex__ (C) asks for the state and arguments.
    "__reduce_ex__", "__reduce__", "__getstate__", "__getnewargs__", "__getnewargs_ex__",
    # dict.__getitem__ (a C method) calls __missing__ itself: ``map(d.__getitem__,
    # ...)`` or a bound ``d.__getitem__`` called directly.
    "__missing__",
    "<module>",
})

NATIVE_CALLBACK_FUNCTIONS = frozenset({
    # object.__reduce_ex__ (C) asks copyreg for the slot names.
    ("copyreg.py", "_slotnames"),
    # The C JSON string scanner raises json.JSONDecodeError (a Python class).
    ("decoder.py", "JSONDecodeError.__init__"),
    # io.TextIOWrapper (C) decodes through a Python incremental decoder,
    # e.g. when a stream is read while the scenario runs under pytest.
    ("<frozen codecs>", "BufferedIncrementalDecoder.__init__"),
    ("<frozen codecs>", "BufferedIncrementalDecoder.decode"),
    # Weak reference callbacks, run by CPython when an object dies.
    ("__init__.py", "_removeHandlerRef"),
    ("_weakrefset.py", "WeakSet.__init__.<locals>._remove"),
    # warnings.warn_explicit (C) builds a WarningMessage and shows it.
    ("warnings.py", "WarningMessage.__init__"),
    ("warnings.py", "_showwarnmsg"),
    # A dataclass __repr__ (wrapped by a recursion guard) reached by repr()
    # of a container holding the instance.
    ("dataclasses.py", "_recursive_repr.<locals>.wrapper"),
    # divmod() reaches Fraction's generated __divmod__ through a C slot.
    ("fractions.py", "Fraction._operator_fallbacks.<locals>.forward"),
    # codecs.lookup (C) asks the encodings package's search function.
    ("__init__.py", "search_function"),
})
# Newer Pythons moved code to C that now calls back into Python natively.
if sys.version_info >= (3, 12):
    NATIVE_CALLBACK_FUNCTIONS |= {
        # typing.Generic is C: type.__new__ calls its __init_subclass__, which
        # calls this (3.11: a Python __init_subclass__, allowed by name).
        ("typing.py", "_generic_init_subclass"),
        # TypeVar is C: types.GenericAlias substitutes through its
        # __typing_subst__, which calls this (3.11: allowed by name).
        ("typing.py", "_typevar_subst"),
        # io.TextIOWrapper (C) creates and calls the Python incremental decoder
        # of a source file that linecache reads for a traceback (the
        # interpreted run's tracebacks name pyinterp's own files too).
        ("<frozen codecs>", "BufferedIncrementalDecoder.__init__"),
        ("<frozen codecs>", "BufferedIncrementalDecoder.decode"),
    }
if sys.version_info >= (3, 13):
    NATIVE_CALLBACK_FUNCTIONS |= {
        # The C JSON encoder also handles indent= now, and calls default().
        ("test_stdlib.py", "PointEncoder.default"),
        ("encoder.py", "JSONEncoder.default"),
        # dataclasses guards __repr__ recursion with reprlib.recursive_repr.
        ("reprlib.py", "recursive_repr.<locals>.decorating_function.<locals>.wrapper"),
    }


def _host_frame(frame):
    """True if ``frame`` belongs to pyinterp itself."""
    return frame.f_code.co_filename.startswith(_PYINTERP_DIRS)


def _host_machinery(frame):
    code = frame.f_code
    return (code.co_filename in _HOST_LIBRARY_FILES or code in _HOST_LIBRARY_CODES
            or frame.f_back.f_code.co_filename == _BINDING_FILE)


_PATTERN = type(re.compile(""))


def _pattern_sub(c_function):
    """True for a bound ``re.Pattern.sub``/``subn``.

    They are METH_METHOD builtins (type ``builtin_method``), which
    ``pyinterp.interp.calls.call`` runs natively without consulting
    METHOD_LOOKASIDES; so their replacement callables (the template
    function made by ``re._subx``, a user's function) run natively for now.
    """
    return type(getattr(c_function, "__self__", None)) is _PATTERN \
        and c_function.__name__ in ("sub", "subn")


def _lru_cached_codes():
    """Code objects of the functions wrapped by ``functools.lru_cache``."""
    return {id(obj.__wrapped__.__code__) for obj in gc.get_objects()
            if type(obj) is functools._lru_cache_wrapper
            and type(getattr(obj, "__wrapped__", None)) is types.FunctionType}


def _key(code):
    return os.path.basename(code.co_filename), code.co_qualname


def profile_entries(fn, *args):
    """Run ``fn`` interpreted under ``sys.setprofile``.

    Returns ``(entries, codes)``: ``entries`` counts, by ``(file name,
    qualified name)``, every real Python frame that started directly below
    one of pyinterp's frames and is not pyinterp's own machinery; ``codes``
    is the set of code objects that ran in a real frame at all.
    """
    entries = collections.Counter()
    codes = set()
    keep = []  # code objects stay alive, so ids in ``codes`` stay unique
    c_calls = {}  # id(host frame) -> the C function it is calling

    def profiler(frame, event, arg):
        if event == "call":
            code = frame.f_code
            if id(code) not in codes:
                codes.add(id(code))
                keep.append(code)
            back = frame.f_back
            if back is not None and not _host_frame(frame) and _host_frame(back) \
                    and not _host_machinery(frame) and not _pattern_sub(c_calls.get(id(back))):
                entries[code] += 1
        elif event == "c_call":
            c_calls[id(frame)] = arg
        elif event in ("c_return", "c_exception"):
            c_calls.pop(id(frame), None)

    interpreted = pyinterp.interpret(fn)
    old = sys.getprofile()
    # No automatic collection: gc.callbacks (Hypothesis installs one) and
    # weakref callbacks would otherwise show up as native entries.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    # The profiler stays on the host (it must see what runs natively), not
    # on the program's frames.
    trace_host, config.trace_host = config.trace_host, True
    sys.setprofile(profiler)
    try:
        interpreted(*args)
    except SystemExit:
        pass
    finally:
        sys.setprofile(old)
        config.trace_host = trace_host
        if gc_was_enabled:
            gc.enable()
    return entries, codes


def native_codes(fn, *args):
    """The ids of the code objects that ran during a native run of ``fn``."""
    codes = set()
    keep = []

    def profiler(frame, event, arg):
        if event == "call" and id(frame.f_code) not in codes:
            codes.add(id(frame.f_code))
            keep.append(frame.f_code)

    old = sys.getprofile()
    sys.setprofile(profiler)
    try:
        fn(*args)
    finally:
        sys.setprofile(old)
    return codes, keep


def quiet(fn, *args):
    """Call ``fn(*args)`` with stdout and stderr captured."""
    import contextlib

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return fn(*args)


def unexplained(entries):
    """The entries that are not an allowed native callback."""
    cached = _lru_cached_codes()
    return {_key(code): n for code, n in entries.items()
            if code.co_name not in NATIVE_CALLBACK_NAMES and id(code) not in cached
            and _key(code) not in NATIVE_CALLBACK_FUNCTIONS}


PROFILED = [
    (textwrap_scenarios, (TEXT,), [textwrap.TextWrapper._wrap_chunks, textwrap.TextWrapper._split,
                                   textwrap.dedent]),
    (json_scenarios, (), [json.encoder._make_iterencode, json.scanner.py_make_scanner,
                          json.decoder.py_scanstring, json.decoder.JSONObject,
                          json.JSONEncoder.iterencode]),
    (difflib_scenarios, (OLD, NEW), [difflib.SequenceMatcher.find_longest_match,
                                     difflib.Differ._fancy_replace, difflib.unified_diff]),
    (argparse_scenarios, (), [argparse.ArgumentParser._parse_known_args,
                              argparse.HelpFormatter._format_usage, argparse.ArgumentParser.error]),
    (dataclass_scenarios, (), [dataclasses._process_class, dataclasses._asdict_inner,
                               dataclasses.replace]),
    (enum_scenarios, (), [enum.EnumType.__new__, enum.EnumType.__call__, enum.Flag._missing_,
                          enum._EnumDict.__setitem__, enum.unique]),
    (deepcopy_scenarios, (), [copy.deepcopy, copy._reconstruct, copy._deepcopy_dict]),
    (pprint_scenarios, (), [pprint.PrettyPrinter._format, pprint.PrettyPrinter._safe_repr,
                            pprint._safe_key.__lt__]),
    (typing_scenarios, (), [typing.get_type_hints, typing._eval_type, typing.ForwardRef._evaluate,
                            typing.NamedTupleMeta.__new__, typing._TypedDictMeta.__new__]),
    # 3.12+ tokenize with the C tokenizer; its Python part is a thin wrapper.
    (tokenize_scenarios, (SOURCE,), [tokenize._tokenize if sys.version_info < (3, 12)
                                     else tokenize._generate_tokens_from_c_tokenizer,
                                     tokenize.untokenize]),
    (regex_scenarios, None, [re._parser._parse, re._parser.parse, re._compiler._code,
                             re._compiler._compile]),
    (fraction_scenarios, (), [fractions.Fraction.limit_denominator, fractions.Fraction._richcmp,
                              fractions.Fraction.__str__]),
    (statistics_scenarios, (), [statistics._sum, statistics.NormalDist.inv_cdf,
                                statistics.quantiles]),
    (shlex_scenarios, (), [shlex.shlex.read_token, shlex.split, shlex.quote]),
    (ipaddress_scenarios, (), [ipaddress._BaseNetwork.subnets, ipaddress.ip_network,
                               ipaddress.collapse_addresses]),
    (warnings_scenarios, (), [locale.getdefaultlocale,
                              warnings.catch_warnings.__enter__]),
    (logging_scenarios, (), [logging.Logger._log, logging.Logger.findCaller,
                             logging.Formatter.format, logging.Handler.handle]),
    (email_scenarios, (RAW_EMAIL,), [email.feedparser.FeedParser._parsegen,
                                     email.headerregistry.HeaderRegistry.__call__,
                                     email.generator.Generator._write]),
    (decimal_scenarios, (), [_pydecimal.Decimal.__new__, _pydecimal.Context.divide,
                             _pydecimal.Decimal.ln]),
    (ast_scenarios, (AST_SOURCE,), [ast.unparse, ast.NodeTransformer.generic_visit,
                                    ast.literal_eval, ast._Unparser.traverse]),
    (text_module_scenarios, (), [configparser.RawConfigParser._read,
                                 html.parser.HTMLParser.goahead, urllib.parse.urljoin,
                                 string.Formatter.vformat]),
    (collections_scenarios, (), [collections.UserDict.__getitem__, collections.Counter.update,
                                 collections.ChainMap.__getitem__, Defaulting.__missing__]),
    (itertools_scenarios, (), [_parity, _small, _compare_lengths, _product, _score,
                               Countdown.__next__]),
]


@pytest.mark.parametrize("fn, args, hot", PROFILED, ids=[p[0].__name__ for p in PROFILED])
def test_call_tree_is_interpreted(fn, args, hot):
    hot_codes = [h.__code__ for h in hot]
    if args is None:  # a fresh pattern for each run, so that re's cache never answers
        args = (PATTERNS, fresh_salt())
        native, _ = quiet(native_codes, fn, *args)
        args = (PATTERNS, fresh_salt())
    else:
        native, _ = quiet(native_codes, fn, *args)
    for code in hot_codes:
        assert id(code) in native, "the native run never calls %s: the scenario is stale" % (
            _key(code),)
    entries, ran = quiet(profile_entries, fn, *args)
    for code in hot_codes:
        assert id(code) not in ran, "%s ran natively under pyinterp" % (_key(code),)
    assert not unexplained(entries), "Python code ran natively under pyinterp: %r" % (
        unexplained(entries),)
