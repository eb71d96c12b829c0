"""One run: the API every front end calls (lint_paths / fix_paths), which files it takes, the
configuration per file, and the worker pool."""
