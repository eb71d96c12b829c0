"""The family-neutral semantics layer: a project's modules, what each binds at its top level and
in its classes (a *summary*), and the *facts* families declare about those bindings.

Nothing here knows a rule family. A family declares a `Fact` (analysis/*_facts.py): what one
module says about each of its functions, methods and top-level names, computed from that
module's `ast` alone (never importing or executing it), possibly naming other project symbols
it leans on. `ProjectFacts` composes those per-module answers across modules when a rule asks
(`fact_of(FACT, "pkg.tasks.spawn")`), so an answer depends only on the texts of the modules it
names: a file checked alone gets what it gets in its project.

    modules.py   finding and reading a project's modules (root, search paths, unsaved buffers)
    summary.py   one module's top-level bindings and classes, and names resolved across modules
    facts.py     the Fact protocol, per-module values content-addressed, composition with chains
    receivers.py the project class of a receiver (`self`, `self.app`, a local, a parameter)
    session.py   the run's memos and state, each found by the type that owns it
"""
