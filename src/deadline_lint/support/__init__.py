"""Small building blocks with no knowledge of deadlines: source text, diagnostics, digests, the collector
pause."""
