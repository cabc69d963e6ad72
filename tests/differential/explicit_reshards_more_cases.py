"""More own inputs for ``sdy-insert-explicit-reshards``: multi-operand ops (concatenate, pad,
sort, gather/scatter, triangular_solve), custom calls, control flow, calls, manual
computations, maximal meshes, unreduced reshards, and modules propagated by the reference.

Notation as in `explicit_reshards_cases`.
"""

from __future__ import annotations

from tests.differential.explicit_reshards_cases import T2, Case, body, func, module, per

CASES: list[Case] = []


def _add(case_id: str, text: str, propagate: bool = False) -> None:
    CASES.append(Case(case_id, text, propagate))


# -- concatenate: the default version turns full when an operand differs from the result ------
for _id, _a, _b, _r in [
    ("same", "x|y", "x|y", "x|y"),
    ("operand-differs", "x|y", "y|x", "x|y"),
    ("concat-dim-sharded", "x|", "x|", "x|"),
    ("result-differs", "|y", "|y", "z|y"),
    ("unsharded-operand", "|", "x|y", "x|y"),
]:
    _add(
        f"concatenate/{_id}",
        module(
            func(
                [(T2, _a), (T2, _b)],
                [
                    f"%0 = stablehlo.concatenate %arg0, %arg1, dim = 0{per(_r)} : "
                    f"({T2}, {T2}) -> tensor<16x16xf32>",
                    "return %0 : tensor<16x16xf32>",
                ],
                [("tensor<16x16xf32>", None)],
            )
        ),
    )

# -- pad (permutation factors), with a scalar padding value --------------------------------------
for _id, _a, _r in [
    ("padded-dim", "x|y", "x|y"),
    ("conflict", "x|y", "y|"),
    ("result", "|", "x|z"),
]:
    _add(
        f"pad/{_id}",
        module(
            func(
                [(T2, _a)],
                [
                    "%cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>",
                    '%0 = "stablehlo.pad"(%arg0, %cst) <{edge_padding_high = array<i64: 8, 0>, '
                    "edge_padding_low = array<i64: 0, 0>, interior_padding = array<i64: 0, 0>}>"
                    f"{per(_r)} : ({T2}, tensor<f32>) -> tensor<16x16xf32>",
                    "return %0 : tensor<16x16xf32>",
                ],
                [("tensor<16x16xf32>", None)],
            )
        ),
    )

# -- sort (the sort dim needs replication; its axes move onto batching dims) ----------------------
for _id, _a, _b, _r0, _r1 in [
    ("sort-dim-sharded", "|y", "|y", "|y", "|y"),
    ("moves-to-batch", "|x", "|x", "|x", "|x"),
    ("batch-conflict", "x|", "y|", "x|", "x|"),
    ("no-room", "x,y,z|", "|x", "x,y,z|", "|"),
]:
    _add(
        f"sort/{_id}",
        module(
            func(
                [(T2, _a), ("tensor<8x16xi32>", _b)],
                [
                    '%0:2 = "stablehlo.sort"(%arg0, %arg1) <{dimension = 1 : i64, is_stable = true}> ({',
                    "^bb0(%p: tensor<f32>, %q: tensor<f32>, %r: tensor<i32>, %s: tensor<i32>):",
                    "  %c = stablehlo.compare GT, %p, %q : (tensor<f32>, tensor<f32>) -> tensor<i1>",
                    "  stablehlo.return %c : tensor<i1>",
                    f"}}){per(_r0, _r1)} : ({T2}, tensor<8x16xi32>) -> ({T2}, tensor<8x16xi32>)",
                    f"return %0#0 : {T2}",
                ],
                [(T2, None)],
            )
        ),
    )

# -- gather / scatter -----------------------------------------------------------------------------
_GATHER = (
    '"stablehlo.gather"(%arg0, %arg1) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], '
    "collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, "
    "indices_are_sorted = false, slice_sizes = array<i64: 1, 16>}>"
)
for _id, _a, _b, _r in [
    ("operand-sharded", "x|y", "|", "|y"),
    ("indices-sharded", "|", "x|", "z|y"),
    ("conflict", "|y", "y|", "x|"),
]:
    _add(
        f"gather/{_id}",
        module(
            func(
                [(T2, _a), ("tensor<4x1xi32>", _b)],
                [
                    f"%0 = {_GATHER}{per(_r)} : ({T2}, tensor<4x1xi32>) -> tensor<4x16xf32>",
                    "return %0 : tensor<4x16xf32>",
                ],
                [("tensor<4x16xf32>", None)],
            )
        ),
    )
