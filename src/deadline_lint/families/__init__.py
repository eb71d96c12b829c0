"""The rule families, one package each, and `families.registry` that imports them all. A family
imports the engine's rule API, `semantics` and `families.shared`, never another family."""
