//! The work an op does, from its name and its tensors' shapes and dtypes: floating-point
//! operations and the bytes it must at least move, for a roofline per op.
//!
//! Conventions (as fvcore and Nsight Compute count):
//! - a multiply-add is 2 FLOPs (matmul, linear, convolution and their backward ops, attention);
//! - an elementwise or unary op is 1 FLOP per output element, whatever the function (`exp`
//!   counts as `add` does); a reduction 1 per input element; pooling 1 per window element;
//! - composites: softmax and log-softmax 5 per element (max, subtract, exp, sum, divide), layer
//!   norm 7 (mean, centre, square, sum, scale, gamma, beta), attention its two matmuls and a
//!   softmax;
//! - a bias (an `Option` argument) is not counted: its add is below 1/(C_in·kernel) of the op;
//! - ops that only move data (cat, gather, slice assign, casts, transfers) are 0 FLOPs with
//!   bytes; views (reshape, transpose, permute, expand, slice, flip) and waits (`sync`) are no
//!   work at all;
//! - what has no formula here (sort, random, interpolation, FFT, CTC, deformable convolution,
//!   grid sampling, fused blocks) is unknown, never zero.
//!
//! Bytes are the minimum traffic: each input and output tensor read or written once, at its
//! dtype. Caches, padding and re-reads (a matmul's tiles) are not in it, so an op's bytes/s is a
//! lower bound of what it moved.
//!
//! ```
//! use burn_profiled_core::work::{self, TensorArg};
//!
//! let x = TensorArg::new(&[8, 3, 32, 32], 4);
//! let weight = TensorArg::new(&[16, 3, 3, 3], 4);
//! let out = TensorArg::new(&[8, 16, 30, 30], 4);
//! let work = work::of("conv2d", &[x, weight], &[out], None);
//! assert_eq!(work.flops, Some(2 * 8 * 16 * 30 * 30 * 3 * 3 * 3));
//! assert_eq!(work.bytes, Some(4 * (8 * 3 * 32 * 32 + 16 * 3 * 3 * 3 + 8 * 16 * 30 * 30)));
//! ```

use crate::shape::Shape;

/// One tensor an op reads or writes: its dims and the bytes of one element.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TensorArg {
    /// The dims, outermost first.
    pub shape: Shape,
    /// Bytes per element (4 for `f32`; quantized and packed dtypes round up).
    pub elem_bytes: u32,
}

impl TensorArg {
    /// A tensor of `dims` with elements of `elem_bytes` bytes.
    pub fn new(dims: &[usize], elem_bytes: u32) -> Self {
        TensorArg {
            shape: Shape::from(dims),
            elem_bytes,
        }
    }

    fn dims(&self) -> &[usize] {
        self.shape.as_slice()
    }

    fn numel(&self) -> u64 {
        self.dims().iter().map(|&d| d as u64).product()
    }

    fn bytes(&self) -> u64 {
        self.numel() * u64::from(self.elem_bytes)
    }
}

/// What an op did: its floating-point operations and the bytes it moved at least.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Work {
    /// FLOPs; `None` where no formula applies (never a guessed zero).
    pub flops: Option<u64>,
    /// Bytes read and written at least; `None` where the op's work is unknown.
    pub bytes: Option<u64>,
}

impl Work {
    /// No work: a view, or an op that only reads metadata.
    pub const NONE: Work = Work {
        flops: Some(0),
        bytes: Some(0),
    };

    /// FLOPs per byte, where both are known and bytes are not zero.
    pub fn intensity(&self) -> Option<f64> {
        match (self.flops, self.bytes) {
            (Some(flops), Some(bytes)) if bytes > 0 => Some(flops as f64 / bytes as f64),
            _ => None,
        }
    }
}

/// The work of the op named `op` (a Burn backend op, `float_matmul`, or an IR op, `matmul`; the
/// `float_`, `int_`, `bool_` and `q_` prefixes are the same op on other dtypes), given its
/// tensor arguments in order (`inputs`, optional ones left out), its outputs, and its window
/// (`kernel`: a pooling op's kernel size).
pub fn of(op: &str, inputs: &[TensorArg], outputs: &[TensorArg], kernel: Option<&[usize]>) -> Work {
    let base = ["float_", "int_", "bool_", "q_"]
        .iter()
        .find_map(|prefix| op.strip_prefix(prefix))
        .unwrap_or(op);
    let moved = || {
        inputs.iter().map(TensorArg::bytes).sum::<u64>()
            + outputs.iter().map(TensorArg::bytes).sum::<u64>()
    };
    match flops(base, inputs, outputs, kernel) {
        Flops::View => Work::NONE,
        Flops::Known(flops) => Work {
            flops: Some(flops),
            bytes: Some(moved()),
        },
        Flops::Unknown => Work::default(),
    }
}

