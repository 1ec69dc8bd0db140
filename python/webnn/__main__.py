"""``python -m webnn``: the ``webnn`` command line."""
import sys

from .cli import main

sys.exit(main())
