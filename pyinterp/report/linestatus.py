"""What happened at each line of the user's source, over all captures.

A line is *captured* when an op of a graph came from it (any frame of the
op's user stack: a call line counts for the ops of what it calls),
*broken* when a graph break happened there (its kind and hint kept) and
*specialized* when a guard that fixes a Python value or an input tensor's
dtype and shape was made by a read on it.  A line may be all three.
"""
import collections

CAPTURED, BROKEN, SPECIALIZED = "captured", "broken", "specialized"
STATUSES = (CAPTURED, BROKEN, SPECIALIZED)


class LineInfo:
    """One line's ops (their labels, counted), breaks and specializations."""

    def __init__(self):
        self.ops = collections.Counter()
        self.breaks = []
        self.specializations = []

    def statuses(self):
        """The statuses of the line (:data:`STATUSES`), in that order."""
        return [name for name, found in zip(STATUSES, (self.ops, self.breaks,
                                                       self.specializations)) if found]

    def summary(self):
        """A line of text saying what happened here (for a tooltip)."""
        parts = []
        if self.ops:
            parts.append("ops: " + ", ".join("%s x%d" % kv if kv[1] > 1 else kv[0]
                                             for kv in self.ops.most_common()))
        parts += ["break [%s]: %s" % (b["kind"], b["message"]) for b in self.breaks]
        parts += ["specialized: " + s for s in self.specializations]
        return "; ".join(parts)


def line_infos(entries):
    """``{(file, line): LineInfo}`` from the log's entry records."""
    infos = collections.defaultdict(LineInfo)
    for entry in entries:
        for graph in entry.get("graphs", ()):
            for node in graph["nodes"]:
                for place in {tuple(frame) for frame in node.get("stack", ())}:
                    infos[place].ops[node["label"]] += 1
        for brk in entry.get("breaks", ()):
            if not _known(infos, brk):
                infos[(brk.get("file"), brk.get("line"))].breaks.append(brk)
        for spec in entry.get("specializations", ()):
            place = (spec.get("file"), spec.get("line"))
            if spec.get("file") and spec["text"] not in infos[place].specializations:
                infos[place].specializations.append(spec["text"])
    return dict(infos)


def _known(infos, brk):
    """Whether the same break (kind and message) is listed at its line
    already (another capture met it again)."""
    info = infos.get((brk.get("file"), brk.get("line")))
    return info is not None and any(b["kind"] == brk["kind"] and b["message"] == brk["message"]
                                    for b in info.breaks)
