import sys

from deadline_lint.cli import main

sys.exit(main())