/// One op of a fused block: its name, its tensors with their ids, and its window.
#[derive(Debug, Clone)]
pub struct BlockOp<'a> {
    /// The op's name (the IR's: `add`, `matmul`).
    pub name: &'a str,
    /// Its tensor inputs, in order, with the ids that tell a block's own tensors apart.
    pub inputs: Vec<(u64, TensorArg)>,
    /// Its outputs, with their ids.
    pub outputs: Vec<(u64, TensorArg)>,
    /// A pooling op's kernel size.
    pub window: Option<Vec<usize>>,
}

/// The work of a fused block: the sum of its ops' FLOPs (unknown if one op's is), and as bytes
/// the tensors it reads from outside (each once) and those it writes that no later op of the
/// block reads (an intermediate stays in registers; one that is also used after the block is
/// not counted, so this is a lower bound).
///
/// ```
/// use burn_profiled_core::work::{self, BlockOp, TensorArg};
///
/// let x = || TensorArg::new(&[1024], 4);
/// // y = exp(x) * x: two elementwise ops, `exp`'s output never leaves the block.
/// let block = [
///     BlockOp { name: "exp", inputs: vec![(1, x())], outputs: vec![(2, x())], window: None },
///     BlockOp { name: "mul", inputs: vec![(2, x()), (1, x())], outputs: vec![(3, x())], window: None },
/// ];
/// let work = work::of_block(&block);
/// assert_eq!(work.flops, Some(2 * 1024));
/// assert_eq!(work.bytes, Some(2 * 4096), "x read once, y written once");
/// ```
pub fn of_block(ops: &[BlockOp<'_>]) -> Work {
    let mut flops = 0u64;
    let mut moving = Vec::with_capacity(ops.len());
    for op in ops {
        let inputs: Vec<TensorArg> = op.inputs.iter().map(|(_, t)| t.clone()).collect();
        let outputs: Vec<TensorArg> = op.outputs.iter().map(|(_, t)| t.clone()).collect();
        let work = of(op.name, &inputs, &outputs, op.window.as_deref());
        flops += match work.flops {
            Some(op_flops) => op_flops,
            None => return Work::default(),
        };
        // A view's output is its input: reading it is reading that.
        moving.push(work != Work::NONE);
    }
    let ops: Vec<&BlockOp<'_>> = ops
        .iter()
        .zip(moving)
        .filter_map(|(op, moves)| moves.then_some(op))
        .collect();
    let mut written: Vec<u64> = Vec::new();
    let mut read_outside: Vec<u64> = Vec::new();
    let mut bytes = 0u64;
    for (at, op) in ops.iter().enumerate() {
        for (id, tensor) in &op.inputs {
            if !written.contains(id) && !read_outside.contains(id) {
                read_outside.push(*id);
                bytes += tensor.bytes();
            }
        }
        for (id, tensor) in &op.outputs {
            written.push(*id);
            let read_later = ops[at + 1..]
                .iter()
                .any(|later| later.inputs.iter().any(|(input, _)| input == id));
            if !read_later {
                bytes += tensor.bytes();
            }
        }
    }
    Work {
        flops: Some(flops),
        bytes: Some(bytes),
    }
}

enum Flops {
    /// Metadata only: no FLOPs, no bytes.
    View,
    Known(u64),
    Unknown,
}

fn flops(
    base: &str,
    inputs: &[TensorArg],
    outputs: &[TensorArg],
    kernel: Option<&[usize]>,
) -> Flops {
    let input = |i: usize| inputs.get(i);
    let numel_in = |i: usize| input(i).map(TensorArg::numel);
    let numel_out = outputs.first().map(TensorArg::numel);
    let known = |flops: Option<u64>| flops.map_or(Flops::Unknown, Flops::Known);
    let kernel_elems = || kernel.map(|k| k.iter().map(|&d| d as u64).product::<u64>());
    match base {
        "reshape" | "transpose" | "swap_dims" | "permute" | "expand" | "slice" | "flip"
        | "detach" | "set_require_grad" | "is_require_grad" | "device" | "empty" | "sync"
        | "memory_cleanup" => Flops::View,

        "matmul" => known(matmul(input(0), input(1))),
        "linear" => known(
            last_dim(input(1), 1)
                .zip(numel_in(0))
                .map(|(out, x)| 2 * x * out),
        ),
        "linear_x_backward" => known(
            first_dim(input(0))
                .zip(numel_in(1))
                .map(|(d_in, grad)| 2 * grad * d_in),
        ),
        "linear_weight_backward" => known(
            last_dim(input(1), 1)
                .zip(numel_in(0))
                .map(|(out, x)| 2 * x * out),
        ),
        "linear_bias_backward" => known(numel_in(0)),
        "attention" => known(attention(input(0), input(1), input(2))),

        // weight [C_out, C_in/groups, k..]: each output element is C_in/groups·k MACs.
        "conv1d" | "conv2d" | "conv3d" => known(per_weight_row(numel_out, input(1))),
        "conv1d_x_backward"
        | "conv2d_x_backward"
        | "conv3d_x_backward"
        | "conv1d_weight_backward"
        | "conv2d_weight_backward"
        | "conv3d_weight_backward" => known(per_weight_row(numel_in(2), input(1))),
        // weight [C_in, C_out/groups, k..]: each input element is C_out/groups·k MACs.
        "conv_transpose1d"
        | "conv_transpose2d"
        | "conv_transpose3d"
        | "conv_transpose1d_weight_backward"
        | "conv_transpose2d_weight_backward"
        | "conv_transpose3d_weight_backward" => known(per_weight_row(numel_in(0), input(1))),
        "conv_transpose1d_x_backward"
        | "conv_transpose2d_x_backward"
        | "conv_transpose3d_x_backward" => known(per_weight_row(numel_out, input(0))),
        "conv1d_bias_backward"
        | "conv2d_bias_backward"
        | "conv3d_bias_backward"
        | "conv_transpose1d_bias_backward"
        | "conv_transpose2d_bias_backward"
        | "conv_transpose3d_bias_backward" => known(numel_in(2)),

        "avg_pool1d"
        | "avg_pool2d"
        | "max_pool1d"
        | "max_pool2d"
        | "max_pool1d_with_indices"
        | "max_pool2d_with_indices" => known(numel_out.zip(kernel_elems()).map(|(o, k)| o * k)),
        "avg_pool1d_backward" | "avg_pool2d_backward" => {
            known(numel_in(1).zip(kernel_elems()).map(|(g, k)| g * k))
        }
        "max_pool1d_with_indices_backward" | "max_pool2d_with_indices_backward" => {
            known(numel_in(1))
        }
        "adaptive_avg_pool1d"
        | "adaptive_avg_pool2d"
        | "adaptive_avg_pool1d_backward"
        | "adaptive_avg_pool2d_backward" => known(numel_in(0)),

        "softmax" | "log_softmax" | "softmin" => known(numel_in(0).map(|n| 5 * n)),
        "layer_norm" => known(numel_in(0).map(|n| 7 * n)),

        // Data movement only.
        "from_data" | "into_data" | "init" | "to_device" | "cast" | "into_float" | "into_int"
        | "zeros" | "ones" | "full" | "cat" | "repeat_dim" | "gather" | "gather_nd" | "select"
        | "slice_assign" | "embedding" | "unfold" | "quantize" | "dequantize"
        | "quantize_dynamic" | "arange" | "arange_step" | "argwhere" | "mask_fill"
        | "mask_where" => Flops::Known(0),
        "scatter_add" | "scatter_nd" | "select_add" | "scatter_or" | "select_or"
        | "embedding_backward" => known(numel_in(1).or(numel_in(0))),

        _ if is_reduction(base) => known(numel_in(0)),
        _ if is_elementwise(base) => known(numel_out.or_else(|| broadcast_numel(inputs))),
        _ => Flops::Unknown,
    }
}

/// `lhs [.., m, k] · rhs [.., k, n]`, batch dims broadcast: 2·k per output element.
fn matmul(lhs: Option<&TensorArg>, rhs: Option<&TensorArg>) -> Option<u64> {
    let (lhs, rhs) = (lhs?.dims(), rhs?.dims());
    let (&[.., m, k], &[.., n]) = (lhs, rhs) else {
        return None;
    };
    let batch = broadcast(&lhs[..lhs.len() - 2], &rhs[..rhs.len().saturating_sub(2)]);
    Some(2 * batch * m as u64 * k as u64 * n as u64)
}

/// `query [.., L_q, d] · key [.., L_k, d]ᵀ`, a softmax over L_k, then `· value [.., L_k, d_v]`.
fn attention(
    query: Option<&TensorArg>,
    key: Option<&TensorArg>,
    value: Option<&TensorArg>,
) -> Option<u64> {
    let (query, key, value) = (query?.dims(), key?.dims(), value?.dims());
    let (&[.., l_q, d], &[.., l_k, _], &[.., d_v]) = (query, key, value) else {
        return None;
    };
    let batch = broadcast(&query[..query.len() - 2], &key[..key.len() - 2]);
    let scores = batch * l_q as u64 * l_k as u64;
    Some(scores * (2 * d as u64 + 5 + 2 * d_v as u64))
}

/// 2 FLOPs per MAC, `elements` times a weight row's MACs (the weight without its first dim).
fn per_weight_row(elements: Option<u64>, weight: Option<&TensorArg>) -> Option<u64> {
    let weight = weight?;
    let rows = *weight.dims().first()? as u64;
    let elements = elements?;
    (rows > 0).then(|| 2 * elements * (weight.numel() / rows))
}

fn first_dim(tensor: Option<&TensorArg>) -> Option<u64> {
    tensor?.dims().first().map(|&d| d as u64)
}

/// The last dim, of a tensor of at least `min_rank` dims.
fn last_dim(tensor: Option<&TensorArg>, min_rank: usize) -> Option<u64> {
    let dims = tensor?.dims();
    (dims.len() >= min_rank).then(|| dims.last().map(|&d| d as u64))?
}

/// The element count of `a` and `b` broadcast together (aligned from the last dim).
fn broadcast(a: &[usize], b: &[usize]) -> u64 {
    broadcast_dims(a, b).iter().map(|&d| d as u64).product()
}

/// The element count of all `inputs` broadcast together.
fn broadcast_numel(inputs: &[TensorArg]) -> Option<u64> {
    let dims = inputs
        .iter()
        .map(TensorArg::dims)
        .fold(Vec::new(), |acc: Vec<usize>, dims| {
            broadcast_dims(&acc, dims)
        });
    (!inputs.is_empty()).then(|| dims.iter().map(|&d| d as u64).product())
}

/// The dims of `a` and `b` broadcast together: each the larger, missing leading dims 1.
fn broadcast_dims(a: &[usize], b: &[usize]) -> Vec<usize> {
    let rank = a.len().max(b.len());
    let dim =
        |dims: &[usize], i: usize| (i + dims.len()).checked_sub(rank).map_or(1, |at| dims[at]);
    (0..rank).map(|i| dim(a, i).max(dim(b, i))).collect()
}

fn is_reduction(base: &str) -> bool {
    let base = base.strip_suffix("_with_indices").unwrap_or(base);
    let stem = base
        .strip_suffix("_dims")
        .or_else(|| base.strip_suffix("_dim"))
        .unwrap_or(base);
    matches!(
        stem,
        "sum"
            | "mean"
            | "prod"
            | "max"
            | "min"
            | "max_abs"
            | "argmax"
            | "argmin"
            | "any"
            | "all"
            | "cumsum"
            | "cumprod"
            | "cummin"
            | "cummax"
    )
}

fn is_elementwise(base: &str) -> bool {
    let stem = ["_scalar_impl", "_scalar", "_elem"]
        .iter()
        .find_map(|suffix| base.strip_suffix(suffix))
        .unwrap_or(base);
    matches!(
        stem,
        "add"
            | "sub"
            | "mul"
            | "div"
            | "remainder"
            | "powf"
            | "powi"
            | "atan2"
            | "clamp"
            | "clamp_min"
            | "clamp_max"
            | "equal"
            | "not_equal"
            | "greater"
            | "greater_equal"
            | "lower"
            | "lower_equal"
            | "neg"
            | "recip"
            | "exp"
            | "log"
            | "log1p"
            | "sqrt"
            | "abs"
            | "cos"
            | "sin"
            | "tan"
            | "cosh"
            | "sinh"
            | "tanh"
            | "acos"
            | "acosh"
            | "asin"
            | "asinh"
            | "atan"
            | "atanh"
            | "round"
            | "floor"
            | "ceil"
            | "trunc"
            | "erf"
            | "sign"
            | "is_nan"
            | "is_inf"
            | "not"
            | "and"
            | "or"
            | "xor"
            | "bitwise_and"
            | "bitwise_or"
            | "bitwise_xor"
            | "bitwise_not"
            | "bitwise_left_shift"
            | "bitwise_right_shift"
            | "relu"
            | "relu_backward"
            | "gelu"
            | "gelu_backward"
            | "prelu"
            | "leaky_relu"
            | "sigmoid"
            | "sigmoid_backward"
            | "hard_sigmoid"
            | "log_sigmoid"
            | "log_sigmoid_backward"
            | "square"
            | "rsqrt"
    )
}
