"""The listings of the hand-written docs (docs/tutorial.md, the worked
example of docs/fuzzing.md) are real output: regenerating them from
docs/examples/ changes nothing.  They are Python 3.11's output (bytecode and
reprs differ between versions), so the check runs on 3.11 only."""
import sys

import pytest

from pyinterp import doclistings


@pytest.mark.skipif(sys.version_info[:2] != doclistings.LISTING_VERSION,
                    reason="the docs' listings are Python 3.11's output")
def test_doc_listings_are_up_to_date():
    pytest.importorskip("torch")  # the tutorial's capture sections run torch
    assert doclistings.main(["--check"]) == 0, "run: python -m pyinterp.doclistings"


def test_listing_blocks_are_replaced_whole():
    text = ("before\n<!-- listing: a -->\n```text\nold\n```\n<!-- /listing -->\n"
            "<!-- listing: b -->\n<!-- /listing -->\nafter\n")
    producers = {"a": (lambda: "new a\n", "text"), "b": (lambda: "x = 1", "python")}
    assert doclistings.render_file(text, producers) == (
        "before\n<!-- listing: a -->\n```text\nnew a\n```\n<!-- /listing -->\n"
        "<!-- listing: b -->\n```python\nx = 1\n```\n<!-- /listing -->\nafter\n")


def test_every_listing_has_a_producer():
    doclistings.example("listings")
    for path in doclistings.documents():
        for match in doclistings._BLOCK.finditer(path.read_text()):
            assert match.group("name") in doclistings.PRODUCERS, (path.name, match.group("name"))