_SCATTER = (
    '"stablehlo.scatter"(%arg0, %arg1, %arg2) <{indices_are_sorted = false, '
    "scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], "
    "inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, "
    "unique_indices = false}> ({"
)
for _id, _a, _c, _r in [("updates-sharded", "x|y", "|y", "x|y"), ("conflict", "|y", "x|z", "y|")]:
    _add(
        f"scatter/{_id}",
        module(
            func(
                [(T2, _a), ("tensor<4x1xi32>", None), ("tensor<4x16xf32>", _c)],
                [
                    f"%0 = {_SCATTER}",
                    "^bb0(%p: tensor<f32>, %q: tensor<f32>):",
                    "  %s = stablehlo.add %p, %q : tensor<f32>",
                    "  stablehlo.return %s : tensor<f32>",
                    f"}}){per(_r)} : ({T2}, tensor<4x1xi32>, tensor<4x16xf32>) -> {T2}",
                    f"return %0 : {T2}",
                ],
                [(T2, None)],
            )
        ),
    )

# -- triangular_solve -------------------------------------------------------------------------------
for _id, _a, _b, _r in [("batch", "x||", "x||", "x||"), ("conflict", "x|y|", "|y|z", "z||")]:
    _add(
        f"triangular_solve/{_id}",
        module(
            func(
                [("tensor<4x8x8xf32>", _a), ("tensor<4x8x16xf32>", _b)],
                [
                    '%0 = "stablehlo.triangular_solve"(%arg0, %arg1) <{left_side = true, '
                    "lower = true, transpose_a = #stablehlo<transpose NO_TRANSPOSE>, "
                    f"unit_diagonal = false}}>{per(_r)} : (tensor<4x8x8xf32>, tensor<4x8x16xf32>) "
                    "-> tensor<4x8x16xf32>",
                    "return %0 : tensor<4x8x16xf32>",
                ],
                [("tensor<4x8x16xf32>", None)],
            )
        ),
    )

# -- custom calls: no rule, a custom rule (skipped) and a user's non-custom rule ------------------
for _id, _extra in [
    ("unknown", ""),
    (
        "custom-rule",
        ", sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16}, custom>",
    ),
    ("user-rule", ", sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16}>"),
    (
        "user-rule-nr",
        ", sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=16} need_replication={j}>",
    ),
]:
    _r = per("y|x")[:-1] + _extra + "}"
    _add(
        f"custom_call/{_id}",
        module(
            func(
                [(T2, "x|y")],
                [
                    f"%0 = stablehlo.custom_call @foo(%arg0){_r} : ({T2}) -> {T2}",
                    f"return %0 : {T2}",
                ],
                [(T2, None)],
            )
        ),
    )


# -- while / case / optimization_barrier ------------------------------------------------------------
def _while(init: str, result: str, inner: str, ret: str | None = None) -> str:
    return module(
        func(
            [(T2, init), ("tensor<i32>", None)],
            [
                '%0:2 = "stablehlo.while"(%arg0, %arg1) ({',
                f"^bb0(%a: {T2}, %i: tensor<i32>):",
                "  %c = stablehlo.compare LT, %i, %i : (tensor<i32>, tensor<i32>) -> tensor<i1>",
                "  stablehlo.return %c : tensor<i1>",
                "}, {",
                f"^bb0(%a: {T2}, %i: tensor<i32>):",
                f"  %n = stablehlo.negate %a{per(inner)} : {T2}",
                f"  stablehlo.return %n, %i : {T2}, tensor<i32>",
                f"}}){per(result, '-')} : ({T2}, tensor<i32>) -> ({T2}, tensor<i32>)",
                f"return %0#0 : {T2}",
            ],
            [(T2, ret)],
        )
    )


for _id, _i, _r, _n in [
    ("init-differs", "y|x", "x|y", "x|y"),
    ("body-differs", "x|y", "x|y", "y|"),
    ("all-same", "x|y", "x|y", "x|y"),
    ("unreduced-init", "x|!y", "x|", "x|"),
    ("unreduced-owner", "x|", "x|!y", "x|!y"),
]:
    _add(f"while/{_id}", _while(_i, _r, _n))
