"""Expiry, cancellation and open-breaker errors: what an exception expression admits, what a
handler turns it into, which status that is."""
