"""SkillsTool: discovery errors, list/load/read through an agent, and its system-prompt section."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from agentmaker import Agent, SkillsTool, ToolConfigError
from agentmaker.builtins import SkillsTool as BuiltinSkillsTool
from agentmaker.testing import ScriptedLLM


def write_skill(root: Path, folder: str, text: str | bytes) -> Path:
    d = root / folder
    d.mkdir(parents=True, exist_ok=True)
    (d / "SKILL.md").write_bytes(text.encode() if isinstance(text, str) else text)
    return d


@pytest.fixture
def skills_dir(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    pdf = write_skill(
        root,
        "pdf",
        "---\nname: pdf-forms\ndescription: Fill PDF forms.\ntriggers: [pdf]\n---\n# Filling\nRun scripts/fill.py NAME.\n",
    )
    (pdf / "scripts").mkdir()
    (pdf / "scripts" / "fill.py").write_text("print('filled')\n")
    write_skill(
        root,
        "review",
        "---\nname: code-review\ndescription: Review a diff\n  for bugs.\n---\nRead it twice.\n",
    )
    return root


def test_the_tool_lists_its_skills_and_builds_its_section(skills_dir: Path) -> None:
    tool = SkillsTool([skills_dir])
    assert BuiltinSkillsTool is SkillsTool
    assert tool.name == "skills"
    assert [s["name"] for s in tool.skills] == ["pdf-forms", "code-review"]
    assert tool.skills[0]["triggers"] == ["pdf"]
    assert tool.skills[0]["path"] == skills_dir.resolve() / "pdf" / "SKILL.md"
    section = tool.system_prompt_section()
    assert section.endswith(
        "Available skills:\n- pdf-forms: Fill PDF forms.\n- code-review: Review a diff for bugs."
    )
    assert tool.instructions == section
    out = tool.run({"action": "read", "name": "pdf-forms", "file": "scripts/fill.py"})
    assert (out.status, out.text) == ("success", "print('filled')\n")


def test_a_malformed_tree_raises_one_error_naming_every_file_and_line(tmp_path: Path) -> None:
    root = tmp_path / "bad"
    write_skill(root, "a", "no front matter\n")
    write_skill(root, "b", "---\nname: Bad Name\ndescription: d\n---\n")
    write_skill(root, "c", "---\nname: c\n---\n")
    write_skill(root, "d", "---\nname: d\ndescription: " + "x" * 1025 + "\n---\n")
    write_skill(root, "e", b"---\nname: e\ndescription: \xff\n---\n")
    write_skill(root, "f", "---\nname: twin\ndescription: one\n---\n")
    write_skill(root, "g", "---\nname: twin\ndescription: two\n---\n")
    write_skill(root, "h", "---\nname: h\ndescription: [oops\n---\n")
    write_skill(root, "i", "---\nname: i\ndescription: d\n")
    with pytest.raises(ToolConfigError) as err:
        SkillsTool([root])
    lines = str(err.value).splitlines()
    r = root.resolve()
    assert (
        lines[0]
        == f"{root}/a/SKILL.md:1: missing front matter: the file must start with a line '---', then YAML with name and description, then a line '---'"
    )
    assert (
        lines[1]
        == f"{root}/b/SKILL.md:2: bad name 'Bad Name': use 1 to 64 lowercase letters, digits and hyphens"
    )
    assert lines[2] == f"{root}/c/SKILL.md:1: the front matter has no description"
    assert lines[3] == f"{root}/d/SKILL.md:3: the description has 1025 characters; at most 1024 are allowed"
    assert lines[4] == f"{root}/e/SKILL.md:3: not UTF-8 (invalid byte at column 14)"
    assert lines[5].startswith(f"{root}/h/SKILL.md:4: malformed front matter: ")
    assert lines[6] == f"{root}/i/SKILL.md:1: the front matter opened here is never closed by a line '---'"
    assert lines[7] == f"two skills are named twin: {r}/f/SKILL.md:2 and {r}/g/SKILL.md:2"
    assert len(lines) == 8
    with pytest.raises(ToolConfigError, match="paths must be a list of directories, not one string"):
        SkillsTool(str(root))  # type: ignore[arg-type]
    with pytest.raises(ToolConfigError, match=f"skills path {tmp_path / 'nope'} is not a directory"):
        SkillsTool([tmp_path / "nope"])
    with pytest.raises(ToolConfigError, match="max_description_chars must be a positive integer, got 0"):
        SkillsTool([root], max_description_chars=0)


def script() -> ScriptedLLM:
    return ScriptedLLM(
        [
            ScriptedLLM.tool_call("skills", {"action": "load", "name": "pdf-forms"}),
            ScriptedLLM.tool_call(
                "skills", {"action": "read", "name": "pdf-forms", "file": "../review/SKILL.md"}, call_id="c2"
            ),
            "Done.",
        ]
    )


def check(llm: ScriptedLLM, tool: SkillsTool) -> None:
    system = llm.requests[0].messages[0]
    assert system["role"] == "system"
    assert system["content"] == "Be brief.\n\n" + tool.system_prompt_section()
    loaded = llm.requests[1].messages[-1]
    assert loaded["role"] == "tool"
    assert loaded["content"].startswith("Skill pdf-forms:\n\n# Filling\nRun scripts/fill.py NAME.")
    assert "- scripts/fill.py" in loaded["content"]
    refused = llm.requests[2].messages[-1]["content"]
    assert "'../review/SKILL.md' is out of bounds" in refused


def test_an_agent_adds_the_section_and_the_model_loads_a_skill_run(skills_dir: Path) -> None:
    tool, llm = SkillsTool([skills_dir]), script()
    result = Agent("a", llm, tools=[tool], instructions="Be brief.").run("Fill the form")
    assert result.output == "Done."
    check(llm, tool)


def test_an_agent_adds_the_section_and_the_model_loads_a_skill_arun(skills_dir: Path) -> None:
    tool, llm = SkillsTool([skills_dir]), script()
    result = asyncio.run(Agent("a", llm, tools=[tool], instructions="Be brief.").arun("Fill the form"))
    assert result.output == "Done."
    check(llm, tool)


def test_an_agent_adds_the_section_and_the_model_loads_a_skill_stream(skills_dir: Path) -> None:
    tool, llm = SkillsTool([skills_dir]), script()
    events = list(Agent("a", llm, tools=[tool], instructions="Be brief.").stream("Fill the form"))
    assert type(events[-1]).__name__ == "RunEnd"
    check(llm, tool)


def test_no_skills_no_section(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    tool = SkillsTool([tmp_path / "empty"])
    assert tool.instructions is None
    llm = ScriptedLLM([ScriptedLLM.tool_call("skills", {"action": "list"}), "ok"])
    Agent("a", llm, tools=[tool], instructions="Be brief.").run("hi")
    assert llm.requests[0].messages[0]["content"] == "Be brief."
    assert llm.requests[1].messages[-1]["content"] == "(no skills are available)"
