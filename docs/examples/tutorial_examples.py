"""The example code of docs/tutorial.md (its listings are generated from
these functions by ``python -m pyinterp.doclistings``)."""
import torch
from torch import nn


# --- Part 1: the interpreter -------------------------------------------------

def area(width, height):
    scale = 2
    return width * height * scale


def safe_ratio(a, b):
    try:
        return a / b
    except ZeroDivisionError:
        return 0.0


def square(x):
    return x * x


def sum_of_squares(a, b):
    return square(a) + square(b)


# --- Part 2: capture ---------------------------------------------------------

class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 2)
        self.factor = 0.5
        self.calls = []

    def forward(self, x):
        self.calls.append(x.shape[0])
        return torch.relu(self.linear(x)) * self.factor


def with_break(x):
    y = x + 1
    print("halfway")                 # fine: replayed by the mock
    n = int(y.sum())                 # a Python int from tensor data,
    return y * n, n                  # returned as a Python int: a break


def clip_if_large(x):
    if x.sum() > 0:                  # a tensor condition
        y = x * 2
    else:
        y = x - 1
    return y


def example_input(*shape):
    torch.manual_seed(0)
    return torch.randn(*shape)
