"""The cases of ``benchmarks/breaks.py``: classic graph-break causes, and the
Hugging Face models GraphMend studied, each with its own input factory.

``CASES`` is a list of :class:`BreakCase`.  For each case:

* ``case.build()`` returns a fresh callable (an ``nn.Module`` in ``eval()`` or
  ``train()`` mode as the case says, or a plain function) with seeded random
  weights: every build of a case is identical;
* ``case.example(seed)`` returns ``(args, kwargs)`` for one call, fresh random
  values per seed from a seeded ``torch.Generator`` (shapes never depend on
  the seed; the values do, and some cases pick them so that data-dependent
  branches go both ways across seeds 0, 1, 2);
* ``case.reset()`` puts the module-level state the case touches (the global
  list :data:`GLOBAL_ACTIVATIONS`) back to empty;
* ``case.effects(obj)`` snapshots the side effects the case makes (the global
  list, ``self.cache``...) after a call, and ``case.same_effects(a, b)``
  compares two lists of snapshots (one per call); the default compares them
  exactly (tensors with ``allclose``).

The Hugging Face models are built from tiny configs, nothing is downloaded; a
model whose ``transformers`` class is missing is listed in ``SKIPPED``.  This
file is written for these benchmarks: the breaking lines are ours, so a
break or a wrong result points at a line one can read.
"""
import dataclasses
import logging
import random
import time
import warnings
from typing import Callable, Dict, Optional

import torch
import torch.nn as nn

import _harness as H
import models as zoo

LOG = logging.getLogger("breakbench")
LOG.setLevel(logging.INFO)

# Written to by the ``global_list`` case; ``BreakCase.reset`` empties it.
GLOBAL_ACTIVATIONS = []

DIM = 8


# ---------------------------------------------------------------------------
# The case record
# ---------------------------------------------------------------------------

def _same(a, b, rtol=1e-5, atol=1e-6):
    """Deep equality; tensors by shape, dtype and ``allclose``."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)
                and a.shape == b.shape and a.dtype == b.dtype
                and torch.allclose(a.detach().float(), b.detach().float(), rtol=rtol,
                                   atol=atol, equal_nan=True))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def same_snapshots(eager, traced):
    return _same(eager, traced)


@dataclasses.dataclass
class BreakCase:
    name: str
    description: str
    make: Callable[[], object]
    make_example: Callable[[torch.Generator, int], tuple]
    hf: bool = False
    train: bool = False
    effects: Optional[Callable[[object], object]] = None
    same_effects: Callable[[list, list], bool] = same_snapshots
    rtol: float = 1e-4
    atol: float = 1e-4
    note: str = ""  # filled in by make() where the build had to choose (dtype...)

    def build(self):
        torch.manual_seed(0)
        obj = self.make()
        if isinstance(obj, nn.Module):
            obj.train(self.train)
        return obj

    def example(self, seed):
        gen = torch.Generator().manual_seed(2000 + seed)
        return self.make_example(gen, seed)

    def reset(self):
        GLOBAL_ACTIVATIONS.clear()


CASES = []
SKIPPED: Dict[str, str] = {}


def case(name, description, make_example, **options):
    """Decorator: register a zero-argument factory as a case."""

    def wrap(make):
        CASES.append(BreakCase(name, description, make, make_example, **options))
        return make

    return wrap


def get_case(name):
    return H.find_named(CASES, name)


# ---------------------------------------------------------------------------
# Input factories
# ---------------------------------------------------------------------------

def _vec(gen, *shape):
    return torch.randn(*shape, generator=gen)


def rows_example(gen, seed):
    return (_vec(gen, 4, DIM),), {}


def signed_example(gen, seed):
    """Rows whose sum is positive for even seeds, negative for odd ones."""
    x = _vec(gen, 4, DIM).abs() + 0.1
    return (x if seed % 2 == 0 else -x,), {}


def two_tensors_example(gen, seed):
    return (_vec(gen, 4, DIM), _vec(gen, DIM)), {}


def large_vector_example(gen, seed):
    """A vector of norm about 4**(seed+1): the while loop runs a seed-dependent count."""
    x = _vec(gen, DIM)
    return (x / x.norm() * 4.0 ** (seed + 1),), {}


def transposed_example(gen, seed):
    """Non-contiguous input: ``view(-1)`` fails on it, ``reshape`` does not."""
    return (_vec(gen, DIM, 4).t(),), {}


def contiguous_then_transposed_example(gen, seed):
    """Contiguous for seed 0 (view succeeds), transposed for the others."""
    x = _vec(gen, DIM, 4)
    return (x.t().contiguous() if seed == 0 else x.t(),), {}


def mixed_rows_example(gen, seed):
    """Rows with mixed signs, a different pattern per seed."""
    x = _vec(gen, 4, DIM).abs() + 0.1
    signs = torch.tensor([[1.0], [-1.0], [1.0], [-1.0]]).roll(seed, 0)
    return (x * signs,), {}


# ---------------------------------------------------------------------------
# Effects snapshots
# ---------------------------------------------------------------------------

def global_list_effects(obj):
    return [t.detach().clone() for t in GLOBAL_ACTIVATIONS]


def cache_effects(obj):
    cache = getattr(obj, "cache", None)
    return cache.detach().clone() if isinstance(cache, torch.Tensor) else cache


def stats_effects(obj):
    return {k: (v.detach().clone() if isinstance(v, torch.Tensor) else v)
            for k, v in obj.stats.items()}


def timing_effects(obj):
    return obj.elapsed


def same_timings(eager, traced):
    """Timings cannot be equal: each must be a fresh positive float per call."""
    def fine(values):
        return (all(type(v) is float and v > 0 for v in values)
                and len(set(values)) == len(values))
    return fine(eager) and fine(traced)


# ---------------------------------------------------------------------------
# Classic graph-break causes (our own small modules and functions)
# ---------------------------------------------------------------------------

class Linear(nn.Module):
    """A Linear layer plus whatever ``body`` the subclass puts around it."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(DIM, DIM)