_add("while/return-differs", _while("x|y", "x|y", "x|y", ret="|x"))
_add(
    "case/branches",
    module(
        func(
            [(T2, "x|"), (T2, "y|"), ("tensor<i32>", None)],
            [
                '%0 = "stablehlo.case"(%arg2) ({',
                f"  stablehlo.return %arg0 : {T2}",
                "}, {",
                f"  stablehlo.return %arg1 : {T2}",
                f"}}){per('x|z')} : (tensor<i32>) -> {T2}",
                f"return %0 : {T2}",
            ],
            [(T2, None)],
        )
    ),
)
_add(
    "optimization_barrier/operands",
    module(
        func(
            [(T2, "x|"), (T2, "|y!x")],
            [
                f'%0:2 = "stablehlo.optimization_barrier"(%arg0, %arg1){per("|x", "|y")} : '
                f"({T2}, {T2}) -> ({T2}, {T2})",
                f"%1 = stablehlo.add %0#0, %0#1{per('|y')} : {T2}",
                f"return %1 : {T2}",
            ],
            [(T2, None)],
        )
    ),
)

# -- func.call (always the full version) -------------------------------------------------------------
_CALLEE = func(
    [(T2, "x|y")],
    [f"%0 = stablehlo.negate %arg0{per('x|y')} : {T2}", f"return %0 : {T2}"],
    [(T2, "x|y")],
    name="callee",
)
_CALLEE_BARE = func(
    [(T2, None)],
    [f"%0 = stablehlo.negate %arg0 : {T2}", f"return %0 : {T2}"],
    [(T2, None)],
    name="callee",
)
for _id, _a, _callee in [
    ("arg-differs", "y|x", _CALLEE),
    ("arg-same", "x|y", _CALLEE),
    ("unreduced-arg", "x|y!z", _CALLEE),
    ("callee-unsharded", "y|x", _CALLEE_BARE),
    ("nothing-sharded", None, _CALLEE_BARE),
]:
    _add(
        f"call/{_id}",
        module(
            _callee,
            func(
                [(T2, _a)],
                [
                    f"%0 = call @callee(%arg0){per('x|y') if _a else ''} : ({T2}) -> {T2}",
                    f"return %0 : {T2}",
                ],
                [(T2, None)],
            ),
        ),
    )

# -- maximal meshes: ops touching them are left alone -------------------------------------------------
_add(
    "maximal/op-on-maximal",
    module(
        func(
            [(T2, "x|y")],
            [
                f"%0 = stablehlo.negate %arg0{per('-', mesh='maximal')} : {T2}",
                f"%1 = stablehlo.add %0, %arg0{per('y|')} : {T2}",
                f"return %1 : {T2}",
            ],
            [(T2, None)],
        )
    ),
)
_add(
    "maximal/operand-on-maximal",
    module(
        func(
            [(T2, None)],
            [
                f"%0 = stablehlo.abs %arg0{per('-', mesh='maximal')} : {T2}",
                f"%1 = stablehlo.negate %0{per('x|')} : {T2}",
                f"return %1 : {T2}",
            ],
            [(T2, "y|")],
        )
    ),
)

# -- reshards that add unreduced axes -----------------------------------------------------------------
for _id, _a, _target in [
    ("replicated-to-unreduced", "x|y", "x|y!z"),
    ("sharded-to-unreduced", "x|y", "|y!x"),
    ("both", "x|y", "|y!x,z"),
    ("needs-reshard", "x|y", "y|!x"),
    ("sub-axis", "y|", "y:(1)2|!y:(2)2"),
    ("keeps-unreduced", "x|!z", "|!x,z"),
    ("plain-reshard", "x|y", "y|x"),
]:
    _add(
        f"unreduced/{_id}",
        module(
            func(
                [(T2, _a)],
                [
                    f"%0 = sdy.reshard %arg0 {body(_target)} : {T2}",
                    f"%1 = stablehlo.negate %0{per(_target)} : {T2}",
                    f"return %1 : {T2}",
                ],
                [(T2, None)],
            )
        ),
    )

