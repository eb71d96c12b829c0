"""A small FastAPI checkout service with deliberate deadline bugs, one per rule that is on by
default, each marked `# Bug:` with a correct near miss beside it (`# Correct:`). It is only
checked, never run: `deadline-lint check examples/` (see the README)."""
