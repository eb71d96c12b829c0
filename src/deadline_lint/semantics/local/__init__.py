"""Family-neutral questions about one file: scopes and bindings, what a name resolves to, imports,
expressions, control flow."""
