"""`deadline-lint edges` (where requests enter, and where each one's budget would come from) and
`deadline-lint adopt` (mint the budget at those edges and thread it to what they reach: the
machinery of `fix --thread-budget --unsafe-fixes`, limited to the edges), each a line in
cli.py's `COMMANDS`.

`adopt --scaffold` writes the budget module of a project that has none (scaffold.py in the
adoption family says what it holds) and prints the profile lines that read it.

Exit codes: `edges` 0, or 2 on a usage or configuration error (a missing path, a bad profile);
`adopt` as `fix`; `adopt --scaffold` 0 written, 1 with `--diff` (it would write), 2 not written
(the file exists, its folder cannot be written, a usage error)."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Dict, List, Tuple

from deadline_lint.frontends.cli_arguments import add_selection
from deadline_lint.frontends.cli_commands import EXIT_ERROR, EXIT_FINDINGS, cmd_fix


def add_edges_arguments(edges: argparse.ArgumentParser) -> None:
    edges.add_argument("paths", nargs="*", default=["."], help="files or folders (default: .)")
    edges.add_argument("--profile", help="adoption profile YAML for every file (default: per file)")
    edges.add_argument("--format", choices=("text", "json"), default="text")
    edges.add_argument("--exclude", action="append", default=[], help="gitignore-style glob of paths to skip")
    edges.add_argument("--no-respect-gitignore", dest="respect_gitignore", action="store_false")


def add_adopt_arguments(adopt: argparse.ArgumentParser) -> None:
    add_selection(adopt)
    adopt.add_argument("--diff", "--dry-run", dest="diff", action="store_true",
                       help="print a unified diff and write nothing (exit 1 if there are changes)")
    adopt.add_argument("--scaffold", action="store_true",
                       help="instead: write one budget module (Budget, ContextVar, the middleware or "
                            "interceptor of the frameworks found) and print the profile lines that read it")
    adopt.add_argument("--scaffold-path", metavar="FILE",
                       help="with --scaffold: where to write it (default: deadline_budget.py next to the edges)")


def cmd_edges(args: argparse.Namespace) -> int:
    from deadline_lint.run.api import Options, Session

    session = Session(Options(profile=args.profile, exclude=tuple(args.exclude),
                              respect_gitignore=args.respect_gitignore))
    files, _ = session.files(args.paths)
    rows: List[Dict[str, Any]] = [
        {"path": path, "line": edge.line, "kind": edge.kind, "name": edge.name, "framework": edge.framework,
         "budget_source": edge.describe(session.checker(path).profile.budget_header)}
        for path, edge in _edges_of(session, files)
    ]
    if args.format == "json":
        json.dump(rows, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for row in rows:
            print(f"{row['path']}:{row['line']}  {row['kind']}  {row['name']}  {row['budget_source']}")
        print(f"{len(rows)} edge{'' if len(rows) == 1 else 's'} in {len(files)} file{'' if len(files) == 1 else 's'}",
              file=sys.stderr)
    return 0


def cmd_adopt(args: argparse.Namespace) -> int:
    if args.scaffold or args.scaffold_path is not None:
        return cmd_scaffold(args)
    args.thread_budget = args.unsafe_fixes = args.mint_at_edges = True
    args.stdin_filename = None
    args.extend_safe_fixes = args.extend_unsafe_fixes = []
    args.exit_non_zero_on_fix = args.exit_zero = False
    if "-" in args.paths:
        from deadline_lint.settings.profile import ProfileError

        raise ProfileError("adopt: needs files, not stdin (it follows callers across the project)")
    return cmd_fix(args)


def cmd_scaffold(args: argparse.Namespace) -> int:
    import difflib
    import os

    from deadline_lint.families.outbound.fixes.adoption import scaffold
    from deadline_lint.fixes.writes import WriteRefused, write_new
    from deadline_lint.run.api import Options, Session
    from deadline_lint.settings.profile import ProfileError

    if not args.scaffold or "-" in args.paths:
        raise ProfileError("adopt: --scaffold-path needs --scaffold" if not args.scaffold
                           else "adopt --scaffold: needs files, not stdin")
    idle = [flag for flag, value in (("--select", args.select), ("--extend-select", args.extend_select),
                                     ("--ignore", args.ignore), ("--jobs", args.jobs),
                                     ("--stdin-filename", args.stdin_filename)) if value]
    if idle:
        raise ProfileError(f"adopt --scaffold: {idle[0]} does nothing here (it checks no rule)")
    session = Session(Options(profile=args.profile, exclude=tuple(args.exclude),
                              respect_gitignore=args.respect_gitignore))
    edges, budgets = _survey(session, session.files(args.paths)[0])
    target = args.scaffold_path or scaffold.default_target(edges, args.paths)
    if os.path.isdir(target):
        target = os.path.join(target, scaffold.MODULE_NAME)
    existing = _existing_budget(session.checker(target).profile, budgets)
    if existing:
        print(f"deadline-lint: {existing}; adopt --scaffold writes a budget module only for a project "
              "with none: nothing written (exit 2)", file=sys.stderr)
        return EXIT_ERROR
    name = scaffold.dotted_module_name(target)
    flavours = scaffold.flavours_for([edge for _, edge in edges])
    text = scaffold.render(flavours, session.checker(target).profile, name)
    found = ", ".join(sorted({edge.framework for _, edge in edges})) or "no edges"
    found += "" if flavours else "; no middleware"
    if os.path.lexists(target):
        print(f"deadline-lint: {target}: already exists; not overwritten (exit 2)", file=sys.stderr)
        return EXIT_ERROR
    if args.diff:
        sys.stdout.writelines(difflib.unified_diff([], text.splitlines(keepends=True), "/dev/null", target))
    else:
        try:
            write_new(target, text)
        except FileExistsError:
            print(f"deadline-lint: {target}: already exists; not overwritten (exit 2)", file=sys.stderr)
            return EXIT_ERROR
        except (OSError, WriteRefused) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            print(f"deadline-lint: {target}: cannot be written ({reason}); nothing written", file=sys.stderr)
            return EXIT_ERROR
    verb = "would write" if args.diff else "wrote"
    install = ", install its middleware," if flavours else ""
    print(f"deadline-lint: {verb} {target} ({found}); review it{install} and add to pyproject.toml:",
          file=sys.stderr)
    # On stdout for `>> pyproject.toml`, unless stdout carries the diff.
    print(scaffold.profile_lines(target), file=sys.stderr if args.diff else sys.stdout, end="")
    return EXIT_FINDINGS if args.diff else 0


def _existing_budget(profile: Any, budgets: List[Tuple[str, int, str]]) -> str:
    """Why the project already has a budget, or "": the profile names an ambient one, or a
    module defines a class the profile's `budget.types` lists."""
    for path, line, name in budgets:
        return (f"{path}:{line}: the project already defines `{name}`, a budget type (`budget.types`); "
                "use it, or take the name out of `budget.types` if it is not a request budget")
    if profile.fix.context_accessor:
        return f"the profile already names an ambient budget (fix.context_accessor = {profile.fix.context_accessor})"
    return ""


def _edges_of(session: Any, files: List[str]) -> List[Any]:
    """(path, edge) for every edge of the files, in order."""
    return _survey(session, files)[0]


def _survey(session: Any, files: List[str]) -> Tuple[List[Any], List[Tuple[str, int, str]]]:
    """(path, edge) for every edge of the files, in order, and (path, line, name) for every
    budget class they define."""
    import ast

    from deadline_lint.engine.reading import Read, decode, read_file
    from deadline_lint.families.outbound.fixes.adoption.edges import find_edges
    from deadline_lint.families.outbound.fixes.adoption.scaffold import budget_class_in

    found = []  # `check` reports what cannot be read or parsed
    budgets = []
    for path in files:
        read = read_file(path)
        text = decode(read.data, path) if isinstance(read, Read) else None
        if not isinstance(text, str):
            continue
        try:
            tree = ast.parse(text, filename=path)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        profile = session.checker(path).profile
        found += [(path, edge) for edge in find_edges(tree, path, profile.edge.entry_points)]
        budget = budget_class_in(tree, profile.budget.types)
        if budget is not None:
            budgets.append((path, budget.lineno, budget.name))
    return found, budgets