class PrintInForward(Linear):
    def forward(self, x):
        h = self.lin(x)
        print("hidden mean:", h.mean(), "shape:", tuple(h.shape))
        return h.relu()


class LoggerInfo(Linear):
    def forward(self, x):
        h = self.lin(x)
        LOG.info("hidden norm %s", h.norm())
        return h.relu()


class LoggingWarning(Linear):
    def forward(self, x):
        h = self.lin(x)
        logging.warning("input max %s, hidden min %s", x.max(), h.min())
        return h.relu()


class WarnInForward(Linear):
    def forward(self, x):
        h = self.lin(x)
        warnings.warn("scaling a batch of %d rows" % x.shape[0])
        return h * 0.5


class IfElseOnTensor(Linear):
    def forward(self, x):
        h = self.lin(x)
        if x.sum() > 0:
            h = h * 2
        else:
            h = h - 1
        return h


class IfOnTensor(Linear):
    def forward(self, x):
        h = self.lin(x)
        if x.sum() > 0:
            h = h.relu()
        return h + 1


def item_scale(x, y):
    return x * y.max().item()


def tolist_count(x, y):
    values = y.tolist()
    positives = sum(1 for v in values if v > 0)
    return x * positives


def count_mean(x, y):
    """The mean of x over the count of positive y (an int from tensor data)."""
    return x.sum(0) / (y > 0).sum().item()


def loss_and_count(x, y):
    """A training step's loss and its count of positives, returned."""
    return (x * y).sum(), (y > 0).sum().item()


def printed_count(x, y):
    """A count of positives printed, then used by a tensor op."""
    n = (y > 0).sum().item()
    print("positives:", n)
    return x * n


def any_positive_branch(x, y):
    if (y > 0).any().item():
        return x + 1
    return x - 1


def numpy_round_trip(x):
    return torch.from_numpy(x.numpy() * 2) + 1


def halve_until_small(x):
    while x.norm() > 1:
        x = x / 2
    return x


class GlobalListAppend(Linear):
    def forward(self, x):
        h = self.lin(x)
        GLOBAL_ACTIVATIONS.append(h)
        return h.relu()


class ActivationCache(Linear):
    def __init__(self):
        super().__init__()
        self.cache = None

    def forward(self, x):
        h = self.lin(x)
        self.cache = h
        return h.relu()


class ActivationCacheThenLayer(ActivationCache):
    """Caches ``h`` on ``self``, then reads a parameter (through a submodule) after it."""

    def __init__(self):
        super().__init__()
        self.out = nn.Linear(DIM, DIM)

    def forward(self, x):
        h = self.lin(x)
        self.cache = h
        return self.out(h)


def view_or_reshape(x):
    try:
        y = x.view(-1)
    except RuntimeError:
        y = x.reshape(-1)
    return y * 2


class GeneratorSum(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(DIM, DIM) for _ in range(3))

    def forward(self, x):
        return sum(layer(x) for layer in self.layers)


