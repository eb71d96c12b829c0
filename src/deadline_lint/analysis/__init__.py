"""Shared semantics computed once per file and asked for by every rule."""
