"""shardwise.sdy: where shardings live on the IR (Shardy's ``ir/utils.cc`` and op interfaces).

- `shardings`: get/set the sharding of a value or op (`getSharding`, `setSharding`);
- `data_flow`: data-flow ops and their edges (`ShardableDataFlowOpInterface`);
- `funcs`: the one callee lookup, func argument/result shardings, the mesh of a sharding;
- `call_graph`: calls and funcs in MLIR's call-graph order (`walkCalls`, `iterateFuncs`);
- `manual_computation`: manual axes and shardings inside/outside manual computations;
- `sharding_groups`: ``sdy.sharding_group`` ops;
- `sharding_walker`: visit or replace every sharding under an op (`transformShardings`);
- `op_properties`: elementwise ops, side effects (`isOpTriviallyDead`).

Every import and export pass and propagation build on these; nothing here imports a pass.
"""
