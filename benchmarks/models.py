"""A zoo of small models for the capture benchmarks.

``MODELS`` is a list of :class:`ModelSpec`.  For each spec:

* ``spec.build(device="cpu")`` returns a fresh ``nn.Module`` in ``eval()``
  mode with random weights (``torch.manual_seed`` is set first, so every
  build of a spec has the same weights);
* ``spec.inputs(seed, device="cpu")`` returns the positional arguments and
  ``spec.kwargs(seed, device="cpu")`` the keyword arguments of one call;
  ``spec.example(seed, device)`` returns both as ``(args, kwargs)``.  Each
  seed gives fresh random values; shapes and dtypes never depend on the seed.
  Random values are drawn on the CPU from a seeded ``torch.Generator`` and
  then moved, so a seed gives the same values on every device.

The Hugging Face ``transformers`` models (GPT-2, BERT, T5, Llama, ViT,
ResNet) are built from tiny ``XxxConfig(...)`` objects: nothing is ever
downloaded.  They keep their default call options (``return_dict=True``,
``use_cache`` as configured); :func:`flatten_tensors` turns any of their
outputs (``ModelOutput``, tuples, dicts, KV-cache objects) into a flat list
of tensors for comparison.  ``torchvision`` ResNet-50 and DenseNet-121 are
added only when ``import torchvision`` works; otherwise they are listed in
``SKIPPED`` with the reason (the benchmark scripts print it).

Works with Python 3.11+ and torch 2.x; ``python benchmarks/models.py`` runs
every model once eagerly and prints its output shapes.
"""
import dataclasses
import importlib
import math
from typing import Callable, Dict, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

import _harness as H

BATCH = 2
SEQ = 16
VOCAB = 1000
HIDDEN = 64
IMAGE = 32


def _missing(module_name):
    """Why ``module_name`` cannot be imported, or None if it can."""
    try:
        importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001  (ImportError, or a broken build)
        return "%s not importable (%s: %s)" % (module_name, type(exc).__name__, exc)
    return None


@dataclasses.dataclass
class ModelSpec:
    """One benchmark model: how to build it and how to make its inputs."""

    name: str
    description: str
    make_module: Callable[[], nn.Module]
    # make_example(generator, device) -> (args tuple, kwargs dict)
    make_example: Callable[[torch.Generator, str], Tuple[tuple, dict]]
    # Whether the model is heavy enough that scripts may skip it in --quick runs.
    heavy: bool = False

    def build(self, device="cpu"):
        torch.manual_seed(0)
        module = self.make_module()
        return module.to(device).eval()

    def example(self, seed=0, device="cpu"):
        gen = torch.Generator().manual_seed(1000 + seed)
        return self.make_example(gen, device)

    def inputs(self, seed=0, device="cpu"):
        return self.example(seed, device)[0]

    def kwargs(self, seed=0, device="cpu"):
        return self.example(seed, device)[1]


MODELS = []
SKIPPED: Dict[str, str] = {}


def register(name, description, make_example, heavy=False, requires=None):
    """Decorator: register a zero-argument module factory under ``name``.

    With ``requires`` (a module name) that cannot be imported, the model goes
    to ``SKIPPED`` instead, with the reason.
    """

    def wrap(make_module):
        why = _missing(requires) if requires else None
        if why:
            SKIPPED[name] = why
        else:
            MODELS.append(ModelSpec(name, description, make_module, make_example, heavy))
        return make_module

    return wrap


def get_model(name):
    return H.find_named(MODELS, name, "model")


# ---------------------------------------------------------------------------
# Output flattening
# ---------------------------------------------------------------------------

def flatten_tensors(output):
    """All tensors in ``output``, depth first, in a deterministic order.

    Handles tensors, tuples/lists, dicts (including ``ModelOutput``, whose
    items are its non-None fields), and arbitrary objects (their ``__dict__``,
    e.g. transformers' ``DynamicCache`` and its layers).  Non-tensor leaves
    are dropped; each object is visited once.
    """
    found = []
    _collect(output, found, set())
    return found


def flatten_scalars(output):
    """The Python numbers and strings in ``output`` (``bool``, ``int``,
    ``float``, ``str``), in the order :func:`flatten_tensors` visits."""
    found = []
    _collect(output, [], set(), found)
    return found


_SCALARS = (bool, int, float, complex, str, bytes)


def _collect(obj, found, seen, scalars=None):
    if isinstance(obj, torch.Tensor):
        found.append(obj)
        return
    if obj is None or isinstance(obj, _SCALARS + (type,)):
        if scalars is not None and isinstance(obj, _SCALARS):
            scalars.append(obj)
        return
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, dict):  # ModelOutput is an OrderedDict subclass
        values = obj.values()
    elif isinstance(obj, (list, tuple)):
        values = obj
    elif hasattr(obj, "__dict__") and not callable(obj):
        values = vars(obj).values()
    else:
        return
    for value in values:
        _collect(value, found, seen, scalars)


