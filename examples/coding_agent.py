"""A coding agent on a small project: it greps, reads and edits files through a ``Workspace``,
keeps a task list (``TodoTool``), and works as a sub-agent that a lead agent hands the job to
(``Agent.as_tool``).

The models are scripted (``ScriptedLLM``) so the example runs without a key: the coder plans,
searches for the buggy function, reads the file, tries an edit that matches twice (and is told
so), fixes the bug with a unique edit and ticks its list off. The workspace only sees the project
directory; ``.env`` is refused. The coder's whole run is in the lead's call record.
"""

import tempfile
from pathlib import Path

from agentmaker import Agent, TodoTool, Workspace
from agentmaker.testing import ScriptedLLM

with tempfile.TemporaryDirectory() as tmp:
    project = Path(tmp) / "shop"
    (project / "shop").mkdir(parents=True)
    (project / "shop" / "cart.py").write_text(
        "def total(prices):\n"
        "    return sum(prices)\n"
        "\n"
        "\n"
        "def total_with_tax(prices, rate):\n"
        "    return sum(prices) * rate  # bug: should be (1 + rate)\n"
    )
    (project / "shop" / "__init__.py").write_text("")
    (project / ".env").write_text("STRIPE_KEY=sk_live_xxx\n")

    workspace = Workspace(project)
    plan = ["Find total_with_tax", "Fix the tax formula"]
    llm = ScriptedLLM(
        [
            ScriptedLLM.tool_call(
                "write_todos",
                {
                    "todos": [
                        {"content": plan[0], "status": "in_progress"},
                        {"content": plan[1], "status": "pending"},
                    ]
                },
            ),
            ScriptedLLM.tool_call("grep", {"pattern": r"def total\w*", "output_mode": "content"}),
            ScriptedLLM.tool_calls(
                ("read_file", {"file_path": "shop/cart.py"}),
                ("read_file", {"file_path": ".env"}),
            ),
            ScriptedLLM.tool_call(
                "edit_file",
                {
                    "file_path": "shop/cart.py",
                    "old_string": "return sum(prices)",
                    "new_string": "return sum(prices, 0)",
                },
            ),
            ScriptedLLM.tool_call(
                "edit_file",
                {
                    "file_path": "shop/cart.py",
                    "old_string": "    return sum(prices) * rate  # bug: should be (1 + rate)",
                    "new_string": "    return sum(prices) * (1 + rate)",
                },
            ),
            ScriptedLLM.tool_call(
                "write_todos", {"todos": [{"content": p, "status": "completed"} for p in plan]}
            ),
            "Fixed total_with_tax: it now multiplies by (1 + rate).",
        ]
    )
    coder = Agent("coder", llm, tools=[workspace, TodoTool()])
    lead_llm = ScriptedLLM(
        [
            ScriptedLLM.tool_call("coder", {"input": "total_with_tax in the shop project is wrong; fix it"}),
            "The coder fixed total_with_tax.",
        ]
    )
    lead = Agent(
        "lead", lead_llm, tools=[coder.as_tool(description="A coder with access to the shop project.")]
    )
    result = lead.run("Customers are overcharged; get it fixed")
    coder_run = result.tool_calls[0].data  # the coder's whole run
    for call in coder_run.tool_calls:
        # Read results arrive framed as external content; show the line that says what happened.
        lines = (call.output or "").splitlines()
        starts = ("Error:", "Edited", "shop/", "     1", "Task list")
        detail = next((ln for ln in lines if ln.startswith(starts)), "")
        print(f"{call.name}: {call.status}: {detail}")
    print("todos:", [t["status"] for t in coder_run.todos])
    print("coder:", result.tool_calls[0].output)
    print("lead:", result.output, f"({result.usage.llm_calls} model calls in all)")
    print((project / "shop" / "cart.py").read_text().splitlines()[-1])
