"""Small building blocks with no knowledge of deadlines: frozen records, digests, the collector
pause."""
