"""``model.generate()`` with a traced forward (issue 20), on tiny GPT-2 and
Llama configs (random weights, no downloads): the tokens equal eager's,
every decoding step is captured as one graph (no break), and on a second
``generate`` every step runs through a compiled graph (a counting backend
counts the graph's calls).  Static cache: two entries, the prefill and the
decode step, whatever the number of new tokens.  Bad input: a prompt
longer than the static cache (eager's error), a cache of a type we do not
model (a break that names it, eager's tokens and cache state)."""
import collections

import pytest

torch = pytest.importorskip("torch", reason="pyinterp.trace tests need torch")
transformers = pytest.importorskip("transformers", reason="generate() needs transformers")

import pyinterp  # noqa: E402

NEW_TOKENS = 5


def _model(family):
    torch.manual_seed(0)
    common = dict(vocab_size=128, bos_token_id=1, eos_token_id=2)
    if family == "gpt2":
        config = transformers.GPT2Config(n_positions=64, n_embd=64, n_layer=2, n_head=4,
                                         **common)
        return transformers.GPT2LMHeadModel(config).eval()
    config = transformers.LlamaConfig(hidden_size=64, intermediate_size=128,
                                      num_hidden_layers=2, num_attention_heads=4,
                                      num_key_value_heads=2, max_position_embeddings=64,
                                      **common)
    return transformers.LlamaForCausalLM(config).eval()


class CountingCalls:
    """The eager backend, counting the calls of the graphs it made."""

    def __init__(self):
        self.calls = 0

    def __call__(self, gm, example_inputs):
        def run(*args):
            self.calls += 1
            return gm.forward(*args)

        return run


@pytest.mark.parametrize("family,cache,batch,sample", [
    ("gpt2", "dynamic", 1, False),
    ("gpt2", "static", 4, True),
    ("llama", "dynamic", 4, True),
    ("llama", "static", 1, False),
])
def test_generate_with_a_traced_forward(family, cache, batch, sample):
    model = _model(family)
    eager_forward = model.forward
    backend = CountingCalls()
    traced = pyinterp.trace(eager_forward, backend=backend)
    kwargs = dict(max_new_tokens=NEW_TOKENS, do_sample=sample, pad_token_id=0)
    if cache == "static":
        kwargs["cache_implementation"] = "static"
    for seed in range(2):
        ids = torch.randint(3, 128, (batch, 6), generator=torch.Generator().manual_seed(seed))
        model.forward = eager_forward
        torch.manual_seed(seed)
        expected = model.generate(ids, **kwargs)
        model.forward = traced
        torch.manual_seed(seed)
        before = backend.calls
        actual = model.generate(ids, **kwargs)
        assert torch.equal(actual, expected)
        if seed == 1:  # every step of the second generate ran through a graph
            assert backend.calls - before == NEW_TOKENS
    entries = traced.cache_entries()
    assert all(e.kind == "graph" and not e.break_reasons for e in entries), entries
    # Static cache: prefill and decode.  Dynamic cache (a new length each
    # step): prefill, the first decode step, then one graph with symbolic
    # lengths for every later step (automatic dynamic shapes).
    assert len(entries) == (2 if cache == "static" else 3)


def _generate_error(model, forward, ids):
    """The exception ``generate`` raises with a static cache shorter than
    the prompt, and the last frame of its traceback."""
    model.forward = forward
    cache = transformers.StaticCache(config=model.config, max_cache_len=4)
    with pytest.raises(Exception) as info:
        model.generate(ids, past_key_values=cache, max_new_tokens=3, do_sample=False,
                       pad_token_id=0)
    last = info.traceback[-1]
    return type(info.value), str(info.value), (str(last.path), last.lineno)


