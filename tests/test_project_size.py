"""A file's findings do not depend on how many modules its project has (issue 35, item 6):
who calls a retried def is looked up in every module, however many there are."""
from __future__ import annotations

import json
from pathlib import Path

from deadline_lint.frontends.cli import main
from deadline_lint.run import api
from deadline_lint.semantics.callers import forget_callers
from deadline_lint.semantics.modules import forget_projects

RETRIED = (
    "import backoff\n\nclass Db:\n    @backoff.on_exception(backoff.expo, Exception, max_tries=3)\n"
    "    async def connect(self):\n        return self\n"
)
START_UP = "from pkg.db import Db\n\nasync def lifespan(app):\n    await Db().connect()\n"
IN_A_REQUEST = "from pkg.db import Db\n\nasync def route(request):\n    return await Db().connect()\n"


def _project(root: Path, generated: int, caller: str) -> Path:
    pkg = root / "pkg"
    pkg.mkdir(parents=True)
    (root / "pyproject.toml").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "db.py").write_text(RETRIED)
    (pkg / "app.py").write_text(caller)
    if generated:
        many = pkg / "generated"
        many.mkdir()
        (many / "__init__.py").write_text("")
        for n in range(generated):
            (many / f"m{n:05}.py").write_text(f"VALUE = {n}\n")
    return root / "pkg" / "db.py"


def _codes(capsys, path: Path) -> list:
    forget_projects()
    forget_callers()
    api.reset()
    main(["check", "--no-cache", "--format", "json", str(path)])
    return [(d["line"], d["code"]) for d in json.loads(capsys.readouterr().out)]


def test_a_project_past_five_thousand_modules_gets_the_same_findings(tmp_path, capsys) -> None:
    for caller in (START_UP, IN_A_REQUEST):
        small = _project(tmp_path / f"small{len(caller)}", 0, caller)
        large = _project(tmp_path / f"large{len(caller)}", 5_100, caller)
        assert _codes(capsys, small) == _codes(capsys, large)
    # the quiet case is quiet because the only caller is start-up code, not by accident
    assert _codes(capsys, tmp_path / f"large{len(START_UP)}" / "pkg" / "db.py") == []
    assert _codes(capsys, tmp_path / f"large{len(IN_A_REQUEST)}" / "pkg" / "db.py") == [(4, "DL302")]
