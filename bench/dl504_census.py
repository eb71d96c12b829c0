"""Every call DL504 takes for a durable enqueue in a tree, budget or not: a check of how it
resolves receivers on real code, where request budgets are rare and DL504 itself says little.

    python bench/dl504_census.py TREE [TREE ...] [--all]

Prints one line per enqueue DL504 recognises (path:line library call [waited] [in a task]),
then, per tree, how many calls spell an enqueue method (`.delay(`, `.apply_async(`,
`.enqueue(`, ...) and how many of those it recognised. Files under a `tests` / `test` folder
or named `test_*.py` are left out unless `--all`. Read what it lists: it is an instrument
for judging, not an oracle (bench/results/dl504-judged.md holds one judgement).
"""
from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path
from typing import Iterator, List

import deadline_lint.families.registry  # noqa: F401  (registers the rules)
from deadline_lint.engine.checker import Checker
from deadline_lint.engine.requires import Names, Words, in_body, in_file
from deadline_lint.engine.rule import register
from deadline_lint.families.spawn.durable import Enqueues
from deadline_lint.families.spawn.request_deadline_in_durable_job import (
    RequestDeadlineInDurableJob,
    _function_of,
    enqueue_words,
)

CENSUS = "DL599"
_SPELLED = re.compile(
    r"\.(delay|apply_async|send_task|enqueue|enqueue_call|enqueue_in|enqueue_at|enqueue_job|send_with_options|kiq|schedule)\("
)


@register
class DurableEnqueueCensus(RequestDeadlineInDurableJob):
    """Reports every recognised durable enqueue (no budget needed)."""

    code = CENSUS
    name = "durable-enqueue-census"
    default_enabled = False
    needs = (
        in_file(Words.of(lambda rule: enqueue_words(rule.profile, rule.catalog))),
        in_body(Names.of(lambda rule: enqueue_words(rule.profile, rule.catalog))),
    )

    def visit(self, node, ctx):
        enqueues = ctx.analysis(Enqueues)
        enqueue = enqueues.classify(node, ctx.scope)
        if enqueue is None:
            return
        function = _function_of(ctx.parents)
        notes = []
        if enqueues.waited(node, ctx.parents, function):
            notes.append("waited")
        if function is not None and enqueues.is_task(function):
            notes.append("in-task")
        ctx.report(self, node, " ".join([enqueue.library, enqueue.display, *notes]))


def _is_test(path: Path) -> bool:
    return any(part in ("tests", "test") for part in path.parts) or path.name.startswith("test_")


def _files(tree: Path, everything: bool) -> Iterator[Path]:
    for path in sorted(tree.rglob("*.py")):
        if everything or not _is_test(path.relative_to(tree)):
            yield path


def census(tree: Path, everything: bool) -> List[str]:
    checker = Checker(select=[CENSUS])
    lines, spelled, recognised = [], 0, 0
    for path in _files(tree, everything):
        text = path.read_text(encoding="utf-8", errors="replace")
        spelled += len(_SPELLED.findall(text))
        try:
            ast.parse(text)
        except SyntaxError:
            continue
        for found in checker.check_text(text, str(path)):
            recognised += 1
            lines.append(f"{path.relative_to(tree)}:{found.line} {found.message}")
    lines.append(f"# {tree.name}: {spelled} calls spell an enqueue method, {recognised} recognised")
    return lines


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="+", type=Path)
    parser.add_argument("--all", action="store_true", help="tests too")
    args = parser.parse_args(argv)
    for tree in args.trees:
        print("\n".join(census(tree, args.all)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
