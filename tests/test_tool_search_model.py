"""ToolSearchTool(strategy="model"): a model chooses the tools, keyword retrieval is the net."""

from __future__ import annotations

import asyncio
import threading

import pytest
from agent_support import ENTRY_POINTS, run_by
from agentmaker import (
    Agent,
    HybridRetriever,
    LLMClient,
    LLMResponse,
    RunCancelled,
    RunHooks,
    RunLimitExceeded,
    RunPolicy,
    TextDelta,
    ToolPermissions,
    ToolRegistry,
    ToolRetriever,
    ToolSearchTool,
    ToolStart,
    tool,
)
from agentmaker.testing import ScriptedLLM
from llm_wire_server import WireServer, json_reply


@tool
def send_invoice(customer: str) -> str:
    """Send an invoice by email to a customer.

    Args:
        customer: The customer's name.
    """
    return f"invoice sent to {customer}"


@tool
def bill_reminder(customer: str) -> str:
    """Remind a customer that a payment is due.

    Args:
        customer: The customer's name.
    """
    return f"reminded {customer}"


@tool
def weather(city: str) -> str:
    """Weather forecast of a city.

    Args:
        city: The city.
    """
    return f"{city}: sunny"


def registry(search_llm, **options):
    reg = ToolRegistry()
    reg.register(weather)
    reg.register(send_invoice, deferred=True)
    reg.register(bill_reminder, deferred=True)
    reg.register(ToolSearchTool(ToolRetriever(reg), strategy="model", llm=search_llm, **options))
    return reg


def answer(content: str, tokens: int = 7) -> LLMResponse:
    return LLMResponse(content=content, model="m", usage={"prompt_tokens": tokens, "completion_tokens": 1})


@pytest.mark.parametrize("how", ENTRY_POINTS)
def test_the_model_chooses_and_its_call_counts_in_the_run(how):
    chooser = ScriptedLLM([answer('Sure: ["bill_reminder"]')])
    llm = ScriptedLLM(
        [
            ScriptedLLM.tool_call("tool_search", {"query": "money the customer owes"}),
            ScriptedLLM.tool_call("bill_reminder", {"customer": "ACME"}, call_id="c2"),
            "Reminded.",
        ]
    )
    result = run_by(Agent("a", llm, tool_registry=registry(chooser)), how)
    found = result.tool_calls[0]
    assert found.data == {"discovered": ["bill_reminder"]}
    assert "- bill_reminder:" in found.output and "send_invoice" not in found.output
    assert llm.requests[1].tool_names == ["weather", "tool_search", "bill_reminder"]
    assert result.tool_calls[1].output == "reminded ACME"
    # The catalog's names and descriptions and the query went to the choosing model.
    sent = chooser.requests[0].messages
    assert "money the customer owes" in sent[1]["content"]
    assert "- send_invoice: Send an invoice by email to a customer." in sent[1]["content"]
    assert "tool_search" not in sent[1]["content"]
    assert result.usage.llm_calls == 4 and result.usage.prompt_tokens == 7


@pytest.mark.parametrize(
    "reply",
    [
        answer('["send_invoice", "made_up_tool"]'),
        answer("I would use the invoice tool."),
        RuntimeError("down"),
    ],
)
def test_a_failing_or_inventive_model_falls_back_to_keywords(reply):
    chooser = ScriptedLLM([reply])
    llm = ScriptedLLM([ScriptedLLM.tool_call("tool_search", {"query": "send an invoice email"}), "ok"])
    result = Agent("a", llm, tool_registry=registry(chooser)).run("go")
    assert result.tool_calls[0].data["discovered"][0] == "send_invoice"
    assert chooser.calls == 1
    assert result.usage.llm_calls == 3


def test_the_model_may_find_none_and_a_shortlist_bounds_what_it_sees():
    chooser = ScriptedLLM([answer("[]")])
    llm = ScriptedLLM([ScriptedLLM.tool_call("tool_search", {"query": "book a flight"}), "ok"])
    result = Agent("a", llm, tool_registry=registry(chooser)).run("go")
    assert result.tool_calls[0].output == "(no relevant tools found)"
    assert chooser.calls == 1
    # With more candidates than the shortlist, keyword retrieval picks the model's candidates.
    chooser = ScriptedLLM([answer('["send_invoice"]')])
    llm = ScriptedLLM([ScriptedLLM.tool_call("tool_search", {"query": "invoice email"}), "ok"])
    result = Agent("a", llm, tool_registry=registry(chooser, shortlist=1)).run("go")
    assert result.tool_calls[0].data == {"discovered": ["send_invoice"]}
    catalog = chooser.requests[0].messages[1]["content"].split("Catalog:\n")[1]
    assert catalog == "- send_invoice: Send an invoice by email to a customer."


