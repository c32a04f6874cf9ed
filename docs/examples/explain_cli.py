"""A script for ``python -m pyinterp explain`` (README, docs/trace.md):

    python -m pyinterp explain docs/examples/explain_cli.py:model
    python -m pyinterp explain docs/examples/explain_cli.py:scaled --inputs scaled_inputs

``example_inputs()`` gives the arguments of the call to explain (a tuple of
positional arguments, or a dict of keyword arguments); ``--inputs NAME``
names another such function.
"""
import torch


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        y = torch.relu(self.fc(x))
        if y.sum().item() > 0:  # a Python decision on tensor data: a graph break
            y = y * 2
        return y + x


torch.manual_seed(0)
model = Block().eval()


def example_inputs():
    return (torch.randn(2, 8),)


def scaled(x, scale=2.0):
    return x * scale + 1


def scaled_inputs():
    return {"x": torch.ones(3), "scale": 0.5}
