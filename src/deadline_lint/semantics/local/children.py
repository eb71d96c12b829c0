"""A node's children, as `ast.iter_child_nodes` gives them (same nodes, same order), without
its two generator layers: the walks of function bodies that facts and analyses make are
most of their cost (measured: bench/results/)."""
from __future__ import annotations

import ast
from collections import deque
from typing import Iterator, List

_AST = ast.AST


def node_types() -> List[type]:
    """Every node type the interpreter defines (`ast.AST` and its subclasses, at any depth),
    for tables built once at import."""
    found: List[type] = []
    pending: List[type] = [ast.AST]
    while pending:
        each = pending.pop()
        found.append(each)
        pending.extend(each.__subclasses__())
    return found


def child_nodes(node: ast.AST) -> Iterator[ast.AST]:
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, _AST):
            yield value
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, _AST):
                    yield item


def push_children(stack: List[ast.AST], node: ast.AST) -> None:
    """`stack.extend(ast.iter_child_nodes(node))`."""
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, _AST):
            stack.append(value)
        elif isinstance(value, list):
            stack.extend(item for item in value if isinstance(item, _AST))


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """`ast.walk(node)`: the same nodes in the same (breadth-first) order, children read
    without `iter_child_nodes`' generators."""
    todo = deque([node])
    popleft, append = todo.popleft, todo.append
    while todo:
        node = popleft()
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, _AST):
                append(value)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, _AST):
                        append(item)
        yield node