def test_the_search_model_counts_against_the_run_limits():
    # One model call left for the search: it is made, and the agent's next call is refused.
    chooser = ScriptedLLM([answer('["bill_reminder"]')])
    llm = ScriptedLLM([ScriptedLLM.tool_call("tool_search", {"query": "send an invoice email"}), "ok"])
    agent = Agent("a", llm, tool_registry=registry(chooser), run_policy=RunPolicy(max_llm_calls=2))
    with pytest.raises(RunLimitExceeded, match="exceeded LLM call limit 2") as info:
        agent.run("go")
    assert chooser.calls == 1 and info.value.result.usage.llm_calls == 2
    # None left: the search does not call its model and answers by keywords.
    chooser = ScriptedLLM([answer('["bill_reminder"]')])
    llm = ScriptedLLM([ScriptedLLM.tool_call("tool_search", {"query": "send an invoice email"}), "ok"])
    agent = Agent("a", llm, tool_registry=registry(chooser), run_policy=RunPolicy(max_llm_calls=1))
    with pytest.raises(RunLimitExceeded) as info:
        agent.run("go")
    assert chooser.calls == 0
    assert info.value.result.tool_calls[0].data["discovered"][0] == "send_invoice"


def test_bad_settings_are_refused():
    reg = ToolRegistry()
    with pytest.raises(ValueError, match="strategy must be one of"):
        ToolSearchTool(ToolRetriever(reg), strategy="guess")
    with pytest.raises(TypeError, match='strategy="model" needs llm='):
        ToolSearchTool(ToolRetriever(reg), strategy="model")
    with pytest.raises(ValueError, match='llm= is used only with strategy="model"'):
        ToolSearchTool(ToolRetriever(reg), llm=ScriptedLLM([]))


# ------------------------------------------------------------------ the model under every entry point


class SyncOnly:
    """A model with a blocking chat only."""

    def __init__(self, reply):
        self.reply = reply
        self.calls = 0

    def chat(self, messages, **kwargs):
        self.calls += 1
        return self.reply


class AsyncOnly(SyncOnly):
    """A model whose only chat is a coroutine."""

    async def chat(self, messages, **kwargs):
        self.calls += 1
        return self.reply


class Both(ScriptedLLM):
    """Both forms, recording which one the search used."""

    def __init__(self, script):
        super().__init__(script)
        self.used = []

    def chat(self, messages, **kwargs):
        self.used.append("chat")
        return super().chat(messages, **kwargs)

    async def achat(self, messages, **kwargs):
        self.used.append("achat")
        return await super().achat(messages, **kwargs)


def search_then_answer():
    return ScriptedLLM([ScriptedLLM.tool_call("tool_search", {"query": "dunning"}, call_id="s1"), "ok"])


@pytest.mark.parametrize("kind", [SyncOnly, AsyncOnly, Both])
@pytest.mark.parametrize("how", ENTRY_POINTS)
def test_the_model_chooses_under_every_entry_point_with_any_client(how, kind):
    reply = answer('["bill_reminder"]')
    chooser = kind([reply]) if kind is Both else kind(reply)
    result = run_by(Agent("a", search_then_answer(), tool_registry=registry(chooser)), how)
    # Keyword retrieval would have found nothing for this query: the model chose.
    assert result.tool_calls[0].data == {"discovered": ["bill_reminder"]}
    assert result.usage.llm_calls == 3 and result.usage.prompt_tokens == 7
    if kind is Both:  # the method the agent itself calls for that entry point
        assert chooser.used == (["chat"] if how == "run" else ["achat"])
    else:
        assert chooser.calls == 1


def test_keywords_alone_find_nothing_for_that_query():
    chooser = ScriptedLLM([RuntimeError("down")])
    result = Agent("a", search_then_answer(), tool_registry=registry(chooser)).run("go")
    assert result.tool_calls[0].output == "(no relevant tools found)"


