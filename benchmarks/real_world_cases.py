"""The cases of ``benchmarks/real_world.py`` (issue 18): small modules written
by us in the style of real GitHub code, grouped by the idiom they exercise.

``CASES`` is a list of :class:`RealCase`.  For each case:

* ``case.build()`` returns a fresh ``nn.Module`` with weights seeded by
  ``torch.manual_seed(0)`` (every build is identical), in training mode;
* ``case.inputs(seed)`` returns the positional arguments of one call, fresh
  values per seed from a seeded ``torch.Generator`` (values depend on the
  seed, and some cases pick them so that data-dependent branches go both
  ways over the seeds; the ``*_varying`` factories also change the batch
  size, sequence length or dtype, so a cache hit must check them);
* :func:`reset_globals` puts the module-level state some cases change (a
  global step counter, a mask cache) back to its start;
* ``case.between(model)``, if given, runs on the module before every call
  but the first (``model.eval()``: a hit must notice the mode change);
* ``case.train``: the module trains; the benchmark then backpropagates the
  sum of its floating outputs and compares the gradients of the parameters
  and of the floating inputs (``requires_grad`` is set on those).

The categories are those of issue 18, in this order: ``autograd_function``,
``legacy_tensors``, ``dynamic_shapes``, ``idioms``, ``graphmend`` and
``control`` (ordinary modules), then ``more_idioms``: other things real
training code does (hooks, checkpointing, lazy state, parametrizations,
distributions, packed sequences, in-place changes of an input...).  ``quick=True`` marks the cases of
``--quick``.
"""
import dataclasses
import math
import random
import warnings
from typing import Callable, Optional, Tuple

import _harness as H
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable
from torch.autograd.function import once_differentiable

CATEGORIES = ["autograd_function", "legacy_tensors", "dynamic_shapes", "idioms",
              "graphmend", "control", "more_idioms"]
DIM = 8


@dataclasses.dataclass
class RealCase:
    category: str
    name: str
    description: str
    make: Callable[[], nn.Module]
    make_inputs: Callable[[torch.Generator, int], Tuple]
    train: bool = True
    quick: bool = False
    between: Optional[Callable[[nn.Module], None]] = None
    rtol: float = 1e-4
    atol: float = 1e-5

    def build(self):
        torch.manual_seed(0)
        return self.make().train()

    def inputs(self, seed):
        gen = torch.Generator().manual_seed(1800 + seed)
        args = self.make_inputs(gen, seed)
        if self.train:
            args = tuple(a.requires_grad_() if isinstance(a, torch.Tensor)
                         and a.is_floating_point() else a for a in args)
        return args


CASES = []


def case(category, name, description, make_inputs, **options):
    """Decorator: register a module class (built with no arguments) as a case."""
    assert category in CATEGORIES, category

    def wrap(cls):
        CASES.append(RealCase(category, name, description, cls, make_inputs, **options))
        return cls

    return wrap


def get_case(name):
    return H.find_named(CASES, name)


# ---------------------------------------------------------------------------
# Input factories
# ---------------------------------------------------------------------------

def rows(gen, seed):
    return (torch.randn(4, DIM, generator=gen),)


def signed_rows(gen, seed):
    """Rows with a positive mean on even seeds, a negative one on odd seeds."""
    x = torch.randn(4, DIM, generator=gen).abs() + 0.1
    return (x if seed % 2 == 0 else -x,)


def images(gen, seed):
    return (torch.randn(2, 3, 8, 8, generator=gen),)


def gray_images(gen, seed):
    return (torch.randn(2, 1, 8, 8, generator=gen),)


def images_varying(gen, seed):
    """Batch 2, 3, 4, 2, 3... on seeds 0, 1, 2, 3, 4..."""
    return (torch.randn(2 + seed % 3, 3, 8, 8, generator=gen),)


def sequences_varying(gen, seed):
    """Batch 2 + seed % 3, length 5 - seed % 3."""
    return (torch.randn(2 + seed % 3, 5 - seed % 3, DIM, generator=gen),)


def rows_varying_dtype(gen, seed):
    """float32 on seed 0, float64 after."""
    return (torch.randn(4, DIM, generator=gen, dtype=torch.float64 if seed else torch.float32),)


def to_eval(model):
    model.eval()


def sequences(gen, seed):
    return (torch.randn(2, 5, DIM, generator=gen),)


def tokens(gen, seed):
    return (torch.randint(0, 20, (2, 6), generator=gen),)


def rows_and_lengths(gen, seed):
    lengths = torch.tensor([3, 1, 4, 2]) if seed % 2 == 0 else torch.tensor([2, 4, 1, 3])
    return torch.randn(4, 5, DIM, generator=gen), lengths


def rows_sometimes_kept(gen, seed):
    """Rows whose first column passes 0.5 in rows 0 and 2 on even seeds and
    in no row on odd seeds."""
    x = torch.randn(4, DIM, generator=gen)
    kept = (torch.arange(4) % 2 == 0) & (seed % 2 == 0)
    x[:, 0] = torch.where(kept, x[:, 0].abs() + 0.6, -x[:, 0].abs())
    return (x,)


def padded_batch(gen, seed):
    """Padded sequences (batch 4, padded length 6) whose longest length is
    3, 3, 4, 5, 3... on seeds 0, 1, 2, 3, 4...: a trim to it must not be a
    constant."""
    lengths = torch.tensor([2 + seed % 4, 1, 3, 2])
    return torch.randn(4, 6, DIM, generator=gen), lengths


def rows_and_labels(gen, seed):
    return torch.randn(6, DIM, generator=gen), torch.randint(0, 4, (6,), generator=gen)