def compare_outputs(expected, actual, rtol, atol):
    """Compare two model outputs tensor by tensor.

    Returns ``(ok, max_abs_err, why)``: ``max_abs_err`` is the largest
    absolute difference over the floating tensors (None if the outputs are
    not comparable), ``why`` says why not (different tensor count, shape or
    dtype) or is None.  Floating tensors use ``allclose``; others must be
    equal.
    """
    exp, act = flatten_tensors(expected), flatten_tensors(actual)
    if len(exp) != len(act):
        return False, None, "%d tensors, expected %d" % (len(act), len(exp))
    why = _scalars_differ(flatten_scalars(expected), flatten_scalars(actual), rtol, atol)
    if why is not None:
        return False, None, why
    worst = 0.0
    ok = True
    for e, a in zip(exp, act):
        if e.shape != a.shape or e.dtype != a.dtype:
            return False, None, "got %s %s, expected %s %s" % (
                tuple(a.shape), a.dtype, tuple(e.shape), e.dtype)
        e, a = e.detach().cpu(), a.detach().cpu()
        if e.is_floating_point() or e.is_complex():
            if e.numel():
                worst = max(worst, (e - a).abs().max().item())
            ok = ok and torch.allclose(a, e, rtol=rtol, atol=atol, equal_nan=True)
        else:
            ok = ok and torch.equal(a, e)
    return ok, worst, None


def _scalars_differ(expected, actual, rtol, atol):
    """Why two outputs' Python numbers and strings differ (type, then
    value; floats with ``rtol``/``atol``), or None."""
    if [type(v) for v in expected] != [type(v) for v in actual]:
        return "Python values of types %s, expected %s" % (
            [type(v).__name__ for v in actual], [type(v).__name__ for v in expected])
    for e, a in zip(expected, actual):
        if type(e) is float:
            if not (math.isclose(e, a, rel_tol=rtol, abs_tol=atol)
                    or math.isnan(e) and math.isnan(a)):
                return "Python float %r, expected %r" % (a, e)
        elif e != a:
            return "Python value %r, expected %r" % (a, e)
    return None


# ---------------------------------------------------------------------------
# Input helpers
# ---------------------------------------------------------------------------

def _randn(gen, device, *shape):
    return torch.randn(*shape, generator=gen).to(device)


def _token_ids(gen, device, vocab=VOCAB, batch=BATCH, seq=SEQ):
    return torch.randint(0, vocab, (batch, seq), generator=gen).to(device)


def _padded_mask(device, batch=BATCH, seq=SEQ):
    """Attention mask with a fixed padding pattern: the last row drops 4 tokens."""
    mask = torch.ones(batch, seq, dtype=torch.long)
    mask[-1, -4:] = 0
    return mask.to(device)


def _ids_example(gen, device):
    return (_token_ids(gen, device),), {}


def _ids_and_mask_example(gen, device):
    return (_token_ids(gen, device), _padded_mask(device)), {}


def _encoder_decoder_example(gen, device):
    ids = _token_ids(gen, device)
    decoder_ids = _token_ids(gen, device, seq=SEQ // 2)
    return (), {"input_ids": ids, "decoder_input_ids": decoder_ids}


def _image_example(size):
    def make(gen, device):
        return (_randn(gen, device, BATCH, 3, size, size),), {}

    return make


def _features_example(features):
    def make(gen, device):
        return (_randn(gen, device, BATCH, features),), {}

    return make


def _sequence_example(steps, features):
    def make(gen, device):
        return (_randn(gen, device, steps, BATCH, features),), {}

    return make


# ---------------------------------------------------------------------------
# Hugging Face transformers models (tiny configs, random weights)
# ---------------------------------------------------------------------------

_TOKENS = dict(bos_token_id=1, eos_token_id=2, pad_token_id=0)


@register("hf_gpt2", "transformers GPT2LMHeadModel, 2 layers, hidden 64", _ids_example,
          requires="transformers")
def hf_gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(vocab_size=VOCAB, n_positions=64, n_embd=HIDDEN, n_layer=2,
                        n_head=2, **_TOKENS)
    return GPT2LMHeadModel(config)


@register("hf_bert", "transformers BertModel, 2 layers, hidden 64, padded mask",
          _ids_and_mask_example, requires="transformers")
def hf_bert():
    from transformers import BertConfig, BertModel

    config = BertConfig(vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=128,
                        max_position_embeddings=64, pad_token_id=0)
    return BertModel(config)


@register("hf_t5", "transformers T5Model (encoder-decoder), 2+2 layers, d_model 64",
          _encoder_decoder_example, requires="transformers")
def hf_t5():
    from transformers import T5Config, T5Model

    config = T5Config(vocab_size=VOCAB, d_model=HIDDEN, d_kv=32, d_ff=128, num_layers=2,
                      num_decoder_layers=2, num_heads=2, decoder_start_token_id=0,
                      **_TOKENS)
    return T5Model(config)


@register("hf_llama", "transformers LlamaForCausalLM, 2 layers, hidden 64, GQA 4/2 heads",
          _ids_example, requires="transformers")
def hf_llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=128,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=128, **_TOKENS)
    return LlamaForCausalLM(config)