# -- propagated by the reference first ---------------------------------------------------------------
_add(
    "propagated/mlp",
    module(
        func(
            [("tensor<8x32xf32>", "x|"), ("tensor<32x16xf32>", "|y"), ("tensor<16x32xf32>", "y|")],
            [
                "%0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>",
                "%1 = stablehlo.tanh %0 : tensor<8x16xf32>",
                "%2 = stablehlo.dot_general %1, %arg2, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>",
                "return %2 : tensor<8x32xf32>",
            ],
            [("tensor<8x32xf32>", "|x")],
        )
    ),
    propagate=True,
)
_add(
    "propagated/conflicting-args",
    module(
        func(
            [(T2, "x|y"), (T2, "y|x"), (T2, "z|")],
            [
                f"%0 = stablehlo.add %arg0, %arg1 : {T2}",
                f"%1 = stablehlo.multiply %0, %arg2 : {T2}",
                f"return %1 : {T2}",
            ],
            [(T2, "|z")],
        )
    ),
    propagate=True,
)
_add(
    "propagated/reshape-chain",
    module(
        func(
            [("tensor<6x4xf32>", "|y")],
            [
                "%0 = stablehlo.reshape %arg0 : (tensor<6x4xf32>) -> tensor<24xf32>",
                "%1 = stablehlo.reshape %0 : (tensor<24xf32>) -> tensor<4x6xf32>",
                "return %1 : tensor<4x6xf32>",
            ],
            [("tensor<4x6xf32>", "y|")],
        )
    ),
    propagate=True,
)
_add(
    "propagated/reduce-to-unreduced",
    module(
        func(
            [(T2, "x|y")],
            [
                "%cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>",
                "%0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<8x16xf32>, tensor<f32>) -> tensor<8xf32>",
                "return %0 : tensor<8xf32>",
            ],
            [("tensor<8xf32>", "x!y")],
        )
    ),
    propagate=True,
)

# -- device order: operands resharded onto the most common mesh of the sharded tensors ---------------
_T2_OPS = [(T2, None), (T2, None)]
for _id, _m0, _m1, _mr in [
    ("perm-majority", "mesh_perm", "mesh_perm", "mesh"),
    ("iota-majority", "mesh", "mesh_iota", "mesh_perm"),
    ("tie-first-wins", "mesh_perm", "mesh", "mesh"),
]:
    _add(
        f"device_order/{_id}",
        module(
            func(
                _T2_OPS,
                [
                    f"%0 = stablehlo.negate %arg0{per('x|', mesh=_m0)} : {T2}",
                    f"%1 = stablehlo.negate %arg1{per('|y', mesh=_m1)} : {T2}",
                    f"%2 = stablehlo.add %0, %1{per('x|y', mesh=_mr)} : {T2}",
                    f"return %2 : {T2}",
                ],
                [(T2, None)],
            )
        ),
    )

# -- open dims and a while without shardings --------------------------------------------------------
_add(
    "open/dims-stay-open",
    module(
        func(
            [(T2, None), (T2, None)],
            [
                f'%0 = stablehlo.add %arg0, %arg1 {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{{"x", ?}}, {{?}}]>]>}} : {T2}',
                f"%1 = stablehlo.multiply %0, %arg1{per('y|')} : {T2}",
                f"return %1 : {T2}",
            ],
            [(T2, None)],
        )
    ),
)
_add(
    "while/no-owner-sharding",
    _while("x|y", "x|y", "x|y").replace(
        """ {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}, {"y"}]>, <@mesh, []>]>} : (tensor<8x16xf32>, tensor<i32>)""",
        " : (tensor<8x16xf32>, tensor<i32>)",
    ),
)

# -- manual computations: edges between the outer and the local shardings ---------------------------
for _id, _in, _inner, _out in [
    ("inner-differs", "x|", "|y", "x|"),
    ("in-differs", "x|y", "|z", "x|"),
    ("free-axes", "x,y|", "|", "x|z"),
]:
    _add(
        f"manual_computation/{_id}",
        module(
            func(
                [(T2, "x|")],
                [
                    f"%0 = sdy.manual_computation(%arg0) in_shardings=[{body(_in)}] "
                    f'out_shardings=[{body(_out)}] manual_axes={{"x"}} (%a: tensor<4x16xf32>) {{',
                    f"  %n = stablehlo.negate %a{per(_inner)} : tensor<4x16xf32>",
                    "  sdy.return %n : tensor<4x16xf32>",
                    f"}} : ({T2}) -> {T2}",
                    f"return %0 : {T2}",
                ],
                [(T2, "|x")],
            )
        ),
    )