def large_vector(gen, seed):
    """Norm about 4**(seed+1): the while loop runs a seed-dependent count."""
    x = torch.randn(DIM, generator=gen)
    return (x / x.norm() * 4.0 ** (seed + 1),)


# ---------------------------------------------------------------------------
# 1. Custom torch.autograd.Function
# ---------------------------------------------------------------------------

class RoundSTE(torch.autograd.Function):
    """Straight-through estimator: round forward, identity backward."""

    @staticmethod
    def forward(ctx, x):
        return torch.round(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


@case("autograd_function", "ste_round", "quantized linear with a straight-through round",
      rows, quick=True)
class QuantLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)
        self.scale = 4.0

    def forward(self, x):
        w = RoundSTE.apply(self.fc.weight * self.scale) / self.scale
        return F.linear(x, w, self.fc.bias)


class SwishImplementation(torch.autograd.Function):
    """Memory-efficient swish (EfficientNet-PyTorch): saves only the input."""

    @staticmethod
    def forward(ctx, i):
        result = i * torch.sigmoid(i)
        ctx.save_for_backward(i)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        i = ctx.saved_tensors[0]
        sigmoid_i = torch.sigmoid(i)
        return grad_output * (sigmoid_i * (1 + i * (1 - sigmoid_i)))


class MemoryEfficientSwish(nn.Module):
    def forward(self, x):
        return SwishImplementation.apply(x)


@case("autograd_function", "swish_mem", "conv block with a memory-efficient swish",
      images)
class SwishConvBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.act = MemoryEfficientSwish()

    def forward(self, x):
        return self.act(self.conv(x))


class GradientReversalFn(torch.autograd.Function):
    """Domain-adversarial gradient reversal with a Python float coefficient."""

    @staticmethod
    def forward(ctx, x, lambd):
        ctx.lambd = lambd
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.neg() * ctx.lambd, None


@case("autograd_function", "grad_reverse", "DANN head behind a gradient reversal layer",
      rows, quick=True)
class DomainClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Linear(DIM, DIM)
        self.domain = nn.Linear(DIM, 2)
        self.lambd = 0.3

    def forward(self, x):
        h = torch.relu(self.features(x))
        return self.domain(GradientReversalFn.apply(h, self.lambd))


class ClampWithGrad(torch.autograd.Function):
    """Clamp whose gradient passes through where the input was pushed back in range."""

    @staticmethod
    def forward(ctx, x, low, high):
        ctx.save_for_backward(x)
        ctx.low, ctx.high = low, high
        return x.clamp(low, high)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        pushing_in = ((x < ctx.low) & (grad_output < 0)) | ((x > ctx.high) & (grad_output > 0))
        inside = (x >= ctx.low) & (x <= ctx.high)
        return grad_output * (inside | pushing_in).to(grad_output.dtype), None, None


@case("autograd_function", "clamp_grad", "linear layer with a clamp that keeps gradients",
      rows)
