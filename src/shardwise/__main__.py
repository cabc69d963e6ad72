"""``python -m shardwise``: the same command line as ``shardwise``."""

import sys

from shardwise.cli import main

sys.exit(main())
