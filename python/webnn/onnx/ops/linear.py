"""MatMul, Gemm and Einsum."""
import numpy as np

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
    return drop_vector_dims(cv, cv.op("matmul", a, b), a_rank, b_rank)


def drop_vector_dims(cv, y, a_rank, b_rank):
    """A matmul of a 1-D operand (made a row or column for WebNN) loses that dimension, as in NumPy."""
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


# ---------------------------------------------------------------- Einsum
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _einsum_terms(cv, equation, ranks):
    """([labels per operand], output labels) of an Einsum equation, its ellipses expanded into
    labels of their own ("...0", "...1", ...; broadcast from the right, as in NumPy)."""
    text = equation.replace(" ", "")
    left, arrow, right = text.partition("->")
    terms = left.split(",")
    if len(terms) != len(ranks):
        raise TypeError(f"{cv.where()}: the equation '{equation}' has {len(terms)} operand terms, "
                        f"but the node has {len(ranks)} inputs")

    def split(term):
        before, dots, after = term.partition("...")
        if any(c not in _LETTERS for c in before + after):
            raise TypeError(f"{cv.where()}: '{term}' in the equation '{equation}' is not a term of letters "
                            "with at most one '...'")
        return list(before), bool(dots), list(after)

    parsed = [split(term) for term in terms]
    ellipsis_rank = 0
    for term, (before, dots, after), rank in zip(terms, parsed, ranks):
        count = rank - len(before) - len(after)
        if count < 0 or (count and not dots):
            raise TypeError(f"{cv.where()}: the term '{term}' of '{equation}' does not fit an operand of rank {rank}")
        ellipsis_rank = max(ellipsis_rank, count if dots else 0)
    ellipsis = [f"...{i}" for i in range(ellipsis_rank)]
    labels = [before + ellipsis[ellipsis_rank - (rank - len(before) - len(after)):] + after if dots else before
              for (before, dots, after), rank in zip(parsed, ranks)]
    letters = [label for term in labels for label in term if not label.startswith("...")]
    if arrow:
        before, dots, after = split(right)
        output = before + (ellipsis if dots else []) + after
        if len(set(output)) != len(output):
            raise TypeError(f"{cv.where()}: the output term of '{equation}' repeats a label")
        missing = [label for label in output if label not in letters and label not in ellipsis]
        if missing:
            raise TypeError(f"{cv.where()}: the output of '{equation}' names labels no operand has: {missing}")
    else:  # implicit: the broadcast dims, then the letters used once, in alphabetical order
        output = ellipsis + sorted(label for label in set(letters) if letters.count(label) == 1)
    return labels, output


def _check_sizes(cv, equation, operands, labels):
    """A label's sizes must agree across operands, up to broadcasting ones."""
    sizes = {}
    for operand, term in zip(operands, labels):
        for label, size in zip(term, operand.shape):
            size = int(size)
            known = sizes.get(label, 1)
            if size != known and 1 not in (size, known):
                raise TypeError(f"{cv.where()}: label '{label}' of '{equation}' has sizes {known} and {size}")
            sizes[label] = max(size, known)


def _permute(cv, x, labels, order):
    if labels == order:
        return x
    return cv.op("transpose", x, permutation=[labels.index(label) for label in order])


def _sum_labels(cv, x, labels, drop):
    """x summed over the labels in ``drop``: (operand, remaining labels)."""
    axes = [i for i, label in enumerate(labels) if label in drop]
    if not axes:
        return x, labels
    kept = [label for label in labels if label not in drop]
    if all(int(x.shape[i]) == 1 for i in axes):  # a sum over ones is a reshape
        return reshape(cv, x, [d for i, d in enumerate(x.shape) if i not in axes]), kept
    return cv.op("reduceSum", x, axes=axes, keepDimensions=False), kept


def _diagonal(cv, x, labels):
    """x with each label repeated within its term reduced to the diagonal (x·I summed over the
    second occurrence): (operand, labels each once)."""
    labels = list(labels)
    while len(set(labels)) != len(labels):
        first = next(i for i, label in enumerate(labels) if labels.count(label) > 1)
        second = labels.index(labels[first], first + 1)
        size = int(x.shape[first])
        if int(x.shape[second]) != size:
            raise TypeError(f"{cv.where()}: the repeated label '{labels[first]}' has sizes {size} and "
                            f"{int(x.shape[second])}")
        mask_shape = [1] * len(labels)
        mask_shape[first] = mask_shape[second] = size
        mask = np.eye(size, dtype=np.dtype(x.data_type)).reshape(mask_shape)
        x = cv.op("reduceSum", cv.op("mul", x, cv.operand(mask)), axes=[second], keepDimensions=False)
        labels.pop(second)
    return x, labels


