"""The package's import graph, read from its source: subpackages import one way (down the layers
of docs/architecture.md), no module imports itself back through others, and the only imports
inside functions are the three listed there."""

from __future__ import annotations

import ast
from pathlib import Path

import agentmaker

PACKAGE = Path(agentmaker.__file__).resolve().parent

# Lower layers first; a module may import its own layer's package or lower ones.
LAYERS = [
    {"_native", "_coroutines", "errors"},
    {"isolation"},
    {"tools", "llm", "rag", "builtins"},
    {"agent", "testing"},
    {"mcp"},
    {"__init__", "__main__", "_hooks", "events", "run_policy", "confirm", "toolkit"},
]
IN_FUNCTION = {"pydantic", "difflib", "importlib.metadata"}


def layer_of(module: str) -> int:
    top = module.split(".")[1] if "." in module else "__init__"
    return next(i for i, names in enumerate(LAYERS) if top in names)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(tree: ast.AST, modules: set[str]) -> tuple[set[str], list[str]]:
    """The package modules imported when the module runs, and what is imported in functions."""
    found: set[str] = set()
    in_functions: list[str] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue  # read by type checkers only
            if isinstance(child, ast.Import | ast.ImportFrom):
                assert not (isinstance(child, ast.ImportFrom) and child.level), ast.unparse(child)
                names = (
                    [a.name for a in child.names]
                    if isinstance(child, ast.Import)
                    else [f"{child.module}.{a.name}" for a in child.names]
                )
                for name in names:
                    while name and name not in modules:
                        name = name.rpartition(".")[0]
                    if name:
                        found.add(name)
                if in_function:
                    in_functions.append(ast.unparse(child))
            visit(child, in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef))

    visit(tree, False)
    return found, in_functions


def graph() -> tuple[dict[str, set[str]], dict[str, list[str]]]:
    paths = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    modules = {*paths, "agentmaker._native"}
    edges: dict[str, set[str]] = {}
    in_functions: dict[str, list[str]] = {}
    for name, path in paths.items():
        found, inside = imports(ast.parse(path.read_text(encoding="utf-8")), modules)
        edges[name] = found - {name, "agentmaker"}
        if inside:
            in_functions[name] = inside
    return edges, in_functions


def test_subpackages_import_one_way_down_the_layers():
    edges, _ = graph()
    upward = sorted(
        f"{a} -> {b}" for a, targets in edges.items() for b in targets if layer_of(b) > layer_of(a)
    )
    assert upward == []


def test_no_module_imports_itself_back():
    edges, _ = graph()
    loops = []
    for start in edges:
        seen, stack = set(), list(edges[start])
        while stack:
            module = stack.pop()
            if module == start:
                loops.append(start)
                break
            if module not in seen:
                seen.add(module)
                stack.extend(edges.get(module, ()))
    assert loops == []


def test_the_only_imports_inside_functions_are_the_listed_ones():
    _, in_functions = graph()
    imported = {line.split()[1] for lines in in_functions.values() for line in lines}
    assert imported <= IN_FUNCTION, in_functions
    assert not any(name.startswith("agentmaker") for name in imported)
