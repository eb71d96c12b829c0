"""The two kinds of def, as one type: what a rule visiting both (or an analysis asked about
either) is annotated with."""
from __future__ import annotations

import ast
from typing import Union

Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