def _contract(cv, x, x_labels, y, y_labels, keep):
    """The product of two operands summed over the labels they share that ``keep`` does not hold:
    (operand, labels). Each operand is permuted to [batch, free, summed] and reshaped to 3 groups,
    then one matmul (float types with a contraction) or a broadcast mul and reduceSum."""
    x_size = dict(zip(x_labels, (int(d) for d in x.shape)))
    y_size = dict(zip(y_labels, (int(d) for d in y.shape)))
    shared = [label for label in x_labels if label in y_labels]
    # A summed label that one side broadcasts (size 1) is summed on each side alone.
    lone = {label for label in shared if label not in keep and x_size[label] != y_size[label]}
    if lone:
        x, x_labels = _sum_labels(cv, x, x_labels, lone)
        y, y_labels = _sum_labels(cv, y, y_labels, lone)
        shared = [label for label in shared if label not in lone]
    batch = [label for label in shared if label in keep]
    summed = [label for label in shared if label not in keep]
    x_free = [label for label in x_labels if label not in y_labels]
    y_free = [label for label in y_labels if label not in x_labels]
    x = _permute(cv, x, x_labels, batch + x_free + summed)
    matmul = bool(summed) and x.data_type in ("float32", "float16")
    y = _permute(cv, y, y_labels, batch + summed + y_free if matmul else batch + y_free + summed)
    x_batch, y_batch = [x_size[label] for label in batch], [y_size[label] for label in batch]
    m = int(np.prod([x_size[label] for label in x_free], dtype=np.int64))
    n = int(np.prod([y_size[label] for label in y_free], dtype=np.int64))
    k = int(np.prod([x_size[label] for label in summed], dtype=np.int64))
    if x_batch == y_batch:  # no broadcasting: one batch dimension
        x_batch = y_batch = [int(np.prod(x_batch, dtype=np.int64))] if batch else []
    if matmul:
        z = cv.op("matmul", reshape(cv, x, x_batch + [m, k]), reshape(cv, y, y_batch + [k, n]))
    else:  # integers (matmul is float only) or nothing to sum
        tail = [k] if summed else []
        z = cv.op("mul", reshape(cv, x, x_batch + [m, 1] + tail), reshape(cv, y, y_batch + [1, n] + tail))
        if summed:
            z = cv.op("reduceSum", z, axes=[len(z.shape) - 1], keepDimensions=False)
    labels = batch + x_free + y_free
    shape = [max(x_size[label], y_size[label]) for label in batch] + \
        [x_size[label] for label in x_free] + [y_size[label] for label in y_free]
    return reshape(cv, z, shape), labels


@handles("Einsum")
def einsum(cv, node, opset):
    """Any number of operands, explicit or implicit output, ellipses (broadcast like NumPy's) and
    labels repeated within a term (diagonals and traces): each term's repeated labels are reduced to
    the diagonal, labels no other term or the output has are summed, and the operands are
    contracted left to right, two at a time (``_contract``: matmul for floats, mul + reduceSum for
    integers); the remaining labels are summed and permuted to the output's order."""
    equation = attributes(node)["equation"]
    first = cv.operand(node.input[0])
    operands = [first] + [cv.operand(name, first.data_type) for name in node.input[1:]]
    labels, output = _einsum_terms(cv, equation, [len(o.shape) for o in operands])
    _check_sizes(cv, equation, operands, labels)
    terms = [_diagonal(cv, x, term) for x, term in zip(operands, labels)]
    # Labels only one operand has and the output lacks are summed first.
    terms = [_sum_labels(cv, x, term, {label for label in term if label not in output and
                                       not any(label in other for j, (_, other) in enumerate(terms) if j != i)})
             for i, (x, term) in enumerate(terms)]
    result, result_labels = terms[0]
    for i in range(1, len(terms)):
        keep = set(output).union(*(term for _, term in terms[i + 1:]))
        result, result_labels = _contract(cv, result, result_labels, terms[i][0], terms[i][1], keep)
    result, result_labels = _sum_labels(cv, result, result_labels, set(result_labels) - set(output))
    return _permute(cv, result, result_labels, output)
