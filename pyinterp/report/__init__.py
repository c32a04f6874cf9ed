"""``python -m pyinterp report DIR``: a run's log (:mod:`pyinterp.capture.runlog`)
as one self-contained HTML page, in the spirit of ``tlparse`` for Dynamo.

* :mod:`.readlog` reads the log files back (captures, their functions'
  source);
* :mod:`.linestatus` tells each source line's status: captured (an op of a
  graph came from it), broken (a graph break, with kind and hint) or
  specialized (a guard fixes a value or an input's shape it read);
* :mod:`.graphsvg` draws a graph as a layered DAG in SVG;
* :mod:`.timeline` draws the captures and recompiles over time in SVG;
* :mod:`.page` puts it all on one page (inline CSS, SVG and a little
  JavaScript; no network, no other file).

Torch-free: the report reads JSON only.
"""
