"""Shardy's export passes (``transforms/export/``) and the post-propagation steps of its
propagation pipeline, one module per pass or per small family of passes; each pass is declared
in the catalogue (`shardwise.passes`) where it is implemented."""