@pytest.mark.parametrize("how", ENTRY_POINTS)
def test_the_search_models_calls_are_events_told_apart_by_call_id(how):
    chooser = ScriptedLLM([answer('["bill_reminder"]', tokens=5), RuntimeError("down")])
    llm = ScriptedLLM(
        [
            ScriptedLLM.tool_call("tool_search", {"query": "dunning"}, call_id="s1"),
            ScriptedLLM.tool_call("tool_search", {"query": "send an invoice email"}, call_id="s2"),
            "ok",
        ]
    )
    seen = []

    class Hooks(RunHooks):
        def on_llm_start(self, event):
            seen.append(("start", event.call_id, event.llm, event.turn, event.tools))

        def on_llm_end(self, event):
            seen.append(("end", event.call_id, event.response, event.error))

        def on_tool_start(self, event):
            seen.append(("tool", event.call_id))

        def on_tool_end(self, event):
            seen.append(("tool end", event.call_id))

    agent = Agent("a", llm, tool_registry=registry(chooser), hooks=Hooks())
    result = run_by(agent, how)
    assert [s[:2] for s in seen] == [
        ("start", None),
        ("end", None),
        ("tool", "s1"),
        ("start", "s1"),
        ("end", "s1"),
        ("tool end", "s1"),
        ("start", None),
        ("end", None),
        ("tool", "s2"),
        ("start", "s2"),
        ("end", "s2"),
        ("tool end", "s2"),
        ("start", None),
        ("end", None),
    ]
    agent_start, tool_start = seen[0], seen[3]
    assert agent_start[2] is None and tool_start[2] is chooser and tool_start[3:] == (1, 0)
    ok, failed = seen[4], seen[10]
    assert ok[2].usage["prompt_tokens"] == 5 and ok[3] is None
    # A failing model call still ends, with its error; the search fell back to keywords.
    assert failed[2] is None and isinstance(failed[3], RuntimeError) and str(failed[3]) == "down"
    assert result.tool_calls[1].data["discovered"][0] == "send_invoice"
    assert result.usage.llm_calls == 5 and result.usage.prompt_tokens == 5
    if how == "stream":  # the stream yields the same events, and no text of the search model
        events = list(
            Agent(
                "a", search_then_answer(), tool_registry=registry(ScriptedLLM([answer('["bill_reminder"]')]))
            ).stream("go")
        )
        kinds = [(type(e).__name__, getattr(e, "call_id", None)) for e in events]
        assert ("LLMStart", "s1") in kinds and ("LLMEnd", "s1") in kinds
        assert [e.text for e in events if isinstance(e, TextDelta)] == ["ok"]


@pytest.mark.parametrize("how", ENTRY_POINTS)
def test_the_search_model_counts_against_the_limits_under_every_entry_point(how):
    chooser = Both([answer('["bill_reminder"]')])
    agent = Agent(
        "a", search_then_answer(), tool_registry=registry(chooser), run_policy=RunPolicy(max_llm_calls=1)
    )
    with pytest.raises(RunLimitExceeded, match="exceeded LLM call limit 1") as info:
        run_by(agent, how)
    assert chooser.used == [] and info.value.result.usage.llm_calls == 1
    chooser = Both([answer('["bill_reminder"]')])
    agent = Agent(
        "a", search_then_answer(), tool_registry=registry(chooser), run_policy=RunPolicy(max_llm_calls=2)
    )
    with pytest.raises(RunLimitExceeded, match="exceeded LLM call limit 2") as info:
        run_by(agent, how)
    assert len(chooser.used) == 1 and info.value.result.tool_calls[0].data == {
        "discovered": ["bill_reminder"]
    }


class Hanging:
    """A model that never answers: ``chat`` blocks (sync) or awaits (async) until released."""

    def __init__(self, is_async):
        self.released = threading.Event()
        self.started = threading.Event()
        if is_async:
            self.chat = self._achat

    def chat(self, messages, **kwargs):
        self.started.set()
        self.released.wait(30)
        return answer('["bill_reminder"]')

    async def _achat(self, messages, **kwargs):
        self.started.set()
        await asyncio.Event().wait()


