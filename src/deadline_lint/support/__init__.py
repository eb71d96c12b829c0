"""Small building blocks with no knowledge of deadlines: source text, diagnostics, the collector
pause."""
