from deadline_lint.frontends.cli import run

run()
