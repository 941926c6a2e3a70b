"""python -m vcore_kube: the vcore-scheduler command."""

import sys

from vcore_kube.cli import main

sys.exit(main())
