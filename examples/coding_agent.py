"""A coding agent on a small project: it greps, reads and edits files through a ``Workspace``.

The model is scripted (``ScriptedLLM``) so the example runs without a key: it searches for the
buggy function, reads the file, tries an edit that matches twice (and is told so), then fixes
the bug with a unique edit. The workspace only sees the project directory; ``.env`` is refused.
"""

import tempfile
from pathlib import Path

from agentmaker import Agent, Workspace
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
    llm = ScriptedLLM(
        [
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
            "Fixed total_with_tax: it now multiplies by (1 + rate).",
        ]
    )
    agent = Agent("coder", llm, tools=[workspace])
    result = agent.run("total_with_tax is wrong; fix it")
    for call in result.tool_calls:
        # Read results arrive framed as external content; show the line that says what happened.
        lines = (call.output or "").splitlines()
        detail = next((ln for ln in lines if ln.startswith(("Error:", "Edited", "shop/", "     1"))), "")
        print(f"{call.name}: {call.status}: {detail}")
    print(result.output)
    print((project / "shop" / "cart.py").read_text().splitlines()[-1])
