"""A client that reaches a function through a parameter, as every caller in the project passes
it (issue 32): `def fetch(session, url): session.get(url)` with every call of `fetch` passing
`requests.Session()`, or `self.session = session` in `__init__` with every construction of the
class passing one.

Read from the project's call-site index, which keeps what each call passes as a small text
(`semantics/arguments`), so the callers' modules are not parsed again. The answer is a client
only when the function's every caller is known and resolved to it (a module-level function,
a method of a module-level class, or `__init__` of a class no project class derives from),
none passes `*args`/`**kwargs` or leaves the parameter to its default, and every one passes a
client of the same class built right there without a timeout. One caller passing a client with
a timeout, anything else, or nothing the index can read makes it unknown: the caller's
choice is respected, and the rules stay quiet.
"""
from __future__ import annotations

import ast
import os
from typing import FrozenSet, List, Optional, Tuple

from deadline_lint.catalog import Catalog
from deadline_lint.families.outbound.analysis.outbound_calls import mention_word
from deadline_lint.semantics.arguments import parameter_place, passed_at, read_back
from deadline_lint.semantics.callers import Callers, is_test_path
from deadline_lint.semantics.local.scopes import CLASS as CLASS_SCOPE
from deadline_lint.semantics.local.scopes import MODULE, Binding
from deadline_lint.semantics.summary import CLASS, FUNCTION, Names, Symbol

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


class Passed:
    """Every caller passes a client of class `qualname` built without a timeout."""

    def __init__(
        self, qualname: str, called: str, where: Tuple[str, ...], shown: str, who: str = "every caller passes"
    ) -> None:
        self.qualname = qualname
        self.who = who  # how a message names where it comes from
        self.called = called  # what the callers call to build it (the class or a factory)
        self.where = where  # each caller's `path:line`
        self.shown = shown  # the first caller's constructor, as its index spells it


def passed_client(binding: Binding, names: Names, own: object, catalog: Catalog) -> Optional[Passed]:
    """The client every project caller passes the parameter `binding` binds, or None."""
    scope = binding.scope
    node = scope.node
    owner = scope.parent
    parameter = binding.value
    if not isinstance(node, _FUNCTIONS) or owner is None or not isinstance(parameter, ast.arg):
        return None
    if is_test_path(getattr(own, "path", "") or ""):
        return None  # the index leaves test modules out: their defs' callers (or pytest) are not in it
    name = str(node.name)
    if owner.kind == MODULE:
        path: Tuple[str, ...] = (name,)
        method = False
    elif owner.kind == CLASS_SCOPE and owner.parent is not None and owner.parent.kind == MODULE:
        path = (str(getattr(owner.node, "name", "")), name)
        method = True
    else:
        return None
    place = parameter_place(node, parameter.arg, method)
    if place is None or _has_default(node, parameter):
        return None  # (a caller may leave a defaulted parameter out: `session or Session()` is typed where it is)
    callers = Callers(names)
    words = catalog.derived(_client_words)
    if name == "__init__":
        found = callers.constructions(Symbol(own, path[:1], CLASS), words.spelled)  # type: ignore[arg-type]
    elif name.startswith("__"):
        return None
    else:
        found = callers.of(Symbol(own, path, FUNCTION), words.spelled)  # type: ignore[arg-type]
    project = names.modules
    if not found or project is None:
        return None
    passed: Optional[Passed] = None
    where: List[Tuple[str, int]] = []
    for caller in found:
        site = caller.site
        if not caller.certain or not site.called or (method and name != "__init__" and site.receiver.startswith("q:")):
            return None
        text = passed_at(site.arguments, place)
        built = _built_without_timeout(text, catalog) if text is not None else None
        if built is None:
            return None
        qualname, called = built
        if passed is not None and passed.qualname != qualname:
            return None
        shown = caller.module.path
        where.append((os.path.relpath(shown, project.root).replace(os.sep, "/") if shown else "?", site.line))
        if passed is None:
            passed = Passed(qualname, called, (), str(text))
    if passed is None:
        return None
    passed.where = tuple(f"{path}:{line}" for path, line in sorted(set(where)))
    return passed


class _ClientWords:
    """The words a module building a listed client spells (its library's name, or a standard
    library class's own): a module holding a caller that passes one spells one of them."""

    def __init__(self, words: FrozenSet[str]) -> None:
        self.words = words

    def spelled(self, text: str) -> bool:
        return any(word in text for word in self.words)


def _client_words(catalog: Catalog) -> _ClientWords:
    words = {mention_word(client) for client in catalog.classes}
    words.update(mention_word(factory) for factory in catalog.factories)
    return _ClientWords(frozenset(words))


def _has_default(node: ast.AST, parameter: ast.arg) -> bool:
    args = node.args  # type: ignore[attr-defined]
    positional = [*args.posonlyargs, *args.args]
    if parameter in positional:
        return positional.index(parameter) >= len(positional) - len(args.defaults)
    if parameter in args.kwonlyargs:
        return args.kw_defaults[args.kwonlyargs.index(parameter)] is not None
    return False


def _built_without_timeout(text: str, catalog: Catalog) -> Optional[Tuple[str, str]]:
    """(client class, what was called) of a client the text builds with no timeout."""
    expr = read_back(text)
    if not isinstance(expr, ast.Call):
        return None
    called = catalog.canonical(ast.unparse(expr.func))
    client = catalog.constructed_class(called)
    if client is None:
        return None
    refused = {client.constructor_keyword, *client.configured_by}
    if any(k.arg is None or k.arg in refused for k in expr.keywords):
        return None  # a timeout, a configured connection, or keywords that cannot be read
    position = client.constructor_position if called == client.qualname else None
    if any(isinstance(a, ast.Starred) for a in expr.args) or (position is not None and len(expr.args) > position):
        return None
    return client.qualname, called
