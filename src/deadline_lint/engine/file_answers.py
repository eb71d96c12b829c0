"""One file's answers to the prefilter's needs (`requires.Need`), each leaf asked at most once
per file: the checker asks them before it parses the file for a rule or walks a body."""
from __future__ import annotations

import re
from bisect import bisect_left
from typing import Callable, Dict, FrozenSet, List, Optional

from deadline_lint.engine.requires import AllOf, Aliases, AnyOf, Names, Need, Project, Text, Words


class FileAnswers:
    """One file's answers, each leaf asked at most once: `holds(need)` at file level, and
    `in_span(need, start, end)` for a body (words found between two character offsets; a
    `Text` or `Project` leaf cannot tell there and passes)."""

    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.path = path
        self._words: Dict[str, bool] = {}
        self._tests: Dict[int, bool] = {}
        self._positions: Dict[object, List[int]] = {}
        self._alias_names: Optional[FrozenSet[str]] = None

    def word(self, word: str) -> bool:
        found = self._words.get(word)
        if found is None:
            found = self._words[word] = word in self.text
        return found

    def holds(self, need: Optional[Need]) -> bool:
        if need is None or isinstance(need, Aliases):
            return True
        if isinstance(need, Names):
            return bool(self._identifier_positions(need.words))
        if isinstance(need, Words):
            return any(self.word(w) for w in need.words)
        if isinstance(need, AllOf):
            return all(self.holds(p) for p in need.parts)
        if isinstance(need, AnyOf):
            return any(self.holds(p) for p in need.parts)
        if isinstance(need, Text):
            text_test = need.test
            assert text_test is not None  # bound: `Text.bind` sets it
            return self._asked(text_test, lambda: text_test(self.text))
        if isinstance(need, Project):
            if need.test is None:
                return False
            path_test = need.test
            return self._asked(path_test, lambda: path_test(self.text, self.path))
        raise TypeError(f"not a need: {need!r}")

    def _asked(self, test: object, answer: Callable[[], bool]) -> bool:
        found = self._tests.get(id(test))
        if found is None:
            found = self._tests[id(test)] = bool(answer())
        return found

    def in_span(self, need: Optional[Need], start: int, end: int) -> bool:
        if need is None or isinstance(need, (Text, Project)):
            return True
        if isinstance(need, Names):
            return _between(self._identifier_positions(need.words), start, end)
        if isinstance(need, Aliases):
            return _between(self._identifier_positions(self._aliases()), start, end)
        if isinstance(need, Words):
            return any(self._word_between(w, start, end) for w in need.words)
        if isinstance(need, AllOf):
            return all(self.in_span(p, start, end) for p in need.parts)
        if isinstance(need, AnyOf):
            return any(self.in_span(p, start, end) for p in need.parts)
        raise TypeError(f"not a need: {need!r}")

    def _word_between(self, word: str, start: int, end: int) -> bool:
        if not self.word(word):
            return False
        positions = self._positions.get(word)
        if positions is None:
            positions = self._positions[word] = _occurrences(self.text, word)
        index = bisect_left(positions, start)
        return index < len(positions) and positions[index] + len(word) <= end


    def _identifier_positions(self, names: FrozenSet[str]) -> List[int]:
        """Where any of `names` stands as a whole identifier, in order (one regex pass)."""
        positions = self._positions.get(names)
        if positions is None:
            present = sorted(n for n in names if self.word(n))
            if not present:
                positions = []
            else:
                pattern = re.compile(r"\b(?:%s)\b" % "|".join(map(re.escape, present)))
                positions = [match.start() for match in pattern.finditer(self.text)]
            self._positions[names] = positions
        return positions

    def _aliases(self) -> FrozenSet[str]:
        if self._alias_names is None:
            self._alias_names = frozenset(_AS_NAME.findall(self.text))
        return self._alias_names


_AS_NAME = re.compile(r"\bas\s+(\w+)")


def _between(positions: List[int], start: int, end: int) -> bool:
    index = bisect_left(positions, start)
    return index < len(positions) and positions[index] < end


def _occurrences(text: str, word: str) -> List[int]:
    found = []
    at = text.find(word)
    while at >= 0:
        found.append(at)
        at = text.find(word, at + 1)
    return found
