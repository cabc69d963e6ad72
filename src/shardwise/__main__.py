"""``python -m shardwise``: the same command line as ``shardwise``."""

import gc
import sys

# No cyclic GC while the command line's modules load: ~15 young and 2 middle-generation
# collections re-scanning the functions and classes the imports just made and keep (~2.5 ms
# of a command's start-up); then those objects are frozen out of later collections too.
gc.disable()
from shardwise.cli import console_main  # noqa: E402

gc.freeze()
gc.enable()
sys.exit(console_main())
