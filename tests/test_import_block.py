"""The plain import placement writes exactly what LibCST's AddImportsVisitor writes, and
declines (None) every shape it does not reproduce. bench/import_placement.py compares the two
on a whole corpus."""
from __future__ import annotations

import pytest

from deadline_lint.fixes.import_block import add_imports_plainly
from deadline_lint.fixes.loop import add_imports

TAKEN = {
    "after-the-block": "import os\nimport sys\n\nx = 1\n",
    "comment-right-after": "import os\n# c\nx = 1\n",
    "blank-then-comment": "import os\n\n# c\nx = 1\n",
    "docstring-only": '"""Doc."""\nx = 1\n',
    "docstring-comment": '"""Doc."""\n# c\nx = 1\n',
    "docstring-and-block": '"""Doc."""\n\nimport os  # why\nfrom a import b\n\n\ndef f():\n    pass\n',
    "header-no-block": "#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\n\n# b\nx = 1\n",
    "leading-blank-lines": "\n\nx = 1\n",
    "decorated-first": "#!x\n\n@d\ndef f():\n    pass\n",
    "footer-only": "import os\n# c\n",
    "nothing-after": "import os\n",
    "whitespace-line-after": '"""d"""\nimport os\n  \nx = 1\n',
    "continued-import": "import os \\\n  , sys\nx = 1\n",
    "parenthesised-from": "from a import (\n    b,\n    c,\n)\nx = 1\n",
    "crlf": '"""Doc."""\r\nimport os\r\nx = 1\r\n',
    "future-in-block": "from __future__ import annotations\n\nimport os\n\nx = 1\n",
    "already-there": "import time\nfrom time import monotonic\nx = 1\n",
    "there-but-not-in-the-block": "x = 1\nimport time\n",
    "parenthesised-docstring": '("Doc.")\nx = 1\n',
    "concatenated-docstring": '"a" "b"\nx = 1\n',
    "import-in-if-ends-the-block": "import os\nif x:\n    import time\n",
    "os-path-is-not-os": "import os.path\nx = 1\n",
    "time-as-time-is-an-alias": "import time as time\nx = 1\n",
    "semicolon-after-the-block": "import os\nx = 1; y = 2\n",
    "relative-from": "from . import time\nfrom .time import monotonic\nx = 1\n",
}

DECLINED = {
    "merge-into-from": ("from time import sleep\nx = 1\n", ["from time import monotonic"]),
    "star": ("from time import *\nx = 1\n", ["from time import monotonic"]),
    "aliased-from": ("from time import sleep as s\nx = 1\n", ["from time import monotonic"]),
    "alias-wanted": ("x = 1\n", ["import numpy as np"]),
    "future-wanted": ("x = 1\n", ["from __future__ import annotations"]),
    "semicolon-block": ("import os; import sys\nx = 1\n", ["time"]),
    "semicolon-docstring": ('"""d"""; x = 1\n', ["time"]),
    "no-final-newline": ("import os", ["time"]),
    "bom": ("\ufeffimport os\nx = 1\n", ["time"]),
    "form-feed": ("import os\n\x0c\nx = 1\n", ["time"]),
    "strict": ("__strict__ = True\nx = 1\n", ["time"]),
    "empty": ("# only a comment\n", ["time"]),
    "unparsable": ("x = (\n", ["time"]),
}

IMPORT_SETS = (["time"], ["from time import monotonic"], ["asyncio", "time", "from a import z", "from a import y"])


@pytest.mark.parametrize("text", TAKEN.values(), ids=TAKEN.keys())
@pytest.mark.parametrize("imports", IMPORT_SETS, ids=["time", "from-time", "several"])
def test_the_plain_path_writes_what_libcst_writes(text: str, imports) -> None:
    plain = add_imports_plainly(text, imports)
    reference = add_imports(text, imports)
    if plain is None:  # declining is always allowed; these shapes are ones it should take
        assert (text, tuple(imports)) in _declined_on_purpose()
        return
    assert plain == reference


def _declined_on_purpose():
    # `from a import b` in the block and `from a import z` wanted: LibCST merges the names.
    return {(TAKEN[name], tuple(IMPORT_SETS[2])) for name in ("docstring-and-block", "parenthesised-from")}


@pytest.mark.parametrize("text, imports", DECLINED.values(), ids=DECLINED.keys())
def test_shapes_it_does_not_reproduce_are_left_to_libcst(text: str, imports) -> None:
    assert add_imports_plainly(text, imports) is None


def test_the_examples_spelled_out() -> None:
    assert add_imports_plainly("import os\nx = 1\n", ["time"]) == "import os\nimport time\n\nx = 1\n"
    assert add_imports_plainly("import os\n\nx = 1\n", ["from time import monotonic", "time"]) == (
        "import os\nimport time\nfrom time import monotonic\n\nx = 1\n"
    )
    assert add_imports_plainly("import time\nx = 1\n", ["time"]) == "import time\nx = 1\n"
