"""What the prefilter decides, for "a refactor of the prefilter parses the same files":

    PYTHONPATH=<checkout>/src python bench/prefilter_selection.py DIR [DIR ...]

Every rule selected; per `.py` file under the DIRs, the rules the prefilter selects (with the
node types whose visits it masks and whether a body need is still open), hashed in walk
order; the files it lets through are checked, and the walk's body statistics printed. Two
checkouts decide alike when the line matches. Standard library only; not part of the suite."""
import hashlib
import os
import sys

import deadline_lint.families.registry  # noqa: F401
from deadline_lint.engine.checker import Checker
from deadline_lint.engine.rule import registered_rules

codes = [c for c in registered_rules() if not c.startswith("DL0")]
checker = Checker(select=codes)
digest = hashlib.md5()
parsed = 0
files = 0
for root in sys.argv[1:]:
    for dirpath, dirnames, names in os.walk(root):
        dirnames.sort()
        for name in sorted(names):
            if not name.endswith(".py"):
                continue
            path = os.path.join(dirpath, name)
            try:
                text = open(path, encoding="utf-8").read()
            except (UnicodeDecodeError, OSError):
                continue
            if len(text) > 2 * 1024 * 1024:
                continue
            files += 1
            selection, _ = checker._selection_for(text, path)
            row = [
                (checker.rules[s.rule_index].code, sorted(t.__name__ for t in s.masked), s.open_body)
                for s in selection
            ]
            if selection:
                parsed += 1
                checker.check_text(text, path)
            digest.update(repr((os.path.relpath(path, root), row)).encode())
print(f"files {files} parsed {parsed} selection-md5 {digest.hexdigest()} stats {checker.stats}")