@register("hf_vit", "transformers ViTModel, 2 layers, hidden 64, 32x32 images, patch 8",
          _image_example(IMAGE), requires="transformers")
def hf_vit():
    from transformers import ViTConfig, ViTModel

    config = ViTConfig(image_size=IMAGE, patch_size=8, num_channels=3, hidden_size=HIDDEN,
                       num_hidden_layers=2, num_attention_heads=2, intermediate_size=128)
    return ViTModel(config)


@register("hf_resnet", "transformers ResNetForImageClassification, 2 stages, 32x32 images",
          _image_example(IMAGE), requires="transformers")
def hf_resnet():
    from transformers import ResNetConfig, ResNetForImageClassification

    config = ResNetConfig(num_channels=3, embedding_size=16, hidden_sizes=[16, 32],
                          depths=[1, 1], layer_type="basic", num_labels=10)
    return ResNetForImageClassification(config)


# ---------------------------------------------------------------------------
# Our own small models
# ---------------------------------------------------------------------------

class SmallCNN(nn.Module):
    """Two conv-BN-ReLU-pool blocks and a linear classifier."""

    def __init__(self, classes=10):
        super().__init__()
        self.blocks = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.head = nn.Linear(32, classes)

    def forward(self, x):
        x = self.blocks(x)
        x = torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)
        return self.head(x)


class MLP(nn.Module):
    """Linear layers with GELU in a Python loop over an ``nn.ModuleList``."""

    def __init__(self, features=HIDDEN, hidden=128, layers=4):
        super().__init__()
        widths = [features] + [hidden] * (layers - 1) + [features]
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(widths, widths[1:]))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = F.gelu(x)
        return x


class UnrolledLSTM(nn.Module):
    """``nn.LSTMCell`` applied step by step in a Python loop over the time axis."""

    def __init__(self, features=32, hidden=HIDDEN):
        super().__init__()
        self.hidden = hidden
        self.cell = nn.LSTMCell(features, hidden)
        self.out = nn.Linear(hidden, features)

    def forward(self, seq):
        h = seq.new_zeros(seq.shape[1], self.hidden)
        c = torch.zeros_like(h)
        outputs = []
        for x in seq:  # iterating a tensor: one step per time index
            h, c = self.cell(x, (h, c))
            outputs.append(self.out(h))
        return torch.stack(outputs), (h, c)


class AttentionBlock(nn.Module):
    """Pre-norm transformer block: hand-written multi-head self-attention and an MLP."""

    def __init__(self, dim=HIDDEN, heads=4):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def attention(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        weights = (q @ k.transpose(-2, -1)) * self.scale
        causal = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
        weights = weights.masked_fill(~causal, float("-inf")).softmax(dim=-1)
        y = (weights @ v).transpose(1, 2).reshape(b, t, d)
        return self.proj(y)

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        return x + self.mlp(self.norm2(x))


def _tokens_example(gen, device):
    return (_randn(gen, device, BATCH, SEQ, HIDDEN),), {}


register("cnn", "own: 2 conv-BN-ReLU-pool blocks + linear, 32x32 images",
         _image_example(IMAGE))(SmallCNN)
register("mlp", "own: 4 linear layers with GELU, width 128", _features_example(HIDDEN))(MLP)
register("lstm_cell", "own: nn.LSTMCell unrolled over 6 steps in Python",
         _sequence_example(6, 32))(UnrolledLSTM)
register("attention", "own: pre-norm self-attention block, 4 heads, causal mask",
         _tokens_example)(AttentionBlock)


# ---------------------------------------------------------------------------
# torchvision (only where it imports)
# ---------------------------------------------------------------------------

def _torchvision_image_example(gen, device):
    size = 224 if str(device).startswith("cuda") else 64
    return (_randn(gen, device, BATCH, 3, size, size),), {}


def _tv_resnet50():
    from torchvision.models import resnet50

    return resnet50(weights=None)


def _tv_densenet121():
    from torchvision.models import densenet121

    return densenet121(weights=None)


register("tv_resnet50", "torchvision resnet50, random weights (224px on CUDA, 64px on CPU)",
         _torchvision_image_example, heavy=True, requires="torchvision")(_tv_resnet50)
register("tv_densenet121", "torchvision densenet121, random weights (224px on CUDA, 64px "
         "on CPU)", _torchvision_image_example, heavy=True, requires="torchvision")(
    _tv_densenet121)


def skipped_note():
    """One line per skipped model, for the scripts to print (empty if none)."""
    return "\n".join("note: skipped %s: %s" % (name, why) for name, why in SKIPPED.items())


def _main():
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    if SKIPPED:
        print(skipped_note())
    for spec in MODELS:
        model = spec.build(args.device)
        args_, kwargs = spec.example(0, args.device)
        with torch.no_grad():
            out = model(*args_, **kwargs)
        shapes = [tuple(t.shape) for t in flatten_tensors(out)]
        print("%-15s %-70s %s" % (spec.name, spec.description, shapes[:4]
                                  + (["..."] if len(shapes) > 4 else [])))


if __name__ == "__main__":
    _main()
