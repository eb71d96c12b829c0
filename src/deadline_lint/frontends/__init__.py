"""The front ends: the CLI, its output formats, the flake8 and pylint plugins, the LibCST codemod
and the editor server. They translate options in and diagnostics out, and nothing else."""
