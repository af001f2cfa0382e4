"""Tool-RAG: offer the model only the tools that matter, and let it search for more mid-run.

A registry of a dozen tools, a ToolRetriever that picks 2 of them for the request (plus
tool_search, always), and a scripted model that finds out it also needs e-mail: it calls
tool_search, and the discovered tool is offered for the rest of the run.
"""

from agentmaker import (
    Agent,
    FunctionTool,
    HybridRetriever,
    ToolRegistry,
    ToolRetriever,
    ToolSearchTool,
    tool,
)
from agentmaker.testing import ScriptedLLM


@tool
def create_event(title: str, day: str, attendee: str) -> str:
    """Add an event to the calendar on a given day with one attendee."""
    return f"event '{title}' on {day} with {attendee} created"


@tool
def send_email(to: str, subject: str, body: str) -> str:
    """Send an email message to a recipient."""
    return f"email to {to} sent"


def simple(name: str, doc: str) -> FunctionTool[[str], str]:
    def f(query: str) -> str:
        return f"{name}: {query}"

    f.__name__, f.__doc__ = name, doc
    return tool(f)


registry = ToolRegistry()
registry.register_all(
    [
        create_event,
        send_email,
        simple("get_weather", "Get the weather forecast for a city."),
        simple("convert_currency", "Convert an amount of money between currencies."),
        simple("stock_price", "Look up the latest stock price of a company."),
        simple("translate", "Translate text into another language."),
        simple("search_flights", "Find flights between two airports on a date."),
        simple("book_hotel", "Book a hotel room in a city for some nights."),
        simple("play_music", "Play a song or playlist."),
        simple("set_timer", "Start a countdown timer."),
        simple("news_headlines", "Fetch today's news headlines."),
        simple("unit_convert", "Convert between units of length, weight or temperature."),
    ]
)

tool_retriever = ToolRetriever(registry, HybridRetriever(), top_k=2, always_include=("tool_search",))
registry.register(ToolSearchTool(tool_retriever, top_k=1))
tool_retriever.index()

request = "Put a meeting with Ana on the calendar for Friday"
print("retrieved:", tool_retriever.retrieve(request))

llm = ScriptedLLM(
    [
        ScriptedLLM.tool_call("create_event", {"title": "Sync", "day": "Friday", "attendee": "Ana"}),
        ScriptedLLM.tool_call("tool_search", {"query": "send an email"}, call_id="call_2"),
        ScriptedLLM.tool_call(
            "send_email",
            {"to": "ana@example.org", "subject": "Sync", "body": "See you Friday"},
            call_id="call_3",
        ),
        "Meeting booked for Friday and Ana has the invitation.",
    ]
)
agent = Agent("assistant", llm, tool_registry=registry, tool_retriever=tool_retriever)
result = agent.run(request)
for i, req in enumerate(llm.requests, 1):
    print(f"turn {i} offered:", ", ".join(req.tool_names))
print("tool_search discovered:", result.tool_calls[1].data["discovered"])
print(result.final_output)
