"""`sdy-reshard-to-collectives` (Shardy ``exp/reshard_to_collectives.cc``).

| module          | Shardy                                                           |
| --------------- | ---------------------------------------------------------------- |
| `conversion`    | `ReshardPattern`, `ReshardToCollectivesPass` (legality, replace)  |
| `inserter`      | `CollectiveInserter::insert`, all-gather, all-to-all steps        |
| `slicing`       | `getSlicingAxesPerDim`, `getAxesToSliceForAllToAll`               |
| `permute`       | `shouldCollectivePermute`, `performCollectivePermute`             |
| `state`         | the inserter's per-dim bookkeeping, `distributeInAxesWithinCapacity` |
| `axis_lists`    | `alignSubAxesByDecomposition` (``exp/utils.cc``), capacity helpers |
"""

from shardwise.export.reshard_to_collectives.conversion import reshard_to_collectives

__all__ = ["reshard_to_collectives"]
