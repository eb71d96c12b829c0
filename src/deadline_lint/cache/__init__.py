"""The on-disk store: each file's findings and what they were computed from, checked before they
are trusted."""