class StochasticDepth(nn.Module):
    def __init__(self, p=0.5, depth=4):
        super().__init__()
        self.p = p
        self.blocks = nn.ModuleList(nn.Linear(DIM, DIM) for _ in range(depth))

    def block(self, layer, x):
        if self.training and random.random() < self.p:
            return x
        return x + torch.tanh(layer(x))

    def forward(self, x):
        for layer in self.blocks:
            x = self.block(layer, x)
        return x


class TimedForward(Linear):
    def __init__(self):
        super().__init__()
        self.elapsed = None

    def forward(self, x):
        t0 = time.perf_counter()
        h = self.lin(x).relu()
        self.elapsed = time.perf_counter() - t0
        return h


class FStringAssert(Linear):
    def forward(self, x):
        assert x.shape[-1] == DIM, f"expected {DIM} features, got {x.shape}"
        return self.lin(x)


class FStringDictKey(Linear):
    def __init__(self):
        super().__init__()
        self.stats = {}

    def forward(self, x):
        h = self.lin(x)
        self.stats[f"{x.shape}"] = h.mean()
        return h


class TreeNode(nn.Module):
    def __init__(self, depth):
        super().__init__()
        self.lin = nn.Linear(DIM, DIM)
        self.kids = nn.ModuleList(TreeNode(depth - 1) for _ in range(2)) if depth else None

    def forward(self, x):
        h = torch.tanh(self.lin(x))
        if self.kids is None:
            return h
        return h + self.kids[0](h) + self.kids[1](h)


def per_row_branch(x):
    out = []
    for row in x:
        if row.sum() > 0:
            out.append(row * 2)
        else:
            out.append(-row)
    return torch.stack(out)


case("print", "print(tensor, shape) in forward", rows_example)(PrintInForward)
case("logger_info", "logger.info('%s', tensor) in forward (logger at INFO)",
     rows_example)(LoggerInfo)
case("logging_warning", "logging.warning module function with tensor args",
     rows_example)(LoggingWarning)
case("warnings_warn", "warnings.warn(message with the batch size) in forward",
     rows_example)(WarnInForward)
case("if_else_tensor", "if x.sum() > 0: ... else: ... (both branches across seeds)",
     signed_example)(IfElseOnTensor)
case("if_tensor", "if x.sum() > 0: ... without else (taken on even seeds)",
     signed_example)(IfOnTensor)
case("item_scale", "x * y.max().item()", two_tensors_example)(lambda: item_scale)
case("tolist", "y.tolist(), count of positives scales x", two_tensors_example)(
    lambda: tolist_count)
case("item_count", "x.sum(0) / (y > 0).sum().item() (an int)", two_tensors_example)(
    lambda: count_mean)
case("item_count_returned", "return loss, (y > 0).sum().item() (an int in the result)",
     two_tensors_example)(lambda: loss_and_count)
case("item_count_printed", "print('positives:', (y > 0).sum().item()), then x * n",
     two_tensors_example)(lambda: printed_count)
case("item_bool_if", "if (y > 0).any().item(): ... (a bool)", two_tensors_example)(
    lambda: any_positive_branch)
case("numpy_round_trip", "torch.from_numpy(x.numpy() * 2) + 1", rows_example)(
    lambda: numpy_round_trip)
case("while_norm", "while x.norm() > 1: x = x / 2 (2, 4, 6 iterations)",
     large_vector_example)(lambda: halve_until_small)
case("global_list", "GLOBAL_ACTIVATIONS.append(h) in forward", rows_example,
     effects=global_list_effects)(GlobalListAppend)
case("self_cache", "self.cache = h in forward", rows_example, effects=cache_effects)(
    ActivationCache)
case("self_cache_then_layer", "self.cache = h, then another layer reads its weights",
     rows_example, effects=cache_effects)(ActivationCacheThenLayer)
case("try_view", "try: x.view(-1) except RuntimeError: x.reshape(-1); non-contiguous input",
     transposed_example)(lambda: view_or_reshape)
case("try_view_mixed", "try_view with a contiguous input on seed 0, transposed after",
     contiguous_then_transposed_example)(lambda: view_or_reshape)
case("generator_sum", "sum(layer(x) for layer in self.layers) over a ModuleList",
     rows_example)(GeneratorSum)
case("stochastic_depth_eval", "if self.training and random.random() < p (eval mode)",
     rows_example)(StochasticDepth)
case("stochastic_depth_train", "if self.training and random.random() < p (train mode)",
     rows_example, train=True)(StochasticDepth)
case("perf_counter", "time.perf_counter() around forward, elapsed stored on self",
     rows_example, effects=timing_effects, same_effects=same_timings)(TimedForward)
