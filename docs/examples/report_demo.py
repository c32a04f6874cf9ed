"""A small model with a graph break and a recompile, for ``python -m
pyinterp report`` (README's Trace section; docs/report.png is its page):

    PYINTERP_TRACE_DIR=/tmp/pyinterp_trace python docs/examples/report_demo.py
    python -m pyinterp report /tmp/pyinterp_trace
"""
import torch
from torch import nn

import pyinterp


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(8, 16), nn.Linear(16, 4)
        self.scale = 0.5

    def forward(self, x):
        h = self.fc1(x).relu()
        labels = h.argmax(dim=1).tolist()     # Python ints from tensor data: a break
        return self.fc2(h) * self.scale, labels


if __name__ == "__main__":
    torch.manual_seed(0)
    model = Tiny().eval()
    fast = pyinterp.trace(model, backend="eager")
    for batch in (2, 3, 3):                   # batch 3: a new shape, a recompile
        x = torch.randn(batch, 8)
        out, labels = fast(x)
        assert torch.allclose(out, model(x)[0]) and labels == model(x)[1]
    print("done: 3 calls, 2 shapes")
