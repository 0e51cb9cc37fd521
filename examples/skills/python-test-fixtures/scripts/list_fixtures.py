#!/usr/bin/env python3
"""List pytest fixtures defined in a project and report the ones no test requests.

Usage: python list_fixtures.py [PROJECT_ROOT]

Reads Python files with the standard library only (ast); it does not import or run them.
A fixture counts as used when any function in a test file or conftest.py names it as a
parameter, or when it is listed in a @pytest.mark.usefixtures(...) call.
"""

import ast
import sys
from pathlib import Path

SKIPPED = {".git", ".venv", "venv", "node_modules", "__pycache__", ".tox"}


def python_files(root: Path):
    for path in sorted(root.rglob("*.py")):
        if not SKIPPED.intersection(path.parts):
            yield path


def is_fixture(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    if isinstance(target, ast.Attribute):
        return target.attr == "fixture"
    return isinstance(target, ast.Name) and target.id == "fixture"


def fixture_name(function: ast.FunctionDef) -> str:
    for decorator in function.decorator_list:
        if isinstance(decorator, ast.Call):
            for keyword in decorator.keywords:
                if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
                    return str(keyword.value.value)
    return function.name


def main() -> int:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    defined: dict[str, list[str]] = {}
    requested: set[str] = set()
    for path in python_files(root):
        is_test_file = path.name.startswith("test_") or path.name.endswith("_test.py")
        if not (is_test_file or path.name == "conftest.py"):
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        except (SyntaxError, UnicodeDecodeError) as error:
            print(f"skipped {path}: {error}", file=sys.stderr)
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if any(is_fixture(d) for d in node.decorator_list):
                    name = fixture_name(node)
                    defined.setdefault(name, []).append(f"{path.relative_to(root)}:{node.lineno}")
                requested.update(argument.arg for argument in node.args.args)
            if isinstance(node, ast.Call):
                function = node.func
                if isinstance(function, ast.Attribute) and function.attr == "usefixtures":
                    requested.update(
                        str(argument.value)
                        for argument in node.args
                        if isinstance(argument, ast.Constant)
                    )
    for name in sorted(defined):
        status = "used  " if name in requested else "UNUSED"
        print(f"{status}  {name:30}  {', '.join(defined[name])}")
    unused = [name for name in defined if name not in requested]
    print(f"{len(defined)} fixtures, {len(unused)} unused")
    return 0


if __name__ == "__main__":
    sys.exit(main())
