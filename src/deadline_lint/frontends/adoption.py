"""`deadline-lint edges` (where requests enter, and where each one's budget would come from) and
`deadline-lint adopt` (mint the budget at those edges and thread it to what they reach: the
machinery of `fix --thread-budget --unsafe-fixes`, limited to the edges), each a line in
cli.py's `COMMANDS`.

Exit codes: `edges` 0, or 2 on a usage or configuration error (a missing path, a bad profile);
`adopt` as `fix`."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Dict, List

from deadline_lint.frontends.cli_arguments import add_selection
from deadline_lint.frontends.cli_commands import cmd_fix


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


def cmd_edges(args: argparse.Namespace) -> int:
    import ast

    from deadline_lint.engine.reading import Read, decode, read_file
    from deadline_lint.families.outbound.fixes.adoption.edges import find_edges
    from deadline_lint.run.api import Options, Session

    session = Session(Options(profile=args.profile, exclude=tuple(args.exclude),
                              respect_gitignore=args.respect_gitignore))
    files, _ = session.files(args.paths)
    rows: List[Dict[str, Any]] = []
    for path in files:
        profile = session.checker(path).profile
        read = read_file(path)
        text = decode(read.data, path) if isinstance(read, Read) else None
        if not isinstance(text, str):
            continue  # `check` reports what cannot be read
        try:
            tree = ast.parse(text, filename=path)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for edge in find_edges(tree, path, profile.edge.entry_points):
            rows.append({"path": path, "line": edge.line, "kind": edge.kind, "name": edge.name,
                         "framework": edge.framework, "budget_source": edge.describe(profile.budget_header)})
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
    args.thread_budget = args.unsafe_fixes = args.mint_at_edges = True
    args.stdin_filename = None
    args.extend_safe_fixes = args.extend_unsafe_fixes = []
    args.exit_non_zero_on_fix = args.exit_zero = False
    if "-" in args.paths:
        from deadline_lint.settings.profile import ProfileError

        raise ProfileError("adopt: needs files, not stdin (it follows callers across the project)")
    return cmd_fix(args)
