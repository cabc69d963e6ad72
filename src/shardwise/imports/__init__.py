"""Shardy's import passes (``transforms/import/``) and MLIR's ``symbol-dce``, over our IR; each
pass is declared in the catalogue (`shardwise.passes`) where it is implemented."""
