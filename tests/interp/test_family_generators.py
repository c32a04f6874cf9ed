"""Differential tests: the ``generators`` opcode family.

RETURN_GENERATOR, YIELD_VALUE, SEND, GET_YIELD_FROM_ITER, GET_AWAITABLE,
GET_AITER, GET_ANEXT, END_ASYNC_FOR, ASYNC_GEN_WRAP, BEFORE_ASYNC_WITH;
generator protocol (send/throw/close, yield from, return values), and
coroutines/async generators driven by ``asyncio.run``.
"""
import sys

import pytest

from pyinterp.testing import case, run_case

CASES = {
    "simple_generator": case("""
        def gen(n):
            for i in range(n):
                yield i * i
        def f():
            return list(gen(5)), sum(gen(4)), type(gen(1)).__name__
    """, expect=([0, 1, 4, 9, 16], 14, "generator")),
    "returned_generator_is_consumed_by_caller": case("""
        def f(n):
            yield "start"
            for i in range(n):
                x = yield i
                if x:
                    yield ("got", x)
            return "done"
    """, args=(3,), consume=True),
    "send_and_return_value": case("""
        def acc():
            total = 0
            while True:
                v = yield total
                if v is None:
                    return total
                total += v
        def f():
            g = acc()
            out = [next(g), g.send(1), g.send(2)]
            try:
                g.send(None)
            except StopIteration as e:
                out.append(("stop", e.value))
            return out
    """, expect=[0, 1, 3, ("stop", 3)]),
    "send_to_unstarted": case("""
        def gen():
            yield 1
        def f():
            gen().send(5)
    """, raises=TypeError),
    "throw_caught_and_uncaught": case("""
        log = []
        def gen():
            while True:
                try:
                    yield 1
                except ValueError as e:
                    log.append(("caught", str(e)))
                    yield "recovered"
        def f():
            g = gen()
            next(g)
            r = [g.throw(ValueError("v"))]
            next(g)
            try:
                g.throw(KeyError("k"))
            except KeyError as e:
                r.append(("propagated", str(e)))
            r.append(next(g, "exhausted"))
            return r
    """),
    "throw_class_and_args": case("""
        def gen():
            try:
                yield 1
            except Exception as e:
                yield repr(e)
        def f():
            g = gen()
            next(g)
            return g.throw(IndexError)
    """, expect="IndexError()"),
    "close_runs_finally_and_generatorexit": case("""
        log = []
        def gen():
            try:
                yield 1
                yield 2
            except GeneratorExit:
                log.append("exit")
                raise
            finally:
                log.append("finally")
        def f():
            g = gen()
            next(g)
            g.close()
            g.close()
            return log, list(g)
    """),
    "close_yielding_is_runtime_error": case("""
        def gen():
            try:
                yield 1
            except GeneratorExit:
                yield 2
        def f():
            g = gen()
            next(g)
            g.close()
    """, raises=RuntimeError),
    "stopiteration_inside_generator_pep479": case("""
        def gen():
            yield 1
            raise StopIteration("oops")
        def f():
            return list(gen())
    """, raises=RuntimeError),
    "generator_already_executing": case("""
        def gen():
            yield next(me)
        def f():
            global me
            me = gen()
            return next(me)
    """, raises=ValueError),
    "yield_from_generator_with_return": case("""
        def inner():
            x = yield "a"
            y = yield ("b", x)
            return ("inner result", y)
        def outer():
            r = yield from inner()
            yield r
        def f():
            g = outer()
            return [next(g), g.send(1), g.send(2)]
    """, expect=["a", ("b", 1), ("inner result", 2)]),
    "yield_from_iterables": case("""
        def gen():
            yield from [1, 2]
            yield from "ab"
            yield from range(2)
            yield from (x for x in (7, 8))
            r = yield from []
            yield r
        def f():
            return list(gen())
    """, expect=[1, 2, "a", "b", 0, 1, 7, 8, None]),
    "yield_from_user_iterator_send": case("""
        class It:
            def __init__(self): self.n = 0
            def __iter__(self): return self
            def __next__(self):
                self.n += 1
                if self.n > 2:
                    raise StopIteration("it-ret")
                return self.n
            def send(self, v):
                return ("sent", v)
        def outer():
            r = yield from It()
            yield r
        def f():
            g = outer()
            return [next(g), g.send("x"), next(g), next(g), next(g)]
    """),
    "throw_into_yield_from_generator": case("""
        log = []
        def inner():
            try:
                yield 1
            except KeyError:
                log.append("inner caught")
                yield "inner recovered"
            return "inner done"
        def outer():
            r = yield from inner()
            log.append(r)
            yield "outer continues"
        def f():
            g = outer()
            out = [next(g), g.throw(KeyError), next(g)]
            return out, log
    """),
    "throw_into_yield_from_uncaught_by_inner": case("""
        log = []
        def inner():
            yield 1
        def outer():
            try:
                yield from inner()
            except ValueError as e:
                log.append(("outer caught", str(e)))
                yield "outer"
        def f():
            g = outer()
            next(g)
            return g.throw(ValueError("x")), log
    """),
    "throw_into_yield_from_iterator_without_throw": case("""
        def outer():
            try:
                yield from iter([1, 2, 3])
            except ValueError:
                yield "caught in outer"
        def f():
            g = outer()
            next(g)
            return g.throw(ValueError)
    """, expect="caught in outer"),
    "throw_into_yield_from_inner_returns": case("""
        def inner():
            try:
                yield 1
            except KeyError:
                return "returned on throw"
        def outer():
            r = yield from inner()
            yield r
        def f():
            g = outer()
            next(g)
            return g.throw(KeyError)
    """, expect="returned on throw"),
    "close_propagates_into_yield_from": case("""
        log = []
        def inner():
            try:
                yield 1
            finally:
                log.append("inner closed")
        def outer():
            try:
                yield from inner()
            finally:
                log.append("outer closed")
        def f():
            g = outer()
            next(g)
            g.close()
            return log
    """, expect=["inner closed", "outer closed"]),
    "generator_expression_scoping": case("""
        def f():
            xs = [1, 2, 3]
            g = (x * y for x in xs for y in range(x))
            xs = "rebound"
            return list(g)
    """, expect=[0, 0, 2, 0, 3, 6]),
    "generator_expression_first_iterable_evaluated_eagerly": case("""
        def f():
            try:
                (x for x in 5)
            except TypeError as e:
                return str(e)
    """, expect="'int' object is not iterable"),
    "exception_state_is_per_generator": case("""
        import sys
        def gen():
            try:
                raise KeyError("in gen")
            except KeyError:
                yield sys.exc_info()[0]
                yield sys.exc_info()[0]
        def f():
            g = gen()
            r = [next(g), sys.exc_info()[0]]
            try:
                raise ValueError
            except ValueError:
                r.append(next(g))
                r.append(sys.exc_info()[0])
            return r
    """, expect=[KeyError, None, KeyError, ValueError]),
    "generator_context_chaining_across_yield": case("""
        def gen():
            try:
                yield 1
            except KeyError:
                raise ValueError("during handling")
        def f():
            g = gen()
            next(g)
            try:
                raise IndexError("caller")
            except IndexError:
                g.throw(KeyError("thrown"))
    """, raises=ValueError),
    "gi_state_attributes": case("""
        import inspect
        def gen():
            yield 1
        def f():
            g = gen()
            states = [inspect.getgeneratorstate(g)]
            next(g)
            states.append(inspect.getgeneratorstate(g))
            list(g)
            states.append(inspect.getgeneratorstate(g))
            return states, g.__name__, g.__qualname__
    """),
    "coroutine_basic": case("""
        import asyncio
        async def add(a, b):
            await asyncio.sleep(0)
            return a + b
        async def main():
            x = await add(1, 2)
            y = await asyncio.gather(add(3, 4), add(5, 6))
            return x, y
        def f():
            return asyncio.run(main())
    """, expect=(3, [7, 11])),
    "coroutine_exceptions": case("""
        import asyncio
        async def fail():
            await asyncio.sleep(0)
            raise KeyError("async")
        async def main():
            try:
                await fail()
            except KeyError as e:
                return ("caught", str(e))
        def f():
            return asyncio.run(main())
    """),
    "await_non_awaitable": case("""
        import asyncio
        async def main():
            await 5
        def f():
            return asyncio.run(main())
    """, raises=TypeError),
    "custom_awaitable": case("""
        import asyncio
        class Aw:
            def __await__(self):
                yield from asyncio.sleep(0).__await__()
                return "custom"
        async def main():
            return await Aw()
        def f():
            return asyncio.run(main())
    """, expect="custom"),
    "types_coroutine_generator": case("""
        import types, asyncio
        @types.coroutine
        def legacy():
            yield
            return "legacy"
        async def main():
            return await legacy()
        def f():
            return asyncio.run(main())
    """, expect="legacy"),
    "coroutine_send_protocol_directly": case("""
        class Suspend:
            def __await__(self):
                v = yield "suspended"
                return ("resumed with", v)
        async def co():
            return await Suspend()
        def f():
            c = co()
            first = c.send(None)
            try:
                c.send(42)
            except StopIteration as e:
                return first, e.value
    """, expect=("suspended", ("resumed with", 42))),
    "async_with": case("""
        import asyncio
        log = []
        class ACM:
            async def __aenter__(self):
                log.append("aenter")
                await asyncio.sleep(0)
                return "ctx"
            async def __aexit__(self, *exc):
                log.append(("aexit", exc[0].__name__ if exc[0] else None))
                return exc[0] is KeyError
        async def main():
            async with ACM() as v:
                log.append(v)
            async with ACM():
                raise KeyError
            try:
                async with ACM():
                    raise ValueError("out")
            except ValueError:
                log.append("propagated")
            return log
        def f():
            return asyncio.run(main())
    """),
    "async_with_not_a_manager": case("""
        import asyncio
        async def main():
            async with object():
                pass
        def f():
            asyncio.run(main())
    """, raises=TypeError),
    "async_for_over_async_generator": case("""
        import asyncio
        async def agen(n):
            for i in range(n):
                await asyncio.sleep(0)
                yield i
        async def main():
            out = []
            async for x in agen(3):
                out.append(x)
            out.append([y async for y in agen(4) if y % 2])
            return out
        def f():
            return asyncio.run(main())
    """, expect=[0, 1, 2, [1, 3]]),
    "async_for_user_async_iterator": case("""
        import asyncio
        class Ticker:
            def __init__(self, n): self.n = n
            def __aiter__(self): return self
            async def __anext__(self):
                if self.n == 0:
                    raise StopAsyncIteration
                self.n -= 1
                return self.n
        async def main():
            return [x async for x in Ticker(3)]
        def f():
            return asyncio.run(main())
    """, expect=[2, 1, 0]),
    "async_for_not_async_iterable": case("""
        import asyncio
        async def main():
            async for x in [1, 2]:
                pass
        def f():
            asyncio.run(main())
    """, raises=TypeError),
    "async_generator_asend_athrow_aclose": case("""
        import asyncio
        log = []
        async def agen():
            try:
                x = yield 1
                log.append(("got", x))
                try:
                    yield 2
                except KeyError:
                    log.append("athrow caught")
                    yield 3
            finally:
                log.append("agen finally")
        async def main():
            g = agen()
            r = [await g.__anext__(), await g.asend("sent"), await g.athrow(KeyError)]
            await g.aclose()
            return r, log
        def f():
            return asyncio.run(main())
    """),
    "async_generator_return_stops": case("""
        import asyncio
        async def agen():
            yield 1
            return
        async def main():
            g = agen()
            await g.__anext__()
            try:
                await g.__anext__()
            except StopAsyncIteration:
                return "stopped"
        def f():
            return asyncio.run(main())
    """, expect="stopped"),
    "async_generator_awaits_between_yields": case("""
        import asyncio
        async def ticks():
            for i in range(3):
                await asyncio.sleep(0)
                yield i
                await asyncio.sleep(0)
        async def main():
            return [(i, j) async for i in ticks() for j in range(i)]
        def f():
            return asyncio.run(main())
    """, expect=[(1, 0), (2, 0), (2, 1)]),
    "await_inside_comprehension_and_gather_of_tasks": case("""
        import asyncio
        async def sq(x):
            await asyncio.sleep(0)
            return x * x
        async def main():
            tasks = [asyncio.create_task(sq(i)) for i in range(4)]
            return [await t for t in tasks]
        def f():
            return asyncio.run(main())
    """, expect=[0, 1, 4, 9]),
    "coroutine_reawait_error": case("""
        import asyncio
        async def co():
            return 1
        async def main():
            c = co()
            await c
            await c
        def f():
            asyncio.run(main())
    """, raises=RuntimeError),
    "throw_into_user_iterator_with_throw_method": case("""
        class It:
            def __iter__(self): return self
            def __next__(self): return 1
            def throw(self, *args):
                return ("it.throw got", len(args), type(args[0]).__name__, str(args[0]))
        def gen():
            yield from It()
        def f():
            g = gen()
            next(g)
            return g.throw(KeyError("k"))
    """, expect=("it.throw got", 1, "KeyError", "'k'")),
    "close_into_user_iterator_with_close": case("""
        log = []
        class It:
            def __iter__(self): return self
            def __next__(self): return 1
            def close(self): log.append("closed")
        def gen():
            try:
                yield from It()
            finally:
                log.append("gen finally")
        def f():
            g = gen()
            next(g)
            g.close()
            return log
    """, expect=["closed", "gen finally"]),
    "close_of_subiterator_raising": case("""
        class It:
            def __iter__(self): return self
            def __next__(self): return 1
            def close(self): raise KeyError("close failed")
        def gen():
            yield from It()
        def f():
            g = gen()
            next(g)
            g.close()
    """, raises=KeyError),
    "send_none_to_delegating_user_iterator": case("""
        class It:
            def __iter__(self): return self
            def __next__(self): return "next"
            def send(self, v): return ("send", v)
        def gen():
            yield from It()
        def f():
            g = gen()
            return next(g), g.send(None), g.send(1), next(g)
    """, expect=("next", "next", ("send", 1), "next")),
    "generator_ignoring_generatorexit": case("""
        def gen():
            try:
                yield 1
            finally:
                yield 2
        def f():
            g = gen()
            next(g)
            g.close()
    """, raises=RuntimeError),
    "generator_close_swallows_return": case("""
        def gen():
            try:
                yield 1
            except GeneratorExit:
                return "ignored by close"
        def f():
            g = gen()
            next(g)
            return g.close(), list(g)
    """, expect=(None if sys.version_info < (3, 13) else "ignored by close", [])),  # 3.13: close() returns it
    "throw_keyboard_interrupt_not_caught_by_exception": case("""
        def gen():
            try:
                yield 1
            except Exception:
                yield "wrong"
        def f():
            g = gen()
            next(g)
            g.throw(KeyboardInterrupt)
    """, raises=KeyboardInterrupt),
    "deep_yield_from_throw": case("""
        def chain(n):
            if n == 0:
                try:
                    yield "bottom"
                except KeyError:
                    yield "caught at bottom"
                return
            yield from chain(n - 1)
        def f():
            g = chain(30)
            next(g)
            return g.throw(KeyError)
    """, expect="caught at bottom"),
    "coroutine_raising_stopiteration": case("""
        import asyncio
        async def co():
            raise StopIteration("x")
        def f():
            return asyncio.run(co())
    """, raises=RuntimeError),
    "async_generator_raising_stopasynciteration": case("""
        import asyncio
        async def ag():
            yield 1
            raise StopAsyncIteration
        async def main():
            return [x async for x in ag()]
        def f():
            return asyncio.run(main())
    """, raises=RuntimeError),
    "async_generator_finally_awaits_on_aclose": case("""
        import asyncio
        log = []
        async def ag():
            try:
                yield 1
                yield 2
            finally:
                await asyncio.sleep(0)
                log.append("cleanup")
        async def main():
            g = ag()
            await g.__anext__()
            await g.aclose()
            return log
        def f():
            return asyncio.run(main())
    """, expect=["cleanup"]),
    "coroutine_throw_and_close": case("""
        log = []
        class Susp:
            def __await__(self):
                yield "x"
        async def co():
            try:
                await Susp()
            except KeyError:
                log.append("caught")
                await Susp()
            finally:
                log.append("fin")
        def f():
            c = co()
            c.send(None)
            r = c.throw(KeyError)
            c.close()
            return r, log
    """, expect=("x", ["caught", "fin"])),
    "await_in_except_and_finally": case("""
        import asyncio, sys
        async def main():
            log = []
            try:
                raise KeyError
            except KeyError:
                await asyncio.sleep(0)
                log.append(sys.exc_info()[0].__name__)
            finally:
                await asyncio.sleep(0)
                log.append("finally")
            return log, sys.exc_info()
        def f():
            return asyncio.run(main())
    """, expect=(["KeyError", "finally"], (None, None, None))),
    "async_with_exception_in_aexit": case("""
        import asyncio
        class A:
            async def __aenter__(self): return self
            async def __aexit__(self, *a): raise KeyError("aexit")
        async def main():
            async with A():
                raise ValueError("body")
        def f():
            asyncio.run(main())
    """, raises=KeyError),
    "asyncio_cancellation": case("""
        import asyncio
        log = []
        async def worker():
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                log.append("cancelled")
                raise
        async def main():
            t = asyncio.create_task(worker())
            await asyncio.sleep(0)
            t.cancel()
            try:
                await t
            except asyncio.CancelledError:
                log.append("main saw cancel")
            return log
        def f():
            return asyncio.run(main())
    """, expect=["cancelled", "main saw cancel"]),
    "asyncio_taskgroup_except_star": case("""
        import asyncio
        async def bad(n):
            await asyncio.sleep(0)
            raise ValueError(n)
        async def main():
            seen = []
            try:
                async with asyncio.TaskGroup() as tg:
                    tg.create_task(bad(1))
                    tg.create_task(bad(2))
            except* ValueError as eg:
                seen.extend(sorted(str(e) for e in eg.exceptions))
            return seen
        def f():
            return asyncio.run(main())
    """, expect=["1", "2"]),
    "super_in_generator_and_coroutine_methods": case("""
        import asyncio
        class A:
            def items(self): return [1, 2]
            async def get(self): return "A"
        class B(A):
            def items(self):
                yield from super().items()
                yield 3
            async def get(self):
                return "B" + await super().get()
        def f():
            return list(B().items()), asyncio.run(B().get())
    """, expect=([1, 2, 3], "BA")),
    # CPython's test_generators: a generator in a reference cycle (its frame
    # holds it) is finalized when the cycle is collected, its frame intact.
    "generator_in_a_cycle_is_finalized": case("""
        import gc
        def f():
            finalized = []
            def gen():
                try:
                    g = yield
                    yield 1
                finally:
                    finalized.append(g is not None)
            g = gen()
            next(g)
            g.send(g)
            del g
            gc.collect()
            return finalized
    """, expect=[True]),
    # CPython's test_generators (GeneratorStackTraceTest): a sub-generator's
    # frame is called by the generator delegating to it, on every resume.
    "sub_generator_frame_is_called_by_the_delegating_one": case("""
        import sys
        log = []
        def names():
            frame, out = sys._getframe(1), []
            while frame.f_code.co_name not in ("f", "step"):
                out.append(frame.f_code.co_name)
                frame = frame.f_back
            return out
        def inner():
            log.append(names())
            try:
                yield
            except KeyError:
                pass
            log.append(names())
            yield
        def outer():
            log.append(names())
            yield from inner()
        def step(gen, how):
            return gen.send(None) if how == "send" else gen.throw(KeyError)
        def f():
            for how in ("send", "throw"):
                gen = outer()
                next(gen)
                step(gen, how)
            return log
    """, expect=[["outer"], ["inner", "outer"], ["inner", "outer"]] * 2),
    # A suspended generator closed when dropped: an exception leaving its
    # frame (GeneratorExit) frees its locals first slot first.
    "dropped_generator_frees_its_locals_in_order": case("""
        G = []
        class C0:
            def __init__(self, v):
                self.v = v
            def __del__(self):
                G.append(("del", self.v))
        def gen(n):
            a = b = C0(1)
            c = C0(2)
            yield n
        def f():
            G.append(next(gen(0)))
            return list(G)
    """, expect=[("del", 1), ("del", 2), 0]),
    # CPython's test_coroutines (test_for_11): an __anext__ result that
    # cannot be awaited is a TypeError caused by why (__await__'s error).
    "async_for_invalid_anext_result": case("""
        def f():
            out = []
            class F:
                def __aiter__(self): return self
                def __anext__(self): return self
                def __await__(self): 1 / 0
            class G:
                def __aiter__(self): return self
                def __anext__(self): return 5
            for cls in (F, G):
                async def main():
                    async for _ in cls():
                        pass
                try:
                    main().send(None)
                except TypeError as e:
                    out.append((str(e), e.__context__ is e.__cause__))
            return out
    """),
    # A generator is named after its function's __name__/__qualname__ (which
    # may have been changed), not its code's.
    "generator_names_follow_the_function": case("""
        def f():
            def func():
                yield 1
            func.__name__, func.__qualname__ = "func_name", "func_qualname"
            g = func()
            async def co():
                pass
            co.__name__ = "renamed"
            c = co()
            c.close()
            return g.__name__, g.__qualname__, c.__name__, (x for x in ()).__name__
    """, expect=("func_name", "func_qualname", "renamed", "<genexpr>")),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_generators(name):
    run_case(CASES[name])


# Known differences: an interpreted generator is a host generator whose frame
# is the driver's, so frame-level introspection shows the driver.
@pytest.mark.xfail(strict=True, reason="gi_yieldfrom of an interpreted generator is None: "
                   "the host driver does not itself delegate with yield from (if it did, "
                   "the delegating frame would be off the interpreter's frame stack while "
                   "the sub-generator runs, and the sub-generator's f_back would skip it).")
def test_gi_yieldfrom():
    run_case(case("""
        def inner():
            yield 1
        def gen():
            yield from inner()
        def f():
            g = gen()
            next(g)
            return g.gi_yieldfrom is not None
    """, expect=True))


@pytest.mark.xfail(strict=True, reason="inspect.getgeneratorlocals()/gi_frame show the host "
                   "driver's locals, not the interpreted frame's.")
def test_generator_locals():
    run_case(case("""
        import inspect
        def gen():
            x = 1
            yield x
        def f():
            g = gen()
            next(g)
            return dict(inspect.getgeneratorlocals(g))  # 3.13: a proxy; read it while g lives
    """, expect={"x": 1}))


@pytest.mark.xfail(strict=True, reason="gen.throw(SomeClass) forwards an instance to a "
                   "delegated iterator's throw(): the driver only sees the normalized "
                   "exception, CPython forwards throw()'s own arguments.")
def test_throw_class_into_user_iterator():
    run_case(case("""
        class It:
            def __iter__(self): return self
            def __next__(self): return 1
            def throw(self, *args): return args[0] is KeyError
        def gen():
            yield from It()
        def f():
            g = gen()
            next(g)
            return g.throw(KeyError)
    """, expect=True))