# -- propagation barriers are looked through for operand shardings --------------------------------
for _id, _b, _r in [("barrier-sharded", "x|y", "y|x"), ("barrier-same", "x|y", "x|y")]:
    _add(
        f"barrier/{_id}",
        module(
            func(
                [(T2, _b), (T2, "x|")],
                [
                    f"%0 = sdy.propagation_barrier %arg0 allowed_direction=NONE : {T2}",
                    f"%1 = stablehlo.add %0, %arg1{per(_r)} : {T2}",
                    f"return %1 : {T2}",
                ],
                [(T2, None)],
            )
        ),
    )

# -- a two-result reduce: every result is all-reduced over the sharded reduction axes -------------
for _id, _a, _b, _r in [
    ("sharded-reduction", "x|y", "x|y", "x"),
    ("unreduced", "x|y", "x|y", "x!y"),
]:
    _add(
        f"reduce2/{_id}",
        module(
            func(
                [(T2, _a), (T2, _b)],
                [
                    "%cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>",
                    '%0:2 = "stablehlo.reduce"(%arg0, %arg1, %cst, %cst) <{dimensions = array<i64: 1>}> ({',
                    "^bb0(%p: tensor<f32>, %q: tensor<f32>, %u: tensor<f32>, %v: tensor<f32>):",
                    "  %s = stablehlo.add %p, %u : tensor<f32>",
                    "  %t = stablehlo.add %q, %v : tensor<f32>",
                    "  stablehlo.return %s, %t : tensor<f32>, tensor<f32>",
                    f"}}){per(_r, _r)} : ({T2}, {T2}, tensor<f32>, tensor<f32>) -> "
                    "(tensor<8xf32>, tensor<8xf32>)",
                    "return %0#1 : tensor<8xf32>",
                ],
                [("tensor<8xf32>", None)],
            )
        ),
    )

# -- meshes: different axes (op skipped), an empty mesh, and nested loops ------------------------
_add(
    "mesh/different-axes-skipped",
    module(
        func(
            [(T2, "x|y")],
            [f"%0 = stablehlo.negate %arg0{per('a|', mesh='mesh6')} : {T2}", f"return %0 : {T2}"],
            [(T2, None)],
        )
    ),
)
_add(
    "mesh/empty-mesh-operand",
    "sdy.mesh @empty = <[]>\n"
    + module(
        func(
            [(T2, None), (T2, "y|")],
            [
                f"%0 = stablehlo.negate %arg0{per('|', mesh='empty')} : {T2}",
                f"%1 = stablehlo.add %0, %arg1{per('x|y')} : {T2}",
                f"return %1 : {T2}",
            ],
            [(T2, None)],
        )
    ),
)
_add(
    "while/nested",
    _while("x|y", "x|y", "y|").replace(
        f"  %n = stablehlo.negate %a{per('y|')} : {T2}",
        "\n".join(
            [
                '  %w:2 = "stablehlo.while"(%a, %i) ({',
                f"  ^bb0(%b: {T2}, %j: tensor<i32>):",
                "    %d = stablehlo.compare LT, %j, %j : (tensor<i32>, tensor<i32>) -> tensor<i1>",
                "    stablehlo.return %d : tensor<i1>",
                "  }, {",
                f"  ^bb0(%b: {T2}, %j: tensor<i32>):",
                f"    %m = stablehlo.abs %b{per('|z')} : {T2}",
                f"    stablehlo.return %m, %j : {T2}, tensor<i32>",
                f"  }}){per('z|', '-')} : ({T2}, tensor<i32>) -> ({T2}, tensor<i32>)",
                f"  %n = stablehlo.negate %w#0{per('y|')} : {T2}",
            ]
        ),
    ),
)
_add(
    "call/callee-partly-sharded",
    module(
        func(
            [(T2, "x|"), (T2, None)],
            [f"%0 = stablehlo.add %arg0, %arg1{per('x|')} : {T2}", f"return %0 : {T2}"],
            [(T2, None)],
            name="callee",
        ),
        func(
            [(T2, "|y"), (T2, "y|")],
            [f"%0 = call @callee(%arg0, %arg1) : ({T2}, {T2}) -> {T2}", f"return %0 : {T2}"],
            [(T2, None)],
        ),
    ),
)
