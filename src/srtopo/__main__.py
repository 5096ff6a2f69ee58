"""``python -m srtopo``: the command line."""
import sys

from srtopo.cli import main

sys.exit(main())
