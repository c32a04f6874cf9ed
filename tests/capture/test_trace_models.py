"""Real models nobody here wrote: each traces to one graph with no break,
and every call (the capturing first one and the cache hits after it) returns
what eager returns, with fresh inputs each time.

The models come from ``benchmarks/models.py`` (tiny configs, random
weights, no downloads); the Hugging Face ones need ``transformers``
(installed by CI on 3.11 through the ``models`` extra).
"""
import os
import sys

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")

import pyinterp  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "benchmarks"))
import models  # noqa: E402

HF = ["hf_gpt2", "hf_bert", "hf_t5", "hf_llama", "hf_vit", "hf_resnet"]
OWN = ["cnn", "mlp", "lstm_cell", "attention"]


def _spec(name):
    if name.startswith("hf_"):
        pytest.importorskip("transformers", reason="the Hugging Face models need transformers")
    return models.get_model(name)


@pytest.mark.parametrize("name", HF + OWN)
def test_model_is_one_graph_without_breaks(name):
    spec = _spec(name)
    module = spec.build()
    args, kwargs = spec.example(0)
    explanation = pyinterp.explain(module, *args, **kwargs)
    assert explanation.graph_break_count == 0, explanation.break_reasons
    assert explanation.graph_count == 1


@pytest.mark.parametrize("name", HF + OWN)
def test_model_outputs_match_eager_over_calls(name):
    spec = _spec(name)
    module = spec.build()
    compiled = []

    def counting_eager(gm, example_inputs):
        compiled.append(gm)
        return gm.forward

    traced = pyinterp.trace(module, backend=counting_eager)
    for seed in range(3):
        args, kwargs = spec.example(seed)
        with torch.no_grad():
            expected = module(*args, **kwargs)
            actual = traced(*args, **kwargs)
        assert type(actual) is type(expected)
        ok, err, why = models.compare_outputs(expected, actual, rtol=1e-4, atol=1e-5)
        assert ok, "call %d: %s (max abs err %s)" % (seed, why, err)
    assert len(compiled) == 1, "later calls must hit the cache"


def test_gpt2_under_inductor():
    spec = _spec("hf_gpt2")
    module = spec.build()
    traced = pyinterp.trace(module, backend="inductor")
    for seed in range(2):
        args, kwargs = spec.example(seed)
        with torch.no_grad():
            ok, err, why = models.compare_outputs(module(*args, **kwargs),
                                                  traced(*args, **kwargs), 1e-3, 1e-4)
        assert ok, "call %d: %s (max abs err %s)" % (seed, why, err)