case("fstring_assert", "assert ..., f'... {x.shape}' (message not built on success)",
     rows_example)(FStringAssert)
case("fstring_dict_key", "self.stats[f'{x.shape}'] = h.mean()", rows_example,
     effects=stats_effects)(FStringDictKey)
case("recursive_tree", "binary tree of modules, depth 3, children called recursively",
     rows_example)(lambda: TreeNode(3))
case("per_row_branch", "for row in x: if row.sum() > 0: ... else: ...",
     mixed_rows_example)(lambda: per_row_branch)


# ---------------------------------------------------------------------------
# Hugging Face models GraphMend studied (tiny configs, random weights)
# ---------------------------------------------------------------------------

def hf_case(name, description, make_example, requires_class, **options):
    """Like :func:`case`, or a SKIPPED entry when ``transformers.<class>`` is missing."""

    def wrap(make):
        try:
            import transformers

            getattr(transformers, requires_class)
        except Exception as exc:  # noqa: BLE001  (ImportError, AttributeError, broken build)
            SKIPPED[name] = "transformers.%s unavailable (%s: %s)" % (
                requires_class, type(exc).__name__, exc)
            return make
        return case(name, description, make_example, hf=True, **options)(make)

    return wrap


def _ids(gen, seq=zoo.SEQ, vocab=zoo.VOCAB):
    return torch.randint(3, vocab, (zoo.BATCH, seq), generator=gen)


