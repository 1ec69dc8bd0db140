// The op registry: one row per builder method. Each row names `<row>_op()`, defined in the
// op's file under graph/ops/.
WEBNN_OP(add)
WEBNN_OP(conv2d)
WEBNN_OP(matmul)
WEBNN_OP(mul)
WEBNN_OP(relu)
WEBNN_OP(reshape)