@pytest.mark.parametrize("is_async", [False, True])
@pytest.mark.parametrize("how", ENTRY_POINTS)
def test_the_deadline_cuts_the_search_model_short(how, is_async):
    chooser = Hanging(is_async)
    ends = []

    class Hooks(RunHooks):
        def on_llm_end(self, event):
            ends.append(event)

    llm = ScriptedLLM([ScriptedLLM.tool_call("tool_search", {"query": "money owed"}, call_id="s1")])
    agent = Agent(
        "a", llm, tool_registry=registry(chooser), hooks=Hooks(), run_policy=RunPolicy(deadline_seconds=0.3)
    )
    try:
        with pytest.raises(RunLimitExceeded) as info:
            run_by(agent, how)
    finally:
        chooser.released.set()
    assert info.value.kind == "deadline" and chooser.started.is_set()
    assert llm.calls == 1  # the agent's next model call never started
    cut = [e for e in ends if e.call_id == "s1"]
    assert len(cut) == 1 and cut[0].response is None and cut[0].error is not None
    assert info.value.result.usage.llm_calls == 2


def test_a_search_shows_its_model_only_the_tools_the_agent_may_call():
    chooser = ScriptedLLM([answer('["bill_reminder"]')])
    agent = Agent(
        "a",
        search_then_answer(),
        tool_registry=registry(chooser),
        permissions=ToolPermissions(deny=["send_invoice"]),
    )
    result = agent.run("go")
    assert result.tool_calls[0].data == {"discovered": ["bill_reminder"]}
    assert "send_invoice" not in chooser.requests[0].messages[1]["content"]
    assert chooser.calls == 1  # the listing was not redone


@pytest.mark.parametrize("kind", [SyncOnly, AsyncOnly])
def test_outside_a_run_the_registry_calls_the_model_either_way(kind):
    reg = registry(kind(answer('["bill_reminder"]')))
    found = reg.execute_tool("tool_search", {"query": "money owed"})
    assert found.data == {"discovered": ["bill_reminder"]}
    found = asyncio.run(reg.aexecute_tool("tool_search", {"query": "money owed"}))
    assert found.data == {"discovered": ["bill_reminder"]}
    both = Both([answer('["bill_reminder"]'), answer('["send_invoice"]')])
    reg = registry(both)
    assert reg.execute_tool("tool_search", {"query": "x"}).data == {"discovered": ["bill_reminder"]}
    assert asyncio.run(reg.aexecute_tool("tool_search", {"query": "x"})).data == {
        "discovered": ["send_invoice"]
    }
    assert both.used == ["chat", "achat"]


@pytest.mark.parametrize("how", ENTRY_POINTS)
def test_a_cancellation_during_the_search_model_ends_the_run(how):
    # A hook raising RunCancelled on the search model's event stops the run, as on the agent's.
    class Stop(RunHooks):
        def on_llm_start(self, event):
            if event.call_id is not None:
                raise RunCancelled("stopped by the operator")

    chooser = ScriptedLLM([answer('["bill_reminder"]')])
    llm = search_then_answer()
    agent = Agent("a", llm, tool_registry=registry(chooser), hooks=Stop())
    with pytest.raises(RunCancelled, match="stopped by the operator") as info:
        run_by(agent, how)
    assert chooser.calls == 0 and llm.calls == 1
    assert info.value.result.status == "failed"
    # The policy's cancel is asked before the search model is called.
    asked = []

    def cancel():
        asked.append(True)
        return len(asked) > 1

    chooser = ScriptedLLM([answer('["bill_reminder"]')])
    llm = search_then_answer()
    agent = Agent("a", llm, tool_registry=registry(chooser), run_policy=RunPolicy(cancel=cancel))
    with pytest.raises(RunCancelled, match="run was cancelled"):
        run_by(agent, how)
    assert chooser.calls == 0 and llm.calls == 1 and len(asked) == 2


@pytest.mark.parametrize("sync", [True, False])
def test_a_stream_left_before_the_search_model_is_asked_never_asks_it(sync):
    chooser = Both([answer('["bill_reminder"]')])
    agent = Agent("a", search_then_answer(), tool_registry=registry(chooser))
    seen = []

    async def leave_async():
        stream = agent.astream("go")
        async for event in stream:
            seen.append(type(event).__name__)
            if isinstance(event, ToolStart):
                break
        await stream.aclose()

    if sync:
        for event in agent.stream("go"):
            seen.append(type(event).__name__)
            if isinstance(event, ToolStart):
                break
    else:
        asyncio.run(leave_async())
    assert seen == ["RunStart", "LLMStart", "LLMEnd", "ToolStart"]
    assert chooser.used == []


