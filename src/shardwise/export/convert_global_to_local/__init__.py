"""`sdy-convert-global-to-local` (Shardy ``exp/convert_global_to_local.cc``, jaxlib 0.10.2).

| module        | Shardy                                                                   |
| ------------- | ------------------------------------------------------------------------ |
| `driver`      | `ConvertGlobalToLocalPass` (op order, legality, channel ids)             |
| `state`       | `GlobalToLocalTypeConverter`, `ConversionState`, `getLocalType`          |
| `collectives` | the `AllGather`/`AllSlice`/`AllReduce`/`ReduceScatter`/`AllToAll`/       |
|               | `CollectivePermute` patterns                                             |
| `ops`         | `FuncOpSignature`, `ManualComputation`, `NamedComputation`, `Constant`,  |
|               | `Stablehlo{Iota,Slice,Concatenate,Dot,DotGeneral}` patterns              |
| `calls`,      | beyond the reference (``ConversionOptions.beyond_reference``): calls of  |
| `control_flow`| the callee's local types, while block arguments of the carried values'  |
| `layout`      | local types, the boundary checks                                         |
| `aliases`     | the verifier's ``output_operand_aliases`` check of a custom call         |
| `builder`     | op creation, `getShardIndex`, `getDimensionOffset`,                      |
|               | `emitDynamicSliceForAxes`, `getReplicaGroups`                            |
"""

from shardwise.export.convert_global_to_local.driver import convert_global_to_local

__all__ = ["convert_global_to_local"]
