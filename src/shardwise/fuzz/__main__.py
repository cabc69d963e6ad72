"""``python -m shardwise.fuzz`` = ``shardwise fuzz``."""

import sys

from shardwise.fuzz.cli import main

sys.exit(main())
