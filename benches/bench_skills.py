"""Skills scenario (issue 34): SkillsTool discovering 1,000 skills (read, front matter parsed
and checked, duplicates looked for), beside a floor that only reads the same 1,000 files."""

from __future__ import annotations

import tempfile
from pathlib import Path

from agentmaker import SkillsTool
from harness import median_us, report

GROUP = "skills"
COUNT = 1000


def make_tree(root: Path) -> None:
    for i in range(COUNT):
        folder = root / f"skill-{i:04d}"
        (folder / "scripts").mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: skill-{i:04d}\n"
            f"description: Does task number {i}, reads the input, checks it and writes a report.\n"
            "triggers: [report, check]\nlicense: MIT\n---\n"
            "# Steps\n\n1. Read the input.\n2. Run scripts/run.py.\n3. Write the report.\n" * 3
        )
        (folder / "scripts" / "run.py").write_text("print('ok')\n")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_tree(root)
        files = sorted(root.glob("*/SKILL.md"))

        def read_all() -> None:
            for f in files:
                f.read_bytes()

        floor = median_us(read_all)
        value = median_us(lambda: SkillsTool([root]))
        assert len(SkillsTool([root]).skills) == COUNT
        report(GROUP, f"SkillsTool([...]) discovering {COUNT:,} skills", value, floor_us=floor)
        report(GROUP, "the same, held to its target", value, target_us=20_000.0)
        tool = SkillsTool([root])
        report(GROUP, "system_prompt_section() of 1,000 skills", median_us(tool.system_prompt_section))
        report(
            GROUP,
            "skills load through tool.run",
            median_us(lambda: tool.run({"action": "load", "name": "skill-0500"})),
        )


if __name__ == "__main__":
    main()
