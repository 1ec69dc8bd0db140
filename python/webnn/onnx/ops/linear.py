"""MatMul and Gemm."""

from .._registry import attributes, handles, reshape


# ---------------------------------------------------------------- matrix products
@handles("MatMul")
def matmul(cv, node, opset):
    a, b = cv.operand(node.input[0]), cv.operand(node.input[1])
    a_rank, b_rank = len(a.shape), len(b.shape)
    if a_rank == 1:
        a = reshape(cv, a, [1, a.shape[0]])
    if b_rank == 1:
        b = reshape(cv, b, [b.shape[0], 1])
    y = cv.op("matmul", a, b)
    if a_rank == 1 or b_rank == 1:
        shape = list(y.shape)
        if b_rank == 1:
            shape.pop(-1)
        if a_rank == 1:
            shape.pop(-1 if b_rank == 1 else -2)
        y = reshape(cv, y, shape)
    return y


@handles("Gemm")
def gemm(cv, node, opset):
    attrs = attributes(node)
    a = cv.operand(node.input[0])
    options = {"alpha": attrs.get("alpha", 1.0), "beta": attrs.get("beta", 1.0),
               "aTranspose": bool(attrs.get("transA", 0)), "bTranspose": bool(attrs.get("transB", 0))}
    if cv.has(node, 2):
        options["c"] = cv.operand(node.input[2], a.data_type)
    return cv.op("gemm", a, cv.operand(node.input[1], a.data_type), **options)
