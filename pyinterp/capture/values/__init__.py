"""Python values the graph computes: floats (:mod:`.scalars`) and ints or
bools (:mod:`.tracked_ints`, :mod:`.int_flow`) that come from tensor data,
kept in the graph while only graph uses consume them; sizes, symbolic or
data-dependent (:mod:`.sizes`), and the ints of ``t.tolist()``
(:mod:`.listed_ints`), which are data-dependent sizes."""
