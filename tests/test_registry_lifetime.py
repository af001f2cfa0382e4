"""The registry under a concurrent program and over time: a tool may use the registry from its own run;
execution goes on while tools come and go; cycles through tools are collected and unregistered tools
released; Tool and ToolRegistry objects cannot be pickled or copied (TypeError: they hold live code
and, for built-ins, Rust state) while ToolResponse and ToolParameter round-trip; cancelling
aexecute_tool cancels an async tool.
"""

from __future__ import annotations

import asyncio
import copy
import gc
import pickle
import threading
import weakref

import pytest
from agentmaker import (
    CalculatorTool,
    Tool,
    ToolParameter,
    ToolRegistry,
    ToolResponse,
)
from hostile_tools import Echo, Seen, make, run_threads

# re-entrancy and threads ----------------------------------------------------------------------


def test_a_tool_may_use_the_registry_from_run():
    reg = ToolRegistry()

    class Reenter(Tool):
        def __init__(self):
            super().__init__("reenter", "Uses the registry that runs it.")

        def get_parameters(self):
            return []

        def run(self, parameters):
            reg.register(Echo("inner"), overwrite=True)
            inner = reg.execute_tool("inner", {"text": "hi"})
            schemas = reg.to_openai_schema()
            nested = reg.execute_tool("reenter_probe", {})
            reg.unregister("inner")
            reg.unregister("reenter")
            return f"{inner.text} {len(schemas)} {nested.is_error} {reg.names()}"

    reg.register(Reenter())
    assert reg.execute_tool("reenter", {}).text == "hi 2 True []"
    reg.register(Reenter())
    assert asyncio.run(reg.aexecute_tool("reenter", {})).text == "hi 2 True []"


def test_finalizers_of_replaced_tools_may_use_the_registry():
    reg = ToolRegistry()
    seen = []

    class Noticing(Echo):
        def __del__(self):
            seen.append((self.name, reg.names(), len(reg.to_openai_schema())))

    reg.register(Noticing("a"))
    reg.register(Echo("a"), overwrite=True)  # the only reference to the old tool goes away
    reg.register_all([Noticing("b")])
    reg.register_all([Echo("b")], on_conflict="overwrite")
    reg.register(Noticing("c"))
    reg.unregister("c")
    gc.collect()
    assert seen == [("a", ["a"], 1), ("b", ["a", "b"], 2), ("c", ["a", "b"], 2)]


def test_concurrent_execution_while_tools_come_and_go():
    reg = make(Echo())
    reg.register_all([Echo(f"fixed_{i}") for i in range(20)])
    counts = [0] * 8

    def worker(i):
        for _ in range(150):
            assert reg.execute_tool("echo", {"text": str(i)}).text == str(i)
            churn = reg.execute_tool("churn", {"text": "c"})
            assert churn.text == "c" or churn.text.startswith("Error: tool 'churn' does not exist.")
            assert "failed parameter validation" in reg.execute_tool("echo", {"text": i}).text
            names = [t["function"]["name"] for t in reg.to_openai_schema()]
            assert names[:21] == ["echo"] + [f"fixed_{k}" for k in range(20)]
            assert reg.get_tools_description().startswith("- echo: Echo text back.")
            counts[i] += 1

    def churner():
        for round_ in range(150):
            reg.register(Echo("churn", f"round {round_}"), overwrite=True)
            reg.to_openai_schema()
            reg.unregister("churn")
            reg.register_all([Echo(f"batch_{j}") for j in range(5)], on_conflict="overwrite")
            reg.get_catalog()
            for j in range(5):
                reg.unregister(f"batch_{j}")

    run_threads([lambda i=i: worker(i) for i in range(8)] + [churner])
    assert counts == [150] * 8
    assert reg.names() == ["echo"] + [f"fixed_{i}" for i in range(20)]
    assert [t["function"]["name"] for t in reg.to_openai_schema()] == reg.names()


def test_concurrent_async_execution_on_worker_threads():
    reg = make(Echo(), Seen())

    async def many(i):
        results = await asyncio.gather(*(reg.aexecute_tool("echo", {"text": f"{i}-{k}"}) for k in range(30)))
        return [r.text for r in results]

    outcomes = {}

    def loop_in_thread(i):
        outcomes[i] = asyncio.run(many(i))

    run_threads([lambda i=i: loop_in_thread(i) for i in range(4)])
    assert outcomes == {i: [f"{i}-{k}" for k in range(30)] for i in range(4)}


# lifetime and garbage collection --------------------------------------------------------------


def test_cycles_through_tools_and_callables_are_collected():
    def build():
        reg = ToolRegistry()

        def lookup(key: str) -> str:
            """Reads the registry that holds this function."""
            return str(key in reg)

        reg.register_callable(lookup)  # registry -> tool -> function -> closure cell -> registry
        tool = Echo()
        tool.registry = reg
        reg.register(tool)
        reg.self_ref = reg  # the Python subclass has a __dict__
        assert reg.execute_tool("lookup", {"key": "echo"}).text == "True"
        return [weakref.ref(reg), weakref.ref(tool), weakref.ref(lookup)]

    refs = build()
    gc.collect()
    assert [r() for r in refs] == [None, None, None]


