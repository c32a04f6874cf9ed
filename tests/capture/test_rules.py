"""The capture rule registry (pyinterp/capture/rules.py): each rule once,
keyed by a real opcode or data-model entry point, torch-free to read, and
the tables capture runs from are the registry's."""
import subprocess
import sys

import pytest

from pyinterp import SUPPORTED_VERSIONS, docgen
from pyinterp.capture import rules
from pyinterp.opcodes import registry


def _handled():
    """(opname, version) pairs that have a handler in opcodes/."""
    out = set()
    for (family, name), entries in docgen._registrations().items():
        for versions, fn in entries:
            out.update((name, v) for v in versions)
    return out


def test_opcode_rules_name_opcodes_with_handlers_on_every_version_they_cover():
    handled = _handled()
    for rule in rules.RULES:
        versions = docgen.versions_of(rule.since, rule.until)
        assert versions, "%s covers no supported version" % (rule,)
        if rule.kind in ("variant", "int_model", "float_flow"):
            for v in versions:
                assert (rule.key, v) in handled, "%s: no handler of %s on %d.%d" % (
                    rule.name, rule.key, v[0], v[1])


def test_each_kind_and_key_is_registered_once_and_each_name_names_one_function():
    seen = set()
    for rule in rules.RULES:
        assert (rule.kind, rule.key) not in seen
        seen.add((rule.kind, rule.key))
    for name, group in rules.names().items():
        assert len({r.target for r in group}) == 1, name


@pytest.mark.parametrize("registration, message", [
    (lambda: rules.variant("LOAD_GLOBAL", "variants:load_global"), "registered twice"),
    (lambda: rules.variant("NO_SUCH_OP", "variants:load_global"), "does not execute"),
    (lambda: rules.variant("CACHE", "variants:load_global"), "does not execute"),
    (lambda: rules.data_model("loop"), "not an entry point"),
    (lambda: rules.protocol("__array_function__", "state:Capture.on_torch_function", "x"),
     "unknown protocol"),
    # a name that already names another function
    (lambda: rules.variant("RESUME", "variants:store_global", name="load_global"), "names both"),
])
def test_bad_registrations_are_refused(registration, message):
    before = list(rules.RULES)
    with pytest.raises(RuntimeError, match=message):
        registration()
    assert rules.RULES == before


def test_reading_the_rules_imports_no_torch():
    """docgen lists every rule on Pythons without torch (3.12, 3.13)."""
    code = ("import sys; from pyinterp import docgen; docgen.render(); "
            "assert 'torch' not in sys.modules, 'torch imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_handlers_reach_data_model_rules_through_vm():
    handlers = registry.HANDLERS
    assert [r.name for r in rules.data_model_rules(handlers["LOAD_ATTR"])] == [
        "load_attr", "plain_method"]
    assert [r.name for r in rules.data_model_rules(handlers["IMPORT_FROM"])] == ["load_attr"]
    assert rules.data_model_rules(handlers["IS_OP"]) == []


def test_rules_resolve_to_the_functions_capture_runs():
    pytest.importorskip("torch")
    import importlib

    from pyinterp.capture import interpreter, variants
    from pyinterp.capture.values import scalars, tracked_ints

    for rule in rules.RULES:
        fn = rule.resolve()
        assert callable(fn), rule
        module = importlib.import_module(rule.module)
        assert module.__file__.replace("\\", "/").endswith(rule.location.split(":")[0]), rule
    rules.check_overrides(interpreter.CaptureInterpreter)
    assert variants._VARIANTS == rules.functions("variant")
    assert tracked_ints._MODELS == rules.functions("int_model")
    flow = rules.rules("float_flow")
    assert scalars._MOVES == {k for k, r in flow.items() if r.name == "float_move"}
    assert scalars._CONSUMES_TOP == {k: r.arg for k, r in flow.items()
                                     if r.name == "float_reads_top"}
    assert set(scalars._MOVES) | set(scalars._CONSUMES_TOP) == set(flow)


def test_every_supported_version_is_covered_by_the_version_bounds():
    for rule in rules.RULES:
        assert rule.since in SUPPORTED_VERSIONS
        assert rule.until is None or rule.until in SUPPORTED_VERSIONS
