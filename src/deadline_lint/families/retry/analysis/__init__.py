"""The retry family's analyses: retry policies (library objects and decorators, read into one
shape), hand-written retry loops and polling, the exception filters they retry on, and the
project facts about retry helpers."""
