"""``python -m shardwise``: the same command line as ``shardwise``."""

import sys

from shardwise.cli import console_main

sys.exit(console_main())
