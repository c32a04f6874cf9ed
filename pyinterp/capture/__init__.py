"""Graph capture: ``trace`` runs a function once in the interpreter with
capture on, records its tensor ops in an FX graph and its outside reads and
writes in the RefGraph, and caches guard and mock bytecode.

Every capture rule is registered once in :mod:`.rules`; the run's state is
a few records with one owner each (:class:`.state.Capture`).  Importing
this package imports no torch: :mod:`.traced` loads it on the first trace.
"""
