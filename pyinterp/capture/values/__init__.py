"""Python values the graph computes: floats (:mod:`.scalars`) and ints or
bools (:mod:`.tracked_ints`, :mod:`.int_flow`) that come from tensor data,
kept in the graph while only graph uses consume them; sizes, symbolic or
data-dependent (:mod:`.sizes`), and ints from tensor data that reach
sizes (``t.tolist()``, ``t.item()``, ``int(t)``: :mod:`.listed_ints`),
which are data-dependent sizes."""
