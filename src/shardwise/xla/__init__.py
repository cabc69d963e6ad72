"""shardwise.xla: XLA's forms of a sharding (HloSharding text, tile assignments, replica groups)
and the conversion of whole modules to and from them (``shardwise export-hlo``/``import-hlo``)."""
