"""The rule families, one package each; `deadline_lint.registry` imports them all."""