class Embedding(HybridRetriever):
    """A retriever that waits on an embedder, recording the threads its searches ran on."""

    def __init__(self):
        super().__init__(lambda texts: [[float(len(t)), 1.0] for t in texts])
        self.threads = []

    def search(self, *args, **kwargs):
        self.threads.append(threading.current_thread())
        return super().search(*args, **kwargs)


@pytest.mark.parametrize("strategy", ["keyword", "model"])
def test_retrieval_that_waits_on_an_embedder_stays_off_the_event_loop(strategy):
    reg = ToolRegistry()
    reg.register(send_invoice)
    reg.register(bill_reminder)
    retriever = Embedding()
    # A failing model: the model strategy shortlists (shortlist=1) and falls back to keywords.
    options = {"strategy": "model", "llm": ScriptedLLM([RuntimeError("down")]), "shortlist": 1}
    reg.register(ToolSearchTool(ToolRetriever(reg, retriever), **(options if strategy == "model" else {})))

    async def search():
        loop_thread = threading.current_thread()
        found = await reg.aexecute_tool("tool_search", {"query": "invoice email"})
        return loop_thread, found

    loop_thread, found = asyncio.run(search())
    assert found.data["discovered"][0] == "send_invoice"
    assert retriever.threads and loop_thread not in retriever.threads
    assert len(retriever.threads) == (2 if strategy == "model" else 1)


@pytest.mark.parametrize("strategy", ["keyword", "model"])
def test_tool_search_runs_in_place_under_a_run_that_isolates_tools(strategy):
    # A worker process has neither the registry nor the retriever the search reads.
    chooser = ScriptedLLM([answer('["bill_reminder"]')])
    reg = registry(chooser) if strategy == "model" else ToolRegistry()
    if strategy == "keyword":
        reg.register(bill_reminder, deferred=True)
        reg.register(ToolSearchTool(ToolRetriever(reg)))
    llm = ScriptedLLM([ScriptedLLM.tool_call("tool_search", {"query": "payment due reminder"}), "ok"])
    result = Agent("a", llm, tool_registry=reg, run_policy=RunPolicy(isolate=True)).run("go")
    assert result.tool_calls[0].status == "success"
    assert result.tool_calls[0].data == {"discovered": ["bill_reminder"]}


@pytest.mark.parametrize("how", ENTRY_POINTS)
def test_a_real_client_on_127_0_0_1_chooses_under_every_entry_point(how):
    body = {
        "id": "x",
        "model": "small-1",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": '["bill_reminder"]'},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 40, "completion_tokens": 4, "total_tokens": 44},
    }
    with WireServer([json_reply(body)]) as server:
        chooser = LLMClient("small-1", base_url=server.url(), api_key="sk-k", max_retries=0)
        result = run_by(Agent("a", search_then_answer(), tool_registry=registry(chooser)), how)
    assert result.tool_calls[0].data == {"discovered": ["bill_reminder"]}
    assert result.usage.llm_calls == 3 and result.usage.total_tokens == 44
    ((path, _, sent),) = server.requests
    assert path == "/v1/chat/completions" and sent["model"] == "small-1"
    assert "- bill_reminder: Remind a customer that a payment is due." in sent["messages"][1]["content"]


def test_guardrails_and_confirmation_see_only_the_models_arguments():
    class ConfirmedSearch(ToolSearchTool):
        requires_confirmation = True

    reg = ToolRegistry()
    reg.register(bill_reminder, deferred=True)
    chooser = ScriptedLLM([answer('["bill_reminder"]')])
    reg.register(ConfirmedSearch(ToolRetriever(reg), strategy="model", llm=chooser))
    seen = []

    def guard(check):
        seen.append((check.stage, check.arguments))

    def confirm(tool, arguments):
        seen.append(("confirm", arguments))
        return True

    agent = Agent(
        "a",
        search_then_answer(),
        tool_registry=reg,
        confirm=confirm,
        input_guardrails=[guard],
        output_guardrails=[guard],
    )
    result = agent.run("go")
    assert seen == [
        ("input", {"query": "dunning"}),
        ("confirm", {"query": "dunning"}),
        ("output", {"query": "dunning"}),
    ]
    assert result.tool_calls[0].data == {"discovered": ["bill_reminder"]} and chooser.calls == 1