@pytest.mark.parametrize("family", ["llama", "gpt2"])
def test_prompt_longer_than_the_static_cache_raises_eagers_error(family):
    model = _model(family)
    ids = torch.randint(3, 128, (1, 6), generator=torch.Generator().manual_seed(0))
    eager_forward = model.forward
    expected = _generate_error(model, eager_forward, ids)
    traced = pyinterp.trace(eager_forward, backend=CountingCalls())
    for _ in range(2):  # the capture, then the same call again
        assert _generate_error(model, traced, ids) == expected


class DequeCache(transformers.DynamicCache):
    """A cache whose update also writes state we do not model: a native
    ``collections.deque`` of the lengths it was given."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.seen = collections.deque()

    def update(self, key_states, value_states, layer_idx, cache_kwargs=None):
        self.seen.append(key_states.shape[-2])
        return super().update(key_states, value_states, layer_idx, cache_kwargs)


def test_cache_of_a_type_we_do_not_model_breaks_and_names_it():
    # Never silently mishandled: same tokens and same cache state as eager,
    # and every step's entry says why it runs natively, naming the type.
    model = _model("llama")
    ids = torch.randint(3, 128, (1, 6), generator=torch.Generator().manual_seed(0))
    kwargs = dict(max_new_tokens=3, do_sample=False, pad_token_id=0)
    eager_forward = model.forward
    eager_cache = DequeCache()
    expected = model.generate(ids, past_key_values=eager_cache, **kwargs)
    model.forward = pyinterp.trace(eager_forward, backend=CountingCalls())
    cache = DequeCache()
    actual = model.generate(ids, past_key_values=cache, **kwargs)
    assert torch.equal(actual, expected)
    assert list(cache.seen) == list(eager_cache.seen)
    entries = model.forward.cache_entries()
    assert entries
    for entry in entries:
        assert any("deque.append()" in reason and "opaque-native-call" in reason
                   for reason in entry.break_reasons), entry.break_reasons


@pytest.mark.parametrize("family,cache,sample", [
    ("llama", "dynamic", False),
    ("gpt2", "static", True),
])
def test_generate_traced_as_a_whole_gives_eagers_tokens_on_every_call(family, cache, sample):
    """``pyinterp.trace(model.generate)`` (issue 20's stretch): the decoding
    loop breaks once per step (``bool(unfinished.max() == 0)`` decides on
    tensor data), so ``generate`` and ``_sample`` run in the interpreter
    and their callees (the forward, the input preparation) through traced
    wrappers.  Tokens equal eager's on every call, and once every callee
    has its entries (the fifth call on 3.11, the sixth or seventh on
    3.12+), every step runs through a graph.  Found with it: a hit rebuilt the run's
    ``StoppingCriteriaList`` (a list subclass) without its items, so
    ``generate`` never stopped; and 3.11's ``EnumType.__getattr__`` hid
    where ``GenerationMode.GREEDY_SEARCH`` was read, so a hit made a new
    member and raised TypeError."""
    model = _model(family)
    kwargs = dict(max_new_tokens=NEW_TOKENS, do_sample=sample, pad_token_id=0)
    if cache == "static":
        kwargs["cache_implementation"] = "static"
    prompts = [torch.randint(3, 128, (2, 6), generator=torch.Generator().manual_seed(seed % 2))
               for seed in range(8)]
    with torch.no_grad():  # (eager's tokens first: its generate sets state on the model)
        expected = []
        for seed, ids in enumerate(prompts):
            torch.manual_seed(seed)
            expected.append(model.generate(ids, **kwargs))
        backend = CountingCalls()
        generate = pyinterp.trace(model.generate, backend=backend)
        for seed, ids in enumerate(prompts):
            torch.manual_seed(seed)
            before = backend.calls
            assert torch.equal(generate(ids, **kwargs), expected[seed]), seed
    assert backend.calls - before >= NEW_TOKENS  # (the last call: a graph per step at least)
    explanation = pyinterp.explain(model.generate, ids, **kwargs)
    assert {r.kind for r in explanation.break_reasons} == {"data-dependent-value"}, \
        str(explanation)
