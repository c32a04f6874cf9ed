"""The CPython versions pyinterp supports, and the message that refuses any other.

A leaf module: ``pyinterp/__init__.py`` imports it before anything else to
refuse an unsupported Python, so it uses no syntax newer than Python 3.0.
"""

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