def test_unregistered_tools_are_released():
    reg = make(Echo("a"))
    ref = weakref.ref(reg.get("a"))
    reg.to_openai_schema()
    reg.unregister("a")
    gc.collect()
    assert ref() is None


def test_tools_are_released_after_every_rendering():
    reg = make(Echo("a"), Echo("b"))
    ref = weakref.ref(reg.get("a"))
    kept = [
        reg.to_openai_schema(strict=True),
        reg.to_anthropic_schema(),
        reg.to_gemini_schema(["a"]),
        reg.strict_fallbacks(),
        reg.get_tools_description(),
        reg.get_catalog(),
    ]
    reg.unregister("a")
    gc.collect()
    assert ref() is None
    assert [t["name"] for t in reg.to_anthropic_schema()] == ["b"]
    assert kept[1][0]["name"] == "a"  # what was handed out stays valid


# subclassing, pickling, copying ----------------------------------------------------------------


def test_a_python_subclass_of_the_registry():
    class Audited(ToolRegistry):
        def __init__(self, tools, label):
            super().__init__()
            self.label = label
            self.log = []
            self.register_all(tools)

        def execute_tool(self, name, parameters):
            self.log.append(name)
            return super().execute_tool(name, parameters)

    reg = Audited([Echo()], label="audit")
    assert isinstance(reg, ToolRegistry) and reg.label == "audit"
    assert reg.execute_tool("echo", {"text": "hi"}).text == "hi"
    assert reg.execute_tool("nope", {}).is_error
    assert reg.log == ["echo", "nope"]
    assert asyncio.run(reg.aexecute_tool("echo", {"text": "async"})).text == "async"
    assert reg.to_openai_schema()[0]["function"]["name"] == "echo"
    assert ToolRegistry("ignored", extra=1).names() == []


@pytest.mark.parametrize(
    "make_obj, cls_name",
    [
        (lambda: make(Echo()), "ToolRegistry"),
        (lambda: Echo(), "Echo"),
        (CalculatorTool, "agentmaker.CalculatorTool"),
    ],
)
def test_tools_and_registries_refuse_pickle_and_copy(make_obj, cls_name):
    obj = make_obj()
    for attempt in (pickle.dumps, copy.copy, copy.deepcopy):
        with pytest.raises(TypeError, match=f"cannot pickle '{cls_name}' object"):
            attempt(obj)


def test_responses_and_parameters_round_trip_through_pickle_and_copy():
    resp = ToolResponse.partial("cut", data={"rows": [1, 2]})
    assert pickle.loads(pickle.dumps(resp)) == resp
    assert (
        repr(pickle.loads(pickle.dumps(ToolResponse.error("e"))))
        == "ToolResponse(text='e', status='error', data=None)"
    )
    shallow, deep = copy.copy(resp), copy.deepcopy(resp)
    assert shallow == resp and shallow is not resp and shallow.data is resp.data
    assert deep == resp and deep.data is not resp.data
    param = ToolParameter("mode", "string", "Mode", required=False, default="read", schema={"enum": ["read"]})
    assert pickle.loads(pickle.dumps(param)) == param
    assert copy.deepcopy(param) == param and copy.deepcopy(param).schema is not param.schema
    with pytest.raises((TypeError, AttributeError, pickle.PicklingError)):
        pickle.dumps(ToolResponse.ok("x", data=lambda: 1))


# async cancellation ---------------------------------------------------------------------------


def test_cancelling_aexecute_tool_cancels_an_async_tool():
    log = []

    class Slow(Tool):
        def __init__(self):
            super().__init__("slow", "Waits until cancelled.")

        def get_parameters(self):
            return []

        async def arun(self, parameters):
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                log.append("cancelled")
                raise
            return "never"

    reg = make(Slow(), Echo())

    async def main():
        task = asyncio.create_task(reg.aexecute_tool("slow", {}))
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(reg.aexecute_tool("slow", {}), 0.01)
        return await reg.aexecute_tool("echo", {"text": "still fine"})

    assert asyncio.run(main()).text == "still fine"
    assert log == ["cancelled", "cancelled"]


def test_cancelling_aexecute_tool_of_a_sync_tool_leaves_the_worker_to_finish():
    started, release, finished = threading.Event(), threading.Event(), threading.Event()

    class Blocking(Echo):
        def run(self, parameters):
            started.set()
            release.wait(30)
            finished.set()
            return "finished"

    reg = make(Blocking("blocking"))

    async def main():
        task = asyncio.create_task(reg.aexecute_tool("blocking", {"text": "x"}))
        await asyncio.to_thread(started.wait, 30)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        cancelled_before_finish = not finished.is_set()
        release.set()
        await asyncio.to_thread(finished.wait, 30)
        return cancelled_before_finish

    assert asyncio.run(main()) is True
    assert finished.is_set()
    release.clear()
    release.set()
    assert reg.execute_tool("blocking", {"text": "x"}).text == "finished"
