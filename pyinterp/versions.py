"""The CPython versions pyinterp supports, and the message that refuses any other;
the torch versions capture is tested with, and how to install them.

A leaf module: ``pyinterp/__init__.py`` imports it before anything else to
refuse an unsupported Python, so it uses no syntax newer than Python 3.0.
"""
import sys

SUPPORTED_VERSIONS = ((3, 11), (3, 12), (3, 13))
"""The (major, minor) Python versions whose bytecode pyinterp executes."""


def supported_range_text():
    """The supported versions as text: ``3.11, 3.12, 3.13``."""
    return ", ".join("%d.%d" % v for v in SUPPORTED_VERSIONS)


def unsupported_python_message(version_info, implementation="cpython"):
    """Why pyinterp cannot run on this Python, or None if it can."""
    if implementation != "cpython":
        return ("pyinterp interprets CPython bytecode and supports CPython %s; "
                "this is %s." % (supported_range_text(), implementation))
    if tuple(version_info[:2]) not in SUPPORTED_VERSIONS:
        return ("pyinterp supports CPython %s; this is Python %d.%d.%d. "
                "Run it on a supported version."
                % ((supported_range_text(),) + tuple(version_info[:3])))
    return None


TESTED_TORCH_VERSIONS = ((2, 13),)
"""The (major, minor) torch versions pyinterp's capture is tested with (CI
installs ``torch==2.13.0`` on every supported Python)."""


def untested_torch_message(torch_version):
    """A warning's text when ``torch_version`` (``torch.__version__``) is not
    one capture was tested with, else None."""
    try:
        major_minor = tuple(int(part) for part in str(torch_version).split(".")[:2])
    except ValueError:
        major_minor = None
    if major_minor in TESTED_TORCH_VERSIONS:
        return None
    tested = ", ".join("%d.%d" % v for v in TESTED_TORCH_VERSIONS)
    return ("pyinterp.trace is tested with torch %s; this is torch %s. Capture may "
            "break the graph more often, and where it cannot model an operation it "
            "runs it natively; please report anything that differs from eager."
            % (tested, torch_version))


DISTRIBUTION = "pyinterp-capture"
"""pyinterp's name on the package index (``pyinterp`` is taken there)."""


def torch_requirement():
    """The torch versions the ``torch`` extra admits: the tested minor
    versions, ``>=2.13,<2.14`` (pyproject.toml must say the same)."""
    low, high = min(TESTED_TORCH_VERSIONS), max(TESTED_TORCH_VERSIONS)
    return ">=%d.%d,<%d.%d" % (low + (high[0], high[1] + 1))


def missing_torch_message(what):
    """Why ``what`` (``"pyinterp.trace"``) cannot run: torch is not installed."""
    return ("%s needs PyTorch, which is not installed for this Python (%s). Install "
            "pyinterp with its torch extra: pip install '%s[torch]' (torch%s, the "
            "versions capture is tested with). pyinterp.interpret needs no torch."
            % (what, sys.executable, DISTRIBUTION, torch_requirement()))