def seq2seq_example(gen, seed):
    return (), {"input_ids": _ids(gen), "attention_mask": zoo._padded_mask("cpu"),
                "decoder_input_ids": _ids(gen, seq=zoo.SEQ // 2)}


def causal_example(gen, seed):
    return (), {"input_ids": _ids(gen), "attention_mask": zoo._padded_mask("cpu")}


def whisper_example(gen, seed):
    return (), {"input_features": _vec(gen, zoo.BATCH, WHISPER_MELS, 2 * WHISPER_FRAMES),
                "decoder_input_ids": _ids(gen, seq=6)}


def layoutlm_example(gen, seed):
    x0 = torch.randint(0, 500, (zoo.BATCH, zoo.SEQ, 1), generator=gen)
    y0 = torch.randint(0, 500, (zoo.BATCH, zoo.SEQ, 1), generator=gen)
    w = torch.randint(0, 400, (zoo.BATCH, zoo.SEQ, 2), generator=gen)
    bbox = torch.cat([x0, y0, x0 + w[..., :1], y0 + w[..., 1:]], dim=-1)
    return (), {"input_ids": _ids(gen), "bbox": bbox,
                "attention_mask": zoo._padded_mask("cpu")}


LONGFORMER_WINDOW = 4
LONGFORMER_SEQ = 10  # not a multiple of the window: the model pads inside forward


def longformer_example(gen, seed):
    return (), {"input_ids": _ids(gen, seq=LONGFORMER_SEQ),
                "attention_mask": zoo._padded_mask("cpu", seq=LONGFORMER_SEQ)}


def hf_t5():
    return zoo.get_model("hf_t5").make_module()


hf_case("hf_t5", "T5Model 2+2 layers, d_model 64 (models.py's)", seq2seq_example,
        "T5Model")(hf_t5)

_BART = {}


@hf_case("hf_bart", "BartModel 1+1 layers, d_model 64; fp16 if CPU runs it, else fp32",
         seq2seq_example, "BartModel")
def hf_bart():
    from transformers import BartConfig, BartModel

    config = BartConfig(vocab_size=zoo.VOCAB, d_model=zoo.HIDDEN, encoder_layers=1,
                        decoder_layers=1, encoder_attention_heads=2,
                        decoder_attention_heads=2, encoder_ffn_dim=128, decoder_ffn_dim=128,
                        max_position_embeddings=64, decoder_start_token_id=2, **zoo._TOKENS)
    model = BartModel(config).eval()
    if "dtype" not in _BART:  # probe once whether this CPU build runs BART in fp16
        try:
            _, kwargs = seq2seq_example(torch.Generator().manual_seed(0), 0)
            with torch.no_grad():
                out = BartModel(config).eval().half()(**kwargs)
            finite = bool(torch.isfinite(out.last_hidden_state).all())
            _BART["dtype"] = torch.float16 if finite else torch.float32
            _BART["why"] = "fp16" if finite else "fp32 (fp16 gave non-finite values on CPU)"
        except Exception as exc:  # noqa: BLE001
            _BART["dtype"] = torch.float32
            _BART["why"] = "fp32 (fp16 failed on CPU: %s)" % " ".join(str(exc).split())[:120]
    get_case("hf_bart").note = _BART["why"]
    if _BART["dtype"] == torch.float16:
        get_case("hf_bart").rtol = get_case("hf_bart").atol = 1e-2
    return model.to(_BART["dtype"])


@hf_case("hf_biogpt", "BioGptForCausalLM 2 layers, hidden 64", causal_example,
         "BioGptForCausalLM")
def hf_biogpt():
    from transformers import BioGptConfig, BioGptForCausalLM

    config = BioGptConfig(vocab_size=zoo.VOCAB, hidden_size=zoo.HIDDEN, num_hidden_layers=2,
                          num_attention_heads=2, intermediate_size=128,
                          max_position_embeddings=64, **zoo._TOKENS)
    return BioGptForCausalLM(config)


@hf_case("hf_blenderbot", "BlenderbotModel 1+1 layers, d_model 64", seq2seq_example,
         "BlenderbotModel")
def hf_blenderbot():
    from transformers import BlenderbotConfig, BlenderbotModel

    config = BlenderbotConfig(vocab_size=zoo.VOCAB, d_model=zoo.HIDDEN, encoder_layers=1,
                              decoder_layers=1, encoder_attention_heads=2,
                              decoder_attention_heads=2, encoder_ffn_dim=128,
                              decoder_ffn_dim=128, max_position_embeddings=64,
                              decoder_start_token_id=1, **zoo._TOKENS)
    return BlenderbotModel(config)


WHISPER_MELS = 8
WHISPER_FRAMES = 16  # max_source_positions; input_features have 2x as many frames


@hf_case("hf_whisper", "WhisperModel 1+1 layers, d_model 64, 8 mel bins x 32 frames",
         whisper_example, "WhisperModel")
def hf_whisper():
    from transformers import WhisperConfig, WhisperModel

    config = WhisperConfig(vocab_size=zoo.VOCAB, num_mel_bins=WHISPER_MELS, d_model=zoo.HIDDEN,
                           encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
                           decoder_attention_heads=2, encoder_ffn_dim=128,
                           decoder_ffn_dim=128, max_source_positions=WHISPER_FRAMES,
                           max_target_positions=32, decoder_start_token_id=1,
                           **zoo._TOKENS)
    return WhisperModel(config)


@hf_case("hf_layoutlmv3", "LayoutLMv3Model text-only with bbox, 2 layers, image size 16",
         layoutlm_example, "LayoutLMv3Model")
def hf_layoutlmv3():
    from transformers import LayoutLMv3Config, LayoutLMv3Model

    config = LayoutLMv3Config(vocab_size=zoo.VOCAB, hidden_size=zoo.HIDDEN,
                              num_hidden_layers=2, num_attention_heads=2,
                              intermediate_size=128, max_position_embeddings=64,
                              coordinate_size=10, shape_size=12, input_size=16,
                              patch_size=4, pad_token_id=0)
    return LayoutLMv3Model(config)


@hf_case("hf_longformer", "LongformerModel 2 layers, window %d, seq %d (padded inside)"
         % (LONGFORMER_WINDOW, LONGFORMER_SEQ), longformer_example, "LongformerModel")
def hf_longformer():
    from transformers import LongformerConfig, LongformerModel

    config = LongformerConfig(vocab_size=zoo.VOCAB, hidden_size=zoo.HIDDEN,
                              num_hidden_layers=2, num_attention_heads=2,
                              intermediate_size=128, max_position_embeddings=66,
                              attention_window=LONGFORMER_WINDOW, pad_token_id=0)
    return LongformerModel(config)


@hf_case("hf_phi3_longrope", "Phi3ForCausalLM 2 layers, LongRoPE (original max 8 < seq 16)",
         causal_example, "Phi3ForCausalLM")
def hf_phi3_longrope():
    from transformers import Phi3Config, Phi3ForCausalLM

    heads, hidden = 4, zoo.HIDDEN
    half = hidden // heads // 2
    scaling = {"type": "longrope", "rope_type": "longrope",
               "short_factor": [1.0 + 0.1 * i for i in range(half)],
               "long_factor": [2.0 + 0.5 * i for i in range(half)]}
    config = Phi3Config(vocab_size=zoo.VOCAB, hidden_size=hidden, intermediate_size=128,
                        num_hidden_layers=2, num_attention_heads=heads,
                        num_key_value_heads=heads, max_position_embeddings=64,
                        original_max_position_embeddings=8, rope_scaling=scaling,
                        **zoo._TOKENS)
    return Phi3ForCausalLM(config)
