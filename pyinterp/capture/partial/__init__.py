"""Partial graphs: a traced function split at a graph break, with a
resume function for the rest (:mod:`.resume`), and entries that run
natively while their callees stay traced (:mod:`.hybrid`)."""
