"""``python -m vcore``: the same command line as the ``vcore`` console script."""

from vcore.cli import main

raise SystemExit(main())
