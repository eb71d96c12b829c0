from deadline_lint.cli import run

run()