class ClampedProjection(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        return ClampWithGrad.apply(self.fc(x), -0.5, 0.5) * 2


class FakeQuantize(torch.autograd.Function):
    """Uniform fake quantization with a saved in-range mask (QAT style)."""

    @staticmethod
    def forward(ctx, x, scale, zero_point, qmin=0, qmax=255):
        q = torch.clamp(torch.round(x / scale) + zero_point, qmin, qmax)
        ctx.save_for_backward((q > qmin) & (q < qmax))
        return (q - zero_point) * scale

    @staticmethod
    def backward(ctx, grad_output):
        (mask,) = ctx.saved_tensors
        return grad_output * mask, None, None, None, None


@case("autograd_function", "fake_quant", "activation fake-quantizer with scale/zero point",
      rows)
class QATBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        return FakeQuantize.apply(self.fc(x), 0.05, 128)


class SortWithIndices(torch.autograd.Function):
    """Sort returning the permutation as a non-differentiable output."""

    @staticmethod
    def forward(ctx, x):
        values, indices = torch.sort(x, dim=-1)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        return values, indices

    @staticmethod
    def backward(ctx, grad_values, grad_indices):
        (indices,) = ctx.saved_tensors
        grad = torch.zeros_like(grad_values)
        return grad.scatter(-1, indices, grad_values)


@case("autograd_function", "sort_nondiff", "sorted pooling; indices marked non-differentiable",
      rows)
class SortPool(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        values, indices = SortWithIndices.apply(self.fc(x))
        return values[:, -3:].sum(-1), indices


class SquareOnce(torch.autograd.Function):
    """A backward written with NumPy-free tensor ops, but marked once_differentiable."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return 2 * x * grad_output


@case("autograd_function", "once_diff", "energy term with a once_differentiable backward",
      rows)
class EnergyHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, 4)

    def forward(self, x):
        return SquareOnce.apply(self.fc(x)).mean(-1)


class LinearFunction(torch.autograd.Function):
    """The linear function of PyTorch's "Extending autograd" tutorial."""

    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


@case("autograd_function", "needs_input_grad", "tutorial LinearFunction (needs_input_grad)",
      rows, quick=True)
class TutorialLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(4, DIM) * 0.1)
        self.bias = nn.Parameter(torch.zeros(4))

    def forward(self, x):
        return LinearFunction.apply(x, self.weight, self.bias)


class BinarizeSign(torch.autograd.Function):
    """XNOR-Net style sign with a hardtanh straight-through gradient."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sign()

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        grad = grad_output.clone()
        grad[x.abs() > 1] = 0
        return grad


@case("autograd_function", "binarize", "binary activations (sign, hardtanh STE)", rows)
class BinaryMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(DIM, DIM)
        self.fc2 = nn.Linear(DIM, 2)

    def forward(self, x):
        return self.fc2(BinarizeSign.apply(self.fc1(x)))


class MulConstant(torch.autograd.Function):
    """New-style Function: forward without ctx, setup_context separate."""

    @staticmethod
    def forward(x, constant):
        return x * constant

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.constant = inputs[1]

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.constant, None


@case("autograd_function", "setup_context", "new-style Function with setup_context", rows)
class ScaledResidual(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        return x + MulConstant.apply(self.fc(x), 0.5)


class ReshapeKeepShape(torch.autograd.Function):
    """Flattens, remembering the input shape on ctx for the backward."""

    @staticmethod
    def forward(ctx, x):
        ctx.shape = x.shape
        return x.reshape(x.shape[0], -1)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.reshape(ctx.shape)


@case("autograd_function", "ctx_shape", "flatten Function storing the shape on ctx", images)
class FlattenHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 2, 3, padding=1)
        self.fc = nn.Linear(2 * 8 * 8, 3)

    def forward(self, x):
        return self.fc(ReshapeKeepShape.apply(self.conv(x)))


class InplaceLeakyReLU(torch.autograd.Function):
    """In-place activation: the input is modified and marked dirty."""

    @staticmethod
    def forward(ctx, x, slope):
        ctx.slope = slope
        negative = x < 0
        x[negative] = x[negative] * slope
        ctx.mark_dirty(x)
        ctx.save_for_backward(negative)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        (negative,) = ctx.saved_tensors
        return torch.where(negative, grad_output * ctx.slope, grad_output), None


@case("autograd_function", "mark_dirty", "in-place leaky ReLU Function (mark_dirty)", rows)
class InplaceActMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(DIM, DIM)
        self.fc2 = nn.Linear(DIM, 2)

    def forward(self, x):
        return self.fc2(InplaceLeakyReLU.apply(self.fc1(x), 0.1))


class ScaleGrad(torch.autograd.Function):
    """Identity forward, gradient scaled by a per-call Python float."""

    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return x.clone()

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.scale, None


@case("autograd_function", "apply_in_loop", "one Function applied per layer in a loop",
      rows)
class DeepSupervision(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(DIM, DIM) for _ in range(3))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = ScaleGrad.apply(torch.relu(layer(x)), 1.0 / (i + 1))
        return x


# ---------------------------------------------------------------------------
# 2. Legacy and less common ways to make or reach tensors
# ---------------------------------------------------------------------------

@case("legacy_tensors", "sobel", "Sobel edge filter from torch.Tensor([[1, 0, -1], ...])",
      gray_images, quick=True)
class SobelEdges(nn.Module):
    def forward(self, x):
        kx = torch.Tensor([[1, 0, -1], [2, 0, -2], [1, 0, -1]]).view(1, 1, 3, 3)
        ky = torch.Tensor([[1, 2, 1], [0, 0, 0], [-1, -2, -1]]).view(1, 1, 3, 3)
        gx = F.conv2d(x, kx, padding=1)
        gy = F.conv2d(x, ky, padding=1)
        return torch.sqrt(gx ** 2 + gy ** 2 + 1e-6)


@case("legacy_tensors", "float_tensor_norm", "ImageNet normalization with torch.FloatTensor(list)",
      images)
class Normalize(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 1)

    def forward(self, x):
        mean = torch.FloatTensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
        std = torch.FloatTensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)
        return self.conv((x - mean) / std)


@case("legacy_tensors", "variable", "input wrapped in torch.autograd.Variable (PyTorch 0.3 code)",
      rows, quick=True)
class VariableWrap(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        x = Variable(x)
        return torch.tanh(self.fc(x))


@case("legacy_tensors", "type_of_other", "mask.type(x.type()) before multiplying", rows)
class TypeOfOther(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        h = self.fc(x)
        mask = (h > 0).type(h.type())
        return h * mask + x


@case("legacy_tensors", "type_as", "padding mask .type_as(x) for a masked mean",
      sequences_varying)
class MaskedMeanTypeAs(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        mask = (x.abs().sum(-1) > 2.0).type_as(x).unsqueeze(-1)
        h = self.fc(x) * mask
        return h.sum(1) / mask.sum(1).clamp(min=1)


@torch.jit.script
def fused_gelu(x):
    return x * 0.5 * (1.0 + torch.erf(x / 1.41421))


@case("legacy_tensors", "jit_script", "@torch.jit.script GELU called from forward", rows)
class ScriptedGeluFFN(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(DIM, 16)
        self.fc2 = nn.Linear(16, DIM)

    def forward(self, x):
        return self.fc2(fused_gelu(self.fc1(x)))


@case("legacy_tensors", "long_tensor_index", "index_select with torch.LongTensor([...])", rows)
class PickFeatures(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        idx = torch.LongTensor([0, 3, 5])
        return self.fc(x.index_select(1, idx))


@case("legacy_tensors", "tensor_new", "x.new(size).fill_(...) and x.new_zeros for a state",
      sequences_varying)
class NewStateRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(DIM, DIM)

    def forward(self, x):
        h = x.new(x.size(0), DIM).fill_(0.1)
        out = x.new_zeros(x.size(0), DIM)
        for t in range(x.size(1)):
            h = self.cell(x[:, t], h)
            out = out + h
        return out


@case("legacy_tensors", "type_string", "x.type('torch.FloatTensor') on an int tensor",
      tokens, train=False)
class TokenFeatures(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 3)

    def forward(self, ids):
        feats = ids.type("torch.FloatTensor") / 20.0
        return self.fc(feats)


@case("legacy_tensors", "data_read", "weight.data read for a norm (weight-norm style)", rows)
class WeightDataNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        norm = self.fc.weight.data.norm(dim=1, keepdim=True)
        return F.linear(x, self.fc.weight / norm, self.fc.bias)


@case("legacy_tensors", "tensor_sizes", "h = torch.Tensor(batch, hidden).zero_() initial state",
      sequences)
class LegacyInitState(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(DIM, DIM)

    def forward(self, x):
        h = torch.Tensor(x.size(0), DIM).zero_()
        for t in range(x.size(1)):
            h = self.cell(x[:, t], h)
        return h


@case("legacy_tensors", "variable_no_grad", "Variable(torch.zeros(...), requires_grad=False)",
      rows)
class VariableMemory(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        memory = Variable(torch.zeros(x.size(0), DIM), requires_grad=False)
        return self.fc(x) + memory


# ---------------------------------------------------------------------------
# 3. Sizes that depend on data, feeding only tensor ops
# ---------------------------------------------------------------------------

@case("dynamic_shapes", "mask_max", "d[mask].max() over positive distances", rows, quick=True)
class MaskedMax(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        d = self.fc(x)
        mask = d > 0
        return d[mask].max() + d.mean()


@case("dynamic_shapes", "where_one_arg", "torch.where(cond) with one argument", rows)
class WhereIndices(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        h = self.fc(x)
        rows_, cols = torch.where(h > 0.2)
        return h[rows_, cols].sum() + cols.float().mean()


@case("dynamic_shapes", "nonzero", "nonzero() rows feeding index_select", rows, quick=True)
class NonzeroSelect(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        h = self.fc(x)
        idx = (h.sum(-1) > 0).nonzero().squeeze(1)
        return h.index_select(0, idx).sum(0)


@case("dynamic_shapes", "masked_loss", "token loss averaged over the valid positions",
      rows_and_labels)
class MaskedTokenLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, 4)

    def forward(self, x, labels):
        logits = self.fc(x)
        loss = F.cross_entropy(logits, labels, reduction="none")
        valid = labels != 0
        return loss[valid].mean()


@case("dynamic_shapes", "nonzero_tuple", "nonzero(as_tuple=True) scatter of selected rows",
      rows)
class NonzeroTuple(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        h = self.fc(x)
        (idx,) = (h[:, 0] > 0).nonzero(as_tuple=True)
        return torch.zeros_like(h).index_add(0, idx, h[idx] * 2)


@case("dynamic_shapes", "masked_select", "torch.masked_select(...).sum()", rows)
class MaskedSelectSum(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        h = self.fc(x)
        return torch.masked_select(h, h.abs() > 0.3).pow(2).sum()


@case("dynamic_shapes", "row_filter", "x[x.sum(1) > 0] through a Linear", signed_rows)
class RowFilter(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, 3)

    def forward(self, x):
        kept = x[x[:, 0] > 0]
        return self.fc(kept).sum(0) + self.fc.bias


@case("dynamic_shapes", "unique_embed", "torch.unique(labels) embedded and pooled",
      rows_and_labels)
class UniqueLabelEmbed(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(4, DIM)

    def forward(self, x, labels):
        present = torch.unique(labels)
        return x.mean(0) + self.emb(present).mean(0)


@case("dynamic_shapes", "score_threshold", "detector: boxes[scores > t], weighted sum", rows)
class ScoreThreshold(nn.Module):
    def __init__(self):
        super().__init__()
        self.score = nn.Linear(DIM, 1)
        self.box = nn.Linear(DIM, 4)

    def forward(self, x):
        scores = torch.sigmoid(self.score(x)).squeeze(-1)
        boxes = self.box(x)
        keep = scores > 0.5
        return (boxes[keep] * scores[keep, None]).sum(0)


@case("dynamic_shapes", "argwhere", "torch.argwhere(...) coordinates averaged", images)
class ArgwhereCentroid(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 1, 3, padding=1)

    def forward(self, x):
        h = self.conv(x)
        coords = torch.argwhere(h[0, 0] > 0).float()
        return coords.mean(0) + h.mean()


@case("dynamic_shapes", "trim_padding", "int(lengths.max()) trims a padded batch, masked mean",
      padded_batch)
class TrimPadding(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x, lengths):
        max_len = int(lengths.max())
        x = x[:, :max_len]
        mask = torch.arange(max_len)[None, :] < lengths[:, None]
        h = self.fc(x) * mask[..., None]
        return h.sum(1) / lengths[:, None]


@case("dynamic_shapes", "item_slice", "tokens[:, :lengths.max().item()] embedded", padded_batch)
class ItemSlice(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(DIM, 4)

    def forward(self, x, lengths):
        n = lengths.max().item()
        return self.proj(x[:, :n]).mean(1)


@case("dynamic_shapes", "topk_count", "keep the top int((scores > 0).sum()) boxes, at least one",
      rows)
class TopkCount(nn.Module):
    def __init__(self):
        super().__init__()
        self.score = nn.Linear(DIM, 1)

    def forward(self, x):
        scores = self.score(x).squeeze(-1)
        k = int((scores > 0).sum().clamp(min=1))
        top = scores.topk(k)
        return (x[top.indices] * top.values[:, None]).sum(0)


@case("dynamic_shapes", "split_pad", "packed tokens split by lengths.tolist(), pad_sequence",
      padded_batch)
class SplitAndPad(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x, lengths):
        tokens = self.fc(x.flatten(0, 1))[: int(lengths.sum())]  # (a packed stream)
        pieces = torch.split(tokens, lengths.tolist())
        padded = nn.utils.rnn.pad_sequence(pieces, batch_first=True)
        return padded.sum(1) / lengths[:, None]


@case("dynamic_shapes", "empty_guard", "detector: a constant answer when no row passes the "
      "threshold (if keep.shape[0] == 0)", rows_sometimes_kept)
class EmptyGuard(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(DIM, DIM)

    def forward(self, x):
        keep = (x[:, 0] > 0.5).nonzero()
        if keep.shape[0] == 0:  # (a decision on a data-dependent size)
            return self.head.bias * 0
        return self.head(x[keep[:, 0]]).mean(0)


@case("dynamic_shapes", "count_to_helper", "int(lengths[0]) handed to a helper that branches "
      "on it", rows_and_lengths)
class CountToHelper(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def pool(self, h, n):
        if n > 2:  # (a decision on an int from tensor data, in another frame)
            return h[:, :n].mean(1)
        return h[:, 0]

    def forward(self, x, lengths):
        return self.pool(self.fc(x), int(lengths[0]))


def rows_and_labels(gen, seed):
    """Rows and class labels; the count the model gets right differs by seed."""
    return torch.randn(8, DIM, generator=gen), torch.randint(0, DIM, (8,), generator=gen)


@case("dynamic_shapes", "correct_count", "a classifier step returning its loss and the number "
      "right, (pred == y).sum().item()", rows_and_labels)
class CorrectCount(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x, labels):
        logits = self.fc(x)
        correct = (logits.argmax(1) == labels).sum().item()  # (an int in the result)
        return F.cross_entropy(logits, labels), correct


@case("dynamic_shapes", "count_in_helper", "a classifier step whose count of right answers "
      "comes from a helper method's .item()", rows_and_labels)
class CountInHelper(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def count_right(self, logits, labels):
        return (logits.argmax(1) == labels).sum().item()

    def forward(self, x, labels):
        logits = self.fc(x)
        return F.cross_entropy(logits, labels), self.count_right(logits, labels)


@case("dynamic_shapes", "best_candidate", "the best of several heads picked in Python, "
      "max(outs, key=lambda o: o.mean().item())", rows)
class BestCandidate(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleList(nn.Linear(DIM, DIM) for _ in range(3))

    def forward(self, x):
        outs = [head(x) for head in self.heads]
        return max(outs, key=lambda o: o.mean().item())  # (the key's order is the data's)


# ---------------------------------------------------------------------------
# 4. Smaller idioms
# ---------------------------------------------------------------------------

@case("idioms", "data_assign", "WGAN weight clipping with weight.data = ...", rows, quick=True)
class ClippedCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, 1)

    def forward(self, x):
        self.fc.weight.data = self.fc.weight.data.clamp(-0.1, 0.1)
        return self.fc(x)


@case("idioms", "equal_branch", "torch.equal(...) as a Python bool in a branch (both ways)",
      signed_rows)
class NonNegativeCheck(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        if torch.equal(x, x.abs()):
            x = torch.sqrt(x)
        else:
            x = x * 0.5
        return self.fc(x)


@case("idioms", "result_type", "torch.result_type to pick the output dtype (float32, float64)",
      rows_varying_dtype)
class ResultTypeCast(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        dtype = torch.result_type(x, 2.0)
        return self.fc(x.float()).to(dtype) * 2.0


def _check_batch(x):
    if x.dim() == 2:
        warnings.warn("2-D input: treating rows as a batch", UserWarning, stacklevel=2)
    return x


@case("idioms", "warn_stacklevel", "warnings.warn(..., stacklevel=2) from a helper", rows,
      quick=True)
class WarnsOnInput(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        x = _check_batch(x)
        return self.fc(x)


@case("idioms", "fstring_tensor", "a tensor in a printed f-string", rows)
class PrintsStats(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        h = self.fc(x)
        print(f"hidden mean {h.mean():.4f}, max {h.max()}")
        return h.relu()


@case("idioms", "np_prod", "int(np.prod(x.shape[1:])) to flatten; / np.prod(x.shape)",
      images_varying)
class NumpyFlatten(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3 * 8 * 8, 4)

    def forward(self, x):
        n = int(np.prod(x.shape[1:]))
        return self.fc(x.view(-1, n)) / np.prod(x.shape)


@case("idioms", "random_crop", "random.randint crop offset", images, quick=True)
class RandomCrop(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 2, 3)

    def forward(self, x):
        i = random.randint(0, 2)
        j = random.randint(0, 2)
        return self.conv(x[:, :, i:i + 6, j:j + 6])


@case("idioms", "random_flip", "random.getrandbits(1) horizontal flip", images)
class RandomFlip(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 2, 3, padding=1)

    def forward(self, x):
        if random.getrandbits(1):
            x = x.flip(-1)
        return self.conv(x)


@case("idioms", "ema_no_grad", "EMA buffer update under torch.no_grad() in forward", rows)
class EMAStats(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)
        self.register_buffer("running", torch.zeros(DIM))

    def forward(self, x):
        h = self.fc(x)
        with torch.no_grad():
            self.running.mul_(0.9).add_(h.mean(0) * 0.1)
        return h - self.running


@case("idioms", "getattr_fstring", "getattr(self, f'layer{i}') over numbered layers", rows)
class NumberedLayers(nn.Module):
    def __init__(self):
        super().__init__()
        for i in range(3):
            setattr(self, f"layer{i}", nn.Linear(DIM, DIM))

    def forward(self, x):
        for i in range(3):
            x = torch.relu(getattr(self, f"layer{i}")(x))
        return x


@case("idioms", "step_counter", "self.step += 1 driving a warm-up scale", rows)
class WarmupScale(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)
        self.step = 0

    def forward(self, x):
        self.step += 1
        scale = min(1.0, self.step / 4)
        return self.fc(x) * scale


# ---------------------------------------------------------------------------
# 5. GraphMend / Dynamo break causes
# ---------------------------------------------------------------------------

@case("graphmend", "while_norm", "while x.norm() > 1 and n < 20: shrink", large_vector,
      quick=True)
class ShrinkToUnit(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        n = 0
        while x.norm() > 1 and n < 20:
            x = x * 0.5
            n += 1
        return self.fc(x)


@case("graphmend", "if_submodules", "data-dependent if choosing a submodule (training)",
      signed_rows, quick=True)
class RoutedBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.pos = nn.Linear(DIM, DIM)
        self.neg = nn.Sequential(nn.Linear(DIM, DIM), nn.Tanh())

    def forward(self, x):
        if x.mean() > 0:
            h = self.pos(x)
        else:
            h = self.neg(x)
        return h * 2


@case("graphmend", "tolist_lengths", "lengths.tolist() slicing a padded batch",
      rows_and_lengths)
class LengthPool(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x, lengths):
        h = self.fc(x)
        pooled = [h[i, :n].mean(0) for i, n in enumerate(lengths.tolist())]
        return torch.stack(pooled)


@case("graphmend", "int_of_float", "int() of a float tensor as a repeat count",
      large_vector)
class AdaptiveDepth(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        steps = min(int(x.norm() / 4 + 0.5), 3)
        h = x
        for _ in range(steps):
            h = torch.tanh(self.fc(h))
        return h


@case("graphmend", "numpy_round_trip", "x.numpy() -> np.clip -> torch.from_numpy", rows)
class NumpyClip(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        h = self.fc(x)
        clipped = np.clip(h.detach().numpy(), -0.5, 0.5) * 2
        return h + torch.from_numpy(clipped)


@case("graphmend", "numpy_standardize", "per-feature mean/std in NumPy, back with from_numpy",
      rows)
class NumpyStandardize(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        h = self.fc(x)
        a = h.detach().cpu().numpy()
        scale = 1.0 / (a.std(axis=0) + 1e-5)
        shift = -a.mean(axis=0) * scale
        return h * torch.from_numpy(scale) + torch.from_numpy(shift)


@case("graphmend", "numpy_softmax_mask", "np.where mask and a NumPy softmax as weights", rows)
class NumpySoftmaxMask(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        h = self.fc(x)
        a = h.detach().numpy()
        e = np.exp(a - a.max(axis=1, keepdims=True))
        weights = e / e.sum(axis=1, keepdims=True)
        mask = np.where(a > 0, 1.0, 0.1).astype(np.float32)
        return h * torch.from_numpy(weights * mask)


@case("graphmend", "numpy_percentile", "float(np.percentile(...)) as a clamp bound", rows)
class NumpyPercentile(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        h = self.fc(x)
        bound = float(np.percentile(np.abs(h.detach().numpy()), 90))
        return torch.clamp(h, -bound, bound)


@case("graphmend", "item_scale", "x / max(x.std().item(), eps)", rows)
class ItemNormalize(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        h = self.fc(x)
        return h / max(h.std().item(), 1e-3)


@case("graphmend", "early_exit", "if (x.abs() < eps).all(): return x", signed_rows)
class EarlyExit(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        if (x.abs() < 1e-3).all():
            return x
        return self.fc(x)


@case("graphmend", "fixed_point", "fixed-point iteration with a break on convergence", rows)
class FixedPoint(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)
        with torch.no_grad():
            self.fc.weight.mul_(0.3)

    def forward(self, x):
        z = torch.zeros_like(x)
        for _ in range(30):
            z_next = torch.tanh(self.fc(z) + x)
            if (z_next - z).norm() < 1e-4:
                break
            z = z_next
        return z_next


@case("graphmend", "per_row_branch", "for row in x: if row.sum() > 0", signed_rows)
class PerRowBranch(nn.Module):
    def __init__(self):
        super().__init__()
        self.pos = nn.Linear(DIM, DIM)
        self.neg = nn.Linear(DIM, DIM)

    def forward(self, x):
        outs = []
        for row in x:
            outs.append(self.pos(row) if row.sum() > 0 else self.neg(row))
        return torch.stack(outs)


@case("graphmend", "any_guard", "if mask.any(): masked_fill", rows)
class AnyGuard(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        h = self.fc(x)
        mask = h > 1.0
        if mask.any():
            h = h.masked_fill(mask, 1.0)
        return h


# ---------------------------------------------------------------------------
# 6. Control: ordinary modules
# ---------------------------------------------------------------------------

@case("control", "mlp", "three-layer MLP with GELU", rows, quick=True)
class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(DIM, 16), nn.GELU(), nn.Linear(16, 16), nn.GELU(),
                                 nn.Linear(16, 2))

    def forward(self, x):
        return self.net(x)


@case("control", "cnn_bn_eval", "the same CNN, model.eval() before the later calls", images,
      between=to_eval)
@case("control", "cnn_bn", "conv + BatchNorm (training mode) + pooling", images, quick=True)
class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(8)
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.max_pool2d(x, 2)
        x = F.relu(self.bn2(self.conv2(x)))
        return self.head(F.adaptive_avg_pool2d(x, 1).flatten(1))


@case("control", "attention", "hand-written multi-head self-attention block", sequences)
class AttentionBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = 2
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.out = nn.Linear(DIM, DIM)
        self.norm = nn.LayerNorm(DIM)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.norm(x)).chunk(3, dim=-1)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(c // self.heads)
        att = att.softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, c)
        return x + self.out(y)


@case("control", "lstm", "nn.LSTM encoder, last hidden state to a classifier", sequences)
class LSTMClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(DIM, 12, batch_first=True)
        self.head = nn.Linear(12, 3)

    def forward(self, x):
        out, (h, c) = self.lstm(x)
        return self.head(h[-1]) + out.mean()


@case("control", "gru", "bidirectional nn.GRU with mean pooling", sequences)
class GRUEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(DIM, 6, batch_first=True, bidirectional=True)
        self.head = nn.Linear(12, 2)

    def forward(self, x):
        out, _ = self.gru(x)
        return self.head(out.mean(1))


class ResidualBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc1 = nn.Linear(dim, dim)
        self.fc2 = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        return x + self.fc2(F.relu(self.fc1(self.norm(x))))


@case("control", "resnet_loop", "residual blocks in a ModuleList, Python for loop", rows)
class ResidualStack(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(ResidualBlock(DIM) for _ in range(4))

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


@case("control", "transformer_layer", "nn.TransformerEncoderLayer (dropout 0)", sequences)
class TinyTransformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(DIM, 2, dim_feedforward=16, dropout=0.0,
                                                batch_first=True)

    def forward(self, x):
        return self.layer(x)


@case("control", "embedding_bag", "embedding + mean pooling text classifier", tokens)
class TextClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, DIM)
        self.fc = nn.Linear(DIM, 3)

    def forward(self, ids):
        return self.fc(self.emb(ids).mean(1))


@case("control", "separable_conv", "depthwise-separable conv block with BatchNorm", images)
class SeparableConv(nn.Module):
    def __init__(self):
        super().__init__()
        self.depthwise = nn.Conv2d(3, 3, 3, padding=1, groups=3)
        self.pointwise = nn.Conv2d(3, 6, 1)
        self.bn = nn.BatchNorm2d(6)

    def forward(self, x):
        return F.relu6(self.bn(self.pointwise(self.depthwise(x))))


@case("control", "unet_skip", "tiny U-Net: down, up, concatenated skip", gray_images)
class TinyUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.down = nn.Conv2d(1, 4, 3, stride=2, padding=1)
        self.up = nn.ConvTranspose2d(4, 4, 2, stride=2)
        self.out = nn.Conv2d(5, 1, 3, padding=1)

    def forward(self, x):
        h = F.relu(self.down(x))
        h = self.up(h)
        return self.out(torch.cat([h, x], dim=1))


# ---------------------------------------------------------------------------
# 7. More idioms of real code beyond the list (hooks, checkpointing,
#    lazy state, parametrizations, distributions, packed sequences...)
# ---------------------------------------------------------------------------

def padded_batch(gen, seed):
    lengths = torch.tensor([5, 3]) if seed % 2 == 0 else torch.tensor([4, 5])
    return torch.randn(2, 5, DIM, generator=gen), lengths


@case("more_idioms", "grad_hook", "h.register_hook(clamp) on an activation in forward", rows)
class ClippedActivationGrad(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(DIM, DIM)
        self.fc2 = nn.Linear(DIM, 2)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        if h.requires_grad:
            h.register_hook(lambda g: g.clamp(-0.01, 0.01))
        return self.fc2(h)


@case("more_idioms", "forward_hooks", "forward hook and pre-hook registered on submodules",
      rows, quick=True)
class HookedNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(DIM, DIM)
        self.fc2 = nn.Linear(DIM, DIM)
        self.fc1.register_forward_hook(lambda module, args, out: out * 0.5)
        self.fc2.register_forward_pre_hook(lambda module, args: (args[0].relu(),))

    def forward(self, x):
        return self.fc2(self.fc1(x))


@case("more_idioms", "checkpoint", "torch.utils.checkpoint on a block (use_reentrant=False)",
      rows)
class CheckpointedBlocks(nn.Module):
    def __init__(self):
        super().__init__()
        self.block1 = nn.Sequential(nn.Linear(DIM, DIM), nn.GELU())
        self.block2 = nn.Sequential(nn.Linear(DIM, DIM), nn.GELU())

    def forward(self, x):
        x = torch.utils.checkpoint.checkpoint(self.block1, x, use_reentrant=False)
        return self.block2(x)


@case("more_idioms", "gradient_penalty", "WGAN-GP: torch.autograd.grad(create_graph=True)",
      rows, quick=True)
class GradientPenaltyCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.critic = nn.Sequential(nn.Linear(DIM, DIM), nn.Tanh(), nn.Linear(DIM, 1))

    def forward(self, x):
        x = x.detach().requires_grad_(True)
        score = self.critic(x)
        (grad,) = torch.autograd.grad(score.sum(), x, create_graph=True)
        penalty = ((grad.norm(dim=1) - 1) ** 2).mean()
        return score.mean() + 10 * penalty


@case("more_idioms", "lazy_buffer", "buffer registered on the first forward (lazy init)", rows)
class LazyStandardize(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        if not hasattr(self, "center"):
            self.register_buffer("center", x.detach().mean(0))
        return self.fc(x - self.center)


@case("more_idioms", "lazy_linear", "nn.LazyLinear (shape inferred on the first call)", rows)
class LazyHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.LazyLinear(3)

    def forward(self, x):
        return self.fc(x)


@case("more_idioms", "spectral_norm", "spectral_norm parametrization (power iteration, train)",
      rows)
class SpectralCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.utils.parametrizations.spectral_norm(nn.Linear(DIM, DIM))

    def forward(self, x):
        return self.fc(x)


@case("more_idioms", "vae_rsample", "VAE: Normal(mu, sigma).rsample() and a KL term", rows)
class TinyVAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(DIM, 4)
        self.dec = nn.Linear(2, DIM)

    def forward(self, x):
        mu, log_sigma = self.enc(x).chunk(2, dim=-1)
        posterior = torch.distributions.Normal(mu, log_sigma.exp())
        z = posterior.rsample()
        prior = torch.distributions.Normal(torch.zeros_like(mu), torch.ones_like(mu))
        kl = torch.distributions.kl_divergence(posterior, prior).sum(-1).mean()
        return self.dec(z), kl


@case("more_idioms", "dropout_then_eval", "dropout, model.eval() before the later calls",
      rows, between=to_eval)
@case("more_idioms", "dropout_train", "dropout in training mode (torch RNG)", rows)
class DropoutMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(DIM, 16)
        self.drop = nn.Dropout(0.5)
        self.fc2 = nn.Linear(16, 2)

    def forward(self, x):
        return self.fc2(self.drop(torch.relu(self.fc1(x))))


@case("more_idioms", "packed_lstm", "pack_padded_sequence(lengths) through an LSTM",
      padded_batch)
class PackedLSTM(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(DIM, 6, batch_first=True)

    def forward(self, x, lengths):
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True,
                                                   enforce_sorted=False)
        out, (h, c) = self.lstm(packed)
        padded, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
        return h[-1], padded.sum(1)


_MASKS = {}


def causal_mask(size):
    """A cached upper-triangular mask, one per size (module-level dict)."""
    if size not in _MASKS:
        _MASKS[size] = torch.triu(torch.ones(size, size, dtype=torch.bool), diagonal=1)
    return _MASKS[size]


@case("more_idioms", "cached_mask", "causal mask from a module-level cache dict", sequences)
class CausalScores(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(DIM, DIM)

    def forward(self, x):
        q = self.q(x)
        scores = q @ x.transpose(1, 2)
        scores = scores.masked_fill(causal_mask(x.size(1)), float("-inf"))
        return scores.softmax(-1) @ x


@case("more_idioms", "input_inplace", "x.clamp_() on the caller's input (inference)", rows,
      train=False)
class ClampInputInPlace(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        x.clamp_(-0.5, 0.5)
        return self.fc(x)


@case("more_idioms", "toggle_flag", "a bool attribute flipped on every call", rows)
class AlternatingPath(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)
        self.use_skip = False

    def forward(self, x):
        self.use_skip = not self.use_skip
        h = self.fc(x)
        return h + x if self.use_skip else h


@case("more_idioms", "set_grad_enabled", "torch.set_grad_enabled(False) around a frozen encoder",
      rows)
class FrozenEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(DIM, DIM)
        self.head = nn.Linear(DIM, 2)

    def forward(self, x):
        with torch.set_grad_enabled(False):
            feats = self.encoder(x)
        return self.head(feats)


GLOBAL_STEP = 0


def reset_globals():
    """Module-level state back to its start (before each side runs a case)."""
    global GLOBAL_STEP
    GLOBAL_STEP = 0
    _MASKS.clear()


@case("more_idioms", "global_step", "global step counter; print every other step", rows)
class LogsEveryOtherStep(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        global GLOBAL_STEP
        GLOBAL_STEP += 1
        h = self.fc(x)
        if GLOBAL_STEP % 2 == 1:
            print("step", GLOBAL_STEP, "loss", h.pow(2).mean())
        return h


@case("more_idioms", "sequence_lengths", "GRUCell over a varying batch and length",
      sequences_varying)
class VaryingGRU(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(DIM, DIM)

    def forward(self, x):
        h = torch.zeros(x.size(0), DIM)
        for t in range(x.size(1)):
            h = self.cell(x[:, t], h)
        return h / x.size(1)


@case("more_idioms", "break_then_warn", "a break (.item() in Python), then warnings.warn", rows)
class WarnAfterItem(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        h = self.fc(x)
        spread = h.std().item()
        warnings.warn("spread %.2f" % round(spread, 1))
        return h / max(spread, 1e-3)


@case("more_idioms", "break_then_state", "a NumPy break, then counters and a buffer update",
      rows)
class StatsAfterNumpy(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)
        self.register_buffer("seen", torch.zeros(()))
        self.calls = 0

    def forward(self, x):
        h = self.fc(x)
        q = float(np.quantile(h.detach().numpy(), 0.9))
        self.calls += 1
        self.seen += (h > q).sum()
        return h * self.calls + self.seen


@case("more_idioms", "break_then_random", "a printed tensor, then random.random() scaling",
      rows)
class RandomAfterPrint(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(DIM, DIM)

    def forward(self, x):
        h = self.fc(x)
        print(f"max {h.max().item():.3f}")
        return h * (0.5 + random.random())


@case("more_idioms", "device_property", "Hugging Face's model.device / model.dtype "
      "(next() over self.parameters()) and torch.tensor(0, dtype=int)", rows)
class DeviceProperty(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(DIM, DIM), nn.ReLU(), nn.Linear(DIM, DIM))

    @property
    def device(self):
        return next(param.device for param in self.parameters())

    @property
    def dtype(self):
        return next(p for p in self.parameters() if p.is_floating_point()).dtype

    def forward(self, x):
        steps = torch.tensor(len(list(self.modules())), dtype=int, device=self.device)
        return self.body(x.to(self.device, self.dtype)) * steps.to(self.dtype)
