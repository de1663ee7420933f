//! The forwarding table: every method of Burn 0.21's op traits, forwarded to `B`.
//!
//! The signatures are Burn's own (`burn-backend` 0.21.0, `src/backend/ops/`), with `Profiled<B>`
//! for the backend; `scripts/list-backend-ops.py` prints them from the Burn sources for a diff on a Burn
//! upgrade. The few ops the macro cannot express are written out after their trait's table.

use core::future::Future;
use core::ops::Range;

use burn_backend::ops::*;
use burn_backend::quantization::{QuantScheme, QuantizationParametersPrimitive};
use burn_backend::tensor::{
    BoolTensor, Device, FloatTensor, IndexingUpdateOp, IntTensor, QuantizedTensor,
};
use burn_backend::{Backend, Distribution, ExecutionError, Scalar, TensorData, TensorPrimitive};
use burn_std::{BoolDType, FloatDType, IntDType, Shape, Slice};

use super::Profiled;
use super::forward::forward;
use super::retag::Retag;

impl<B: Backend> FloatTensorOps<Self> for Profiled<B> {
    forward! {
        fn float_from_data(data: TensorData, device: &Device<Profiled<B>>) -> FloatTensor<Profiled<B>> => device(device);
        fn float_random(shape: Shape, distribution: Distribution, device: &Device<Profiled<B>>, dtype: FloatDType) -> FloatTensor<Profiled<B>> => device(device);
        fn float_zeros(shape: Shape, device: &Device<Profiled<B>>, dtype: FloatDType) -> FloatTensor<Profiled<B>> => device(device);
        fn float_ones(shape: Shape, device: &Device<Profiled<B>>, dtype: FloatDType) -> FloatTensor<Profiled<B>> => device(device);
        fn float_full(shape: Shape, fill_value: Scalar, device: &Device<Profiled<B>>, dtype: FloatDType) -> FloatTensor<Profiled<B>> => device(device);
        #[read] fn float_into_data(tensor: FloatTensor<Profiled<B>>) -> Result<TensorData, ExecutionError> => float(tensor);
        #[query] fn float_device(tensor: &FloatTensor<Profiled<B>>) -> Device<Profiled<B>> => float(tensor);
        fn float_to_device(tensor: FloatTensor<Profiled<B>>, device: &Device<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_into_int(tensor: FloatTensor<Profiled<B>>, out_dtype: IntDType) -> IntTensor<Profiled<B>> => float(tensor);
        fn float_empty(shape: Shape, device: &Device<Profiled<B>>, dtype: FloatDType) -> FloatTensor<Profiled<B>> => device(device);
        fn float_repeat_dim(tensor: FloatTensor<Profiled<B>>, dim: usize, times: usize) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_add(lhs: FloatTensor<Profiled<B>>, rhs: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(lhs);
        fn float_add_scalar(lhs: FloatTensor<Profiled<B>>, rhs: Scalar) -> FloatTensor<Profiled<B>> => float(lhs);
        fn float_clamp_min(tensor: FloatTensor<Profiled<B>>, min: Scalar) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_clamp_max(tensor: FloatTensor<Profiled<B>>, max: Scalar) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_clamp(tensor: FloatTensor<Profiled<B>>, min: Scalar, max: Scalar) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_sub(lhs: FloatTensor<Profiled<B>>, rhs: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(lhs);
        fn float_sub_scalar(lhs: FloatTensor<Profiled<B>>, rhs: Scalar) -> FloatTensor<Profiled<B>> => float(lhs);
        fn float_mul(lhs: FloatTensor<Profiled<B>>, rhs: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(lhs);
        fn float_mul_scalar(lhs: FloatTensor<Profiled<B>>, rhs: Scalar) -> FloatTensor<Profiled<B>> => float(lhs);
        fn float_div(lhs: FloatTensor<Profiled<B>>, rhs: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(lhs);
        fn float_div_scalar(lhs: FloatTensor<Profiled<B>>, rhs: Scalar) -> FloatTensor<Profiled<B>> => float(lhs);
        fn float_remainder(lhs: FloatTensor<Profiled<B>>, rhs: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(lhs);
        fn float_remainder_scalar(lhs: FloatTensor<Profiled<B>>, rhs: Scalar) -> FloatTensor<Profiled<B>> => float(lhs);
        fn float_matmul(lhs: FloatTensor<Profiled<B>>, rhs: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(lhs);
        fn float_cross(lhs: FloatTensor<Profiled<B>>, rhs: FloatTensor<Profiled<B>>, dim: usize) -> FloatTensor<Profiled<B>> => float(lhs);
        fn float_neg(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_recip(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_transpose(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_swap_dims(tensor: FloatTensor<Profiled<B>>, dim1: usize, dim2: usize) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_permute(tensor: FloatTensor<Profiled<B>>, axes: &[usize]) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_flip(tensor: FloatTensor<Profiled<B>>, axes: &[usize]) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_reshape(tensor: FloatTensor<Profiled<B>>, shape: Shape) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_gather(dim: usize, tensor: FloatTensor<Profiled<B>>, indices: IntTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_scatter_add(dim: usize, tensor: FloatTensor<Profiled<B>>, indices: IntTensor<Profiled<B>>, value: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_scatter_nd(data: FloatTensor<Profiled<B>>, indices: IntTensor<Profiled<B>>, values: FloatTensor<Profiled<B>>, reduction: IndexingUpdateOp) -> FloatTensor<Profiled<B>> => float(data);
        fn float_gather_nd(data: FloatTensor<Profiled<B>>, indices: IntTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(data);
        fn float_select(tensor: FloatTensor<Profiled<B>>, dim: usize, indices: IntTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_select_add(tensor: FloatTensor<Profiled<B>>, dim: usize, indices: IntTensor<Profiled<B>>, value: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_slice(tensor: FloatTensor<Profiled<B>>, slices: &[Slice]) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_slice_assign(tensor: FloatTensor<Profiled<B>>, slices: &[Slice], value: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_mask_where(tensor: FloatTensor<Profiled<B>>, mask: BoolTensor<Profiled<B>>, value: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_mask_fill(tensor: FloatTensor<Profiled<B>>, mask: BoolTensor<Profiled<B>>, value: Scalar) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_equal(lhs: FloatTensor<Profiled<B>>, rhs: FloatTensor<Profiled<B>>, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => float(lhs);
        fn float_not_equal(lhs: FloatTensor<Profiled<B>>, rhs: FloatTensor<Profiled<B>>, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => float(lhs);
        fn float_equal_elem(lhs: FloatTensor<Profiled<B>>, rhs: Scalar, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => float(lhs);
        fn float_not_equal_elem(lhs: FloatTensor<Profiled<B>>, rhs: Scalar, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => float(lhs);
        fn float_greater(lhs: FloatTensor<Profiled<B>>, rhs: FloatTensor<Profiled<B>>, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => float(lhs);
        fn float_greater_elem(lhs: FloatTensor<Profiled<B>>, rhs: Scalar, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => float(lhs);
        fn float_greater_equal(lhs: FloatTensor<Profiled<B>>, rhs: FloatTensor<Profiled<B>>, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => float(lhs);
        fn float_greater_equal_elem(lhs: FloatTensor<Profiled<B>>, rhs: Scalar, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => float(lhs);
        fn float_lower(lhs: FloatTensor<Profiled<B>>, rhs: FloatTensor<Profiled<B>>, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => float(lhs);
        fn float_lower_elem(lhs: FloatTensor<Profiled<B>>, rhs: Scalar, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => float(lhs);
        fn float_lower_equal(lhs: FloatTensor<Profiled<B>>, rhs: FloatTensor<Profiled<B>>, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => float(lhs);
        fn float_lower_equal_elem(lhs: FloatTensor<Profiled<B>>, rhs: Scalar, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => float(lhs);
        fn float_detach(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_set_require_grad(tensor: FloatTensor<Profiled<B>>, require_grad: bool) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_is_require_grad(tensor: &FloatTensor<Profiled<B>>) -> bool => float(tensor);
        fn float_sum(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_sum_dim(tensor: FloatTensor<Profiled<B>>, dim: usize) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_prod(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_prod_dim(tensor: FloatTensor<Profiled<B>>, dim: usize) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_mean(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_mean_dim(tensor: FloatTensor<Profiled<B>>, dim: usize) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_cumsum(tensor: FloatTensor<Profiled<B>>, dim: usize) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_cumprod(tensor: FloatTensor<Profiled<B>>, dim: usize) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_cummin(tensor: FloatTensor<Profiled<B>>, dim: usize) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_cummax(tensor: FloatTensor<Profiled<B>>, dim: usize) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_cast(tensor: FloatTensor<Profiled<B>>, dtype: FloatDType) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_exp(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_log(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_log1p(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_powf(lhs: FloatTensor<Profiled<B>>, rhs: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(lhs);
        fn float_powi(lhs: FloatTensor<Profiled<B>>, rhs: IntTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(lhs);
        fn float_powi_scalar(lhs: FloatTensor<Profiled<B>>, rhs: Scalar) -> FloatTensor<Profiled<B>> => float(lhs);
        fn float_powi_scalar_impl(lhs: FloatTensor<Profiled<B>>, rhs: Scalar) -> FloatTensor<Profiled<B>> => float(lhs);
        fn float_powf_scalar(tensor: FloatTensor<Profiled<B>>, value: Scalar) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_powf_scalar_impl(tensor: FloatTensor<Profiled<B>>, value: Scalar) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_sqrt(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_abs(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_cos(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_sin(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_tan(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_cosh(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_sinh(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_tanh(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_acos(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_acosh(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_asin(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_asinh(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_atan(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_atanh(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_atan2(lhs: FloatTensor<Profiled<B>>, rhs: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(lhs);
        fn float_round(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_floor(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_ceil(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_trunc(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_erf(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_cat(tensors: Vec<FloatTensor<Profiled<B>>>, dim: usize) -> FloatTensor<Profiled<B>> => floats(tensors);
        fn float_argmax(tensor: FloatTensor<Profiled<B>>, dim: usize, out_dtype: IntDType) -> IntTensor<Profiled<B>> => float(tensor);
        fn float_argtopk(tensor: FloatTensor<Profiled<B>>, dim: usize, k: usize, out_dtype: IntDType) -> IntTensor<Profiled<B>> => float(tensor);
        fn float_topk(tensor: FloatTensor<Profiled<B>>, dim: usize, k: usize) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_argmin(tensor: FloatTensor<Profiled<B>>, dim: usize, out_dtype: IntDType) -> IntTensor<Profiled<B>> => float(tensor);
        fn float_max(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_max_dim(tensor: FloatTensor<Profiled<B>>, dim: usize) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_max_dim_with_indices(tensor: FloatTensor<Profiled<B>>, dim: usize, indices_dtype: IntDType) -> (FloatTensor<Profiled<B>>, IntTensor<Profiled<B>>) => float(tensor);
        fn float_min(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_min_dim(tensor: FloatTensor<Profiled<B>>, dim: usize) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_min_dim_with_indices(tensor: FloatTensor<Profiled<B>>, dim: usize, indices_dtype: IntDType) -> (FloatTensor<Profiled<B>>, IntTensor<Profiled<B>>) => float(tensor);
        fn float_max_abs(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_max_abs_dim(tensor: FloatTensor<Profiled<B>>, dim: usize) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_any(tensor: FloatTensor<Profiled<B>>, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => float(tensor);
        fn float_any_dim(tensor: FloatTensor<Profiled<B>>, dim: usize, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => float(tensor);
        fn float_all(tensor: FloatTensor<Profiled<B>>, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => float(tensor);
        fn float_all_dim(tensor: FloatTensor<Profiled<B>>, dim: usize, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => float(tensor);
        fn float_sign(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_expand(tensor: FloatTensor<Profiled<B>>, shape: Shape) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_sort(tensor: FloatTensor<Profiled<B>>, dim: usize, descending: bool) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_sort_with_indices(tensor: FloatTensor<Profiled<B>>, dim: usize, descending: bool, indices_dtype: IntDType) -> (FloatTensor<Profiled<B>>, IntTensor<Profiled<B>>) => float(tensor);
        fn float_argsort(tensor: FloatTensor<Profiled<B>>, dim: usize, descending: bool, out_dtype: IntDType) -> IntTensor<Profiled<B>> => float(tensor);
        fn float_grid_sample_2d(tensor: FloatTensor<Profiled<B>>, grid: FloatTensor<Profiled<B>>, options: GridSampleOptions) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_unfold(tensor: FloatTensor<Profiled<B>>, dim: usize, size: usize, step: usize) -> FloatTensor<Profiled<B>> => float(tensor);
        fn float_is_nan(tensor: FloatTensor<Profiled<B>>, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => float(tensor);
        fn float_is_inf(tensor: FloatTensor<Profiled<B>>, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => float(tensor);
    }
}

impl<B: Backend> IntTensorOps<Self> for Profiled<B> {
    forward! {
        fn int_empty(shape: Shape, device: &Device<Profiled<B>>, dtype: IntDType) -> IntTensor<Profiled<B>> => device(device);
        #[read] fn int_into_data(tensor: IntTensor<Profiled<B>>) -> Result<TensorData, ExecutionError> => int(tensor);
        fn int_from_data(data: TensorData, device: &Device<Profiled<B>>) -> IntTensor<Profiled<B>> => device(device);
        #[query] fn int_device(tensor: &IntTensor<Profiled<B>>) -> Device<Profiled<B>> => int(tensor);
        fn int_to_device(tensor: IntTensor<Profiled<B>>, device: &Device<Profiled<B>>) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_reshape(tensor: IntTensor<Profiled<B>>, shape: Shape) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_slice(tensor: IntTensor<Profiled<B>>, slices: &[Slice]) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_slice_assign(tensor: IntTensor<Profiled<B>>, slices: &[Slice], value: IntTensor<Profiled<B>>) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_into_float(tensor: IntTensor<Profiled<B>>, out_dtype: FloatDType) -> FloatTensor<Profiled<B>> => int(tensor);
        fn int_mask_where(tensor: IntTensor<Profiled<B>>, mask: BoolTensor<Profiled<B>>, value: IntTensor<Profiled<B>>) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_mask_fill(tensor: IntTensor<Profiled<B>>, mask: BoolTensor<Profiled<B>>, value: Scalar) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_gather(dim: usize, tensor: IntTensor<Profiled<B>>, indices: IntTensor<Profiled<B>>) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_scatter_add(dim: usize, tensor: IntTensor<Profiled<B>>, indices: IntTensor<Profiled<B>>, value: IntTensor<Profiled<B>>) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_scatter_nd(data: IntTensor<Profiled<B>>, indices: IntTensor<Profiled<B>>, values: IntTensor<Profiled<B>>, reduction: IndexingUpdateOp) -> IntTensor<Profiled<B>> => int(data);
        fn int_gather_nd(data: IntTensor<Profiled<B>>, indices: IntTensor<Profiled<B>>) -> IntTensor<Profiled<B>> => int(data);
        fn int_select(tensor: IntTensor<Profiled<B>>, dim: usize, indices: IntTensor<Profiled<B>>) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_select_add(tensor: IntTensor<Profiled<B>>, dim: usize, indices: IntTensor<Profiled<B>>, value: IntTensor<Profiled<B>>) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_repeat_dim(tensor: IntTensor<Profiled<B>>, dim: usize, times: usize) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_cat(tensors: Vec<IntTensor<Profiled<B>>>, dim: usize) -> IntTensor<Profiled<B>> => ints(tensors);
        fn int_equal(lhs: IntTensor<Profiled<B>>, rhs: IntTensor<Profiled<B>>, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => int(lhs);
        fn int_not_equal(lhs: IntTensor<Profiled<B>>, rhs: IntTensor<Profiled<B>>, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => int(lhs);
        fn int_equal_elem(lhs: IntTensor<Profiled<B>>, rhs: Scalar, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => int(lhs);
        fn int_not_equal_elem(lhs: IntTensor<Profiled<B>>, rhs: Scalar, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => int(lhs);
        fn int_greater(lhs: IntTensor<Profiled<B>>, rhs: IntTensor<Profiled<B>>, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => int(lhs);
        fn int_greater_elem(lhs: IntTensor<Profiled<B>>, rhs: Scalar, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => int(lhs);
        fn int_greater_equal(lhs: IntTensor<Profiled<B>>, rhs: IntTensor<Profiled<B>>, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => int(lhs);
        fn int_greater_equal_elem(lhs: IntTensor<Profiled<B>>, rhs: Scalar, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => int(lhs);
        fn int_lower(lhs: IntTensor<Profiled<B>>, rhs: IntTensor<Profiled<B>>, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => int(lhs);
        fn int_lower_elem(lhs: IntTensor<Profiled<B>>, rhs: Scalar, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => int(lhs);
        fn int_lower_equal(lhs: IntTensor<Profiled<B>>, rhs: IntTensor<Profiled<B>>, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => int(lhs);
        fn int_lower_equal_elem(lhs: IntTensor<Profiled<B>>, rhs: Scalar, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => int(lhs);
        fn int_add(lhs: IntTensor<Profiled<B>>, rhs: IntTensor<Profiled<B>>) -> IntTensor<Profiled<B>> => int(lhs);
        fn int_add_scalar(lhs: IntTensor<Profiled<B>>, rhs: Scalar) -> IntTensor<Profiled<B>> => int(lhs);
        fn int_powi(lhs: IntTensor<Profiled<B>>, rhs: IntTensor<Profiled<B>>) -> IntTensor<Profiled<B>> => int(lhs);
        fn int_powi_scalar(lhs: IntTensor<Profiled<B>>, rhs: Scalar) -> IntTensor<Profiled<B>> => int(lhs);
        fn int_powi_scalar_impl(lhs: IntTensor<Profiled<B>>, rhs: Scalar) -> IntTensor<Profiled<B>> => int(lhs);
        fn int_clamp_min(tensor: IntTensor<Profiled<B>>, min: Scalar) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_clamp_max(tensor: IntTensor<Profiled<B>>, max: Scalar) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_clamp(tensor: IntTensor<Profiled<B>>, min: Scalar, max: Scalar) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_sub(lhs: IntTensor<Profiled<B>>, rhs: IntTensor<Profiled<B>>) -> IntTensor<Profiled<B>> => int(lhs);
        fn int_sub_scalar(lhs: IntTensor<Profiled<B>>, rhs: Scalar) -> IntTensor<Profiled<B>> => int(lhs);
        fn int_mul(lhs: IntTensor<Profiled<B>>, rhs: IntTensor<Profiled<B>>) -> IntTensor<Profiled<B>> => int(lhs);
        fn int_mul_scalar(lhs: IntTensor<Profiled<B>>, rhs: Scalar) -> IntTensor<Profiled<B>> => int(lhs);
        fn int_div(lhs: IntTensor<Profiled<B>>, rhs: IntTensor<Profiled<B>>) -> IntTensor<Profiled<B>> => int(lhs);
        fn int_div_scalar(lhs: IntTensor<Profiled<B>>, rhs: Scalar) -> IntTensor<Profiled<B>> => int(lhs);
        fn int_remainder(lhs: IntTensor<Profiled<B>>, rhs: IntTensor<Profiled<B>>) -> IntTensor<Profiled<B>> => int(lhs);
        fn int_remainder_scalar(lhs: IntTensor<Profiled<B>>, rhs: Scalar) -> IntTensor<Profiled<B>> => int(lhs);
        fn int_matmul(lhs: IntTensor<Profiled<B>>, rhs: IntTensor<Profiled<B>>) -> IntTensor<Profiled<B>> => int(lhs);
        fn int_neg(tensor: IntTensor<Profiled<B>>) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_zeros(shape: Shape, device: &Device<Profiled<B>>, dtype: IntDType) -> IntTensor<Profiled<B>> => device(device);
        fn int_ones(shape: Shape, device: &Device<Profiled<B>>, dtype: IntDType) -> IntTensor<Profiled<B>> => device(device);
        fn int_full(shape: Shape, fill_value: Scalar, device: &Device<Profiled<B>>, dtype: IntDType) -> IntTensor<Profiled<B>> => device(device);
        fn int_sum(tensor: IntTensor<Profiled<B>>) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_sum_dim(tensor: IntTensor<Profiled<B>>, dim: usize) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_prod(tensor: IntTensor<Profiled<B>>) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_prod_dim(tensor: IntTensor<Profiled<B>>, dim: usize) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_mean(tensor: IntTensor<Profiled<B>>) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_mean_dim(tensor: IntTensor<Profiled<B>>, dim: usize) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_cumsum(tensor: IntTensor<Profiled<B>>, dim: usize) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_cumprod(tensor: IntTensor<Profiled<B>>, dim: usize) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_cummin(tensor: IntTensor<Profiled<B>>, dim: usize) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_cummax(tensor: IntTensor<Profiled<B>>, dim: usize) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_argmax(tensor: IntTensor<Profiled<B>>, dim: usize) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_argtopk(tensor: IntTensor<Profiled<B>>, dim: usize, k: usize) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_topk(tensor: IntTensor<Profiled<B>>, dim: usize, k: usize) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_argmin(tensor: IntTensor<Profiled<B>>, dim: usize) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_max(tensor: IntTensor<Profiled<B>>) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_max_dim(tensor: IntTensor<Profiled<B>>, dim: usize) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_max_dim_with_indices(tensor: IntTensor<Profiled<B>>, dim: usize) -> (IntTensor<Profiled<B>>, IntTensor<Profiled<B>>) => int(tensor);
        fn int_max_abs(tensor: IntTensor<Profiled<B>>) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_max_abs_dim(tensor: IntTensor<Profiled<B>>, dim: usize) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_min(tensor: IntTensor<Profiled<B>>) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_min_dim(tensor: IntTensor<Profiled<B>>, dim: usize) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_min_dim_with_indices(tensor: IntTensor<Profiled<B>>, dim: usize) -> (IntTensor<Profiled<B>>, IntTensor<Profiled<B>>) => int(tensor);
        fn int_abs(tensor: IntTensor<Profiled<B>>) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_transpose(tensor: IntTensor<Profiled<B>>) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_swap_dims(tensor: IntTensor<Profiled<B>>, dim1: usize, dim2: usize) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_permute(tensor: IntTensor<Profiled<B>>, axes: &[usize]) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_flip(tensor: IntTensor<Profiled<B>>, axes: &[usize]) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_random(shape: Shape, distribution: Distribution, device: &Device<Profiled<B>>, dtype: IntDType) -> IntTensor<Profiled<B>> => device(device);
        fn int_arange_step(range: Range<i64>, step: usize, device: &Device<Profiled<B>>, dtype: IntDType) -> IntTensor<Profiled<B>> => device(device);
        fn int_arange(range: Range<i64>, device: &Device<Profiled<B>>, dtype: IntDType) -> IntTensor<Profiled<B>> => device(device);
        fn int_any(tensor: IntTensor<Profiled<B>>, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => int(tensor);
        fn int_any_dim(tensor: IntTensor<Profiled<B>>, dim: usize, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => int(tensor);
        fn int_all(tensor: IntTensor<Profiled<B>>, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => int(tensor);
        fn int_all_dim(tensor: IntTensor<Profiled<B>>, dim: usize, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => int(tensor);
        fn int_sign(tensor: IntTensor<Profiled<B>>) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_expand(tensor: IntTensor<Profiled<B>>, shape: Shape) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_sort(tensor: IntTensor<Profiled<B>>, dim: usize, descending: bool) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_sort_with_indices(tensor: IntTensor<Profiled<B>>, dim: usize, descending: bool) -> (IntTensor<Profiled<B>>, IntTensor<Profiled<B>>) => int(tensor);
        fn int_argsort(tensor: IntTensor<Profiled<B>>, dim: usize, descending: bool) -> IntTensor<Profiled<B>> => int(tensor);
        fn bitwise_and(lhs: IntTensor<Profiled<B>>, rhs: IntTensor<Profiled<B>>) -> IntTensor<Profiled<B>> => int(lhs);
        fn bitwise_and_scalar(lhs: IntTensor<Profiled<B>>, rhs: Scalar) -> IntTensor<Profiled<B>> => int(lhs);
        fn bitwise_or(lhs: IntTensor<Profiled<B>>, rhs: IntTensor<Profiled<B>>) -> IntTensor<Profiled<B>> => int(lhs);
        fn bitwise_or_scalar(lhs: IntTensor<Profiled<B>>, rhs: Scalar) -> IntTensor<Profiled<B>> => int(lhs);
        fn bitwise_xor(lhs: IntTensor<Profiled<B>>, rhs: IntTensor<Profiled<B>>) -> IntTensor<Profiled<B>> => int(lhs);
        fn bitwise_xor_scalar(lhs: IntTensor<Profiled<B>>, rhs: Scalar) -> IntTensor<Profiled<B>> => int(lhs);
        fn bitwise_not(tensor: IntTensor<Profiled<B>>) -> IntTensor<Profiled<B>> => int(tensor);
        fn bitwise_left_shift(lhs: IntTensor<Profiled<B>>, rhs: IntTensor<Profiled<B>>) -> IntTensor<Profiled<B>> => int(lhs);
        fn bitwise_left_shift_scalar(lhs: IntTensor<Profiled<B>>, rhs: Scalar) -> IntTensor<Profiled<B>> => int(lhs);
        fn bitwise_right_shift(lhs: IntTensor<Profiled<B>>, rhs: IntTensor<Profiled<B>>) -> IntTensor<Profiled<B>> => int(lhs);
        fn bitwise_right_shift_scalar(lhs: IntTensor<Profiled<B>>, rhs: Scalar) -> IntTensor<Profiled<B>> => int(lhs);
        fn int_cast(tensor: IntTensor<Profiled<B>>, dtype: IntDType) -> IntTensor<Profiled<B>> => int(tensor);
        fn int_unfold(tensor: IntTensor<Profiled<B>>, dim: usize, size: usize, step: usize) -> IntTensor<Profiled<B>> => int(tensor);
    }
}

impl<B: Backend> BoolTensorOps<Self> for Profiled<B> {
    forward! {
        fn bool_empty(shape: Shape, device: &Device<Profiled<B>>, dtype: BoolDType) -> BoolTensor<Profiled<B>> => device(device);
        fn bool_zeros(shape: Shape, device: &Device<Profiled<B>>, dtype: BoolDType) -> BoolTensor<Profiled<B>> => device(device);
        fn bool_ones(shape: Shape, device: &Device<Profiled<B>>, dtype: BoolDType) -> BoolTensor<Profiled<B>> => device(device);
        #[read] fn bool_into_data(tensor: BoolTensor<Profiled<B>>) -> Result<TensorData, ExecutionError> => bool(tensor);
        fn bool_from_data(data: TensorData, device: &Device<Profiled<B>>) -> BoolTensor<Profiled<B>> => device(device);
        fn bool_into_int(tensor: BoolTensor<Profiled<B>>, out_dtype: IntDType) -> IntTensor<Profiled<B>> => bool(tensor);
        fn bool_into_float(tensor: BoolTensor<Profiled<B>>, out_dtype: FloatDType) -> FloatTensor<Profiled<B>> => bool(tensor);
        #[query] fn bool_device(tensor: &BoolTensor<Profiled<B>>) -> Device<Profiled<B>> => bool(tensor);
        fn bool_to_device(tensor: BoolTensor<Profiled<B>>, device: &Device<Profiled<B>>) -> BoolTensor<Profiled<B>> => bool(tensor);
        fn bool_reshape(tensor: BoolTensor<Profiled<B>>, shape: Shape) -> BoolTensor<Profiled<B>> => bool(tensor);
        fn bool_slice(tensor: BoolTensor<Profiled<B>>, slices: &[Slice]) -> BoolTensor<Profiled<B>> => bool(tensor);
        fn bool_slice_assign(tensor: BoolTensor<Profiled<B>>, slices: &[Slice], value: BoolTensor<Profiled<B>>) -> BoolTensor<Profiled<B>> => bool(tensor);
        fn bool_mask_where(tensor: BoolTensor<Profiled<B>>, mask: BoolTensor<Profiled<B>>, value: BoolTensor<Profiled<B>>) -> BoolTensor<Profiled<B>> => bool(tensor);
        fn bool_mask_fill(tensor: BoolTensor<Profiled<B>>, mask: BoolTensor<Profiled<B>>, value: Scalar) -> BoolTensor<Profiled<B>> => bool(tensor);
        fn bool_gather(dim: usize, tensor: BoolTensor<Profiled<B>>, indices: IntTensor<Profiled<B>>) -> BoolTensor<Profiled<B>> => bool(tensor);
        fn bool_scatter_or(dim: usize, tensor: BoolTensor<Profiled<B>>, indices: IntTensor<Profiled<B>>, value: BoolTensor<Profiled<B>>) -> BoolTensor<Profiled<B>> => bool(tensor);
        fn bool_select(tensor: BoolTensor<Profiled<B>>, dim: usize, indices: IntTensor<Profiled<B>>) -> BoolTensor<Profiled<B>> => bool(tensor);
        fn bool_select_or(tensor: BoolTensor<Profiled<B>>, dim: usize, indices: IntTensor<Profiled<B>>, value: BoolTensor<Profiled<B>>) -> BoolTensor<Profiled<B>> => bool(tensor);
        fn bool_repeat_dim(tensor: BoolTensor<Profiled<B>>, dim: usize, times: usize) -> BoolTensor<Profiled<B>> => bool(tensor);
        fn bool_cat(tensors: Vec<BoolTensor<Profiled<B>>>, dim: usize) -> BoolTensor<Profiled<B>> => bools(tensors);
        fn bool_equal(lhs: BoolTensor<Profiled<B>>, rhs: BoolTensor<Profiled<B>>) -> BoolTensor<Profiled<B>> => bool(lhs);
        fn bool_not_equal(lhs: BoolTensor<Profiled<B>>, rhs: BoolTensor<Profiled<B>>) -> BoolTensor<Profiled<B>> => bool(lhs);
        fn bool_equal_elem(lhs: BoolTensor<Profiled<B>>, rhs: Scalar) -> BoolTensor<Profiled<B>> => bool(lhs);
        fn bool_not_equal_elem(lhs: BoolTensor<Profiled<B>>, rhs: Scalar) -> BoolTensor<Profiled<B>> => bool(lhs);
        fn bool_not(tensor: BoolTensor<Profiled<B>>) -> BoolTensor<Profiled<B>> => bool(tensor);
        fn bool_and(lhs: BoolTensor<Profiled<B>>, rhs: BoolTensor<Profiled<B>>) -> BoolTensor<Profiled<B>> => bool(lhs);
        fn bool_or(lhs: BoolTensor<Profiled<B>>, rhs: BoolTensor<Profiled<B>>) -> BoolTensor<Profiled<B>> => bool(lhs);
        fn bool_xor(lhs: BoolTensor<Profiled<B>>, rhs: BoolTensor<Profiled<B>>) -> BoolTensor<Profiled<B>> => bool(lhs);
        fn bool_transpose(tensor: BoolTensor<Profiled<B>>) -> BoolTensor<Profiled<B>> => bool(tensor);
        fn bool_swap_dims(tensor: BoolTensor<Profiled<B>>, dim1: usize, dim2: usize) -> BoolTensor<Profiled<B>> => bool(tensor);
        fn bool_permute(tensor: BoolTensor<Profiled<B>>, axes: &[usize]) -> BoolTensor<Profiled<B>> => bool(tensor);
        fn bool_flip(tensor: BoolTensor<Profiled<B>>, axes: &[usize]) -> BoolTensor<Profiled<B>> => bool(tensor);
        fn bool_any(tensor: BoolTensor<Profiled<B>>) -> BoolTensor<Profiled<B>> => bool(tensor);
        fn bool_any_dim(tensor: BoolTensor<Profiled<B>>, dim: usize) -> BoolTensor<Profiled<B>> => bool(tensor);
        fn bool_all(tensor: BoolTensor<Profiled<B>>) -> BoolTensor<Profiled<B>> => bool(tensor);
        fn bool_all_dim(tensor: BoolTensor<Profiled<B>>, dim: usize) -> BoolTensor<Profiled<B>> => bool(tensor);
        fn bool_expand(tensor: BoolTensor<Profiled<B>>, shape: Shape) -> BoolTensor<Profiled<B>> => bool(tensor);
        fn bool_unfold(tensor: BoolTensor<Profiled<B>>, dim: usize, size: usize, step: usize) -> BoolTensor<Profiled<B>> => bool(tensor);
    }

    fn bool_argwhere(
        tensor: BoolTensor<Self>,
        out_dtype: IntDType,
    ) -> impl Future<Output = IntTensor<Self>> + 'static + Send {
        static OP: crate::probe::Op = crate::probe::Op::new("bool_argwhere\0");
        // As for reads: one flag check for the call and its await.
        let flags = crate::probe::flags();
        let device = match crate::probe::wants_device(flags) {
            false => None,
            true => crate::backend::forward::op_device!(bool(tensor)),
        };
        let argwhere = B::bool_argwhere(tensor, out_dtype);
        async move {
            let _op = crate::probe::read_op::<B>(&OP, flags, device);
            argwhere.await
        }
    }
}

impl<B: Backend> ModuleOps<Self> for Profiled<B> {
    forward! {
        fn embedding(weights: FloatTensor<Profiled<B>>, indices: IntTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(weights);
        fn embedding_backward(weights: FloatTensor<Profiled<B>>, output_grad: FloatTensor<Profiled<B>>, indices: IntTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(weights);
        fn linear(x: FloatTensor<Profiled<B>>, weight: FloatTensor<Profiled<B>>, bias: Option<FloatTensor<Profiled<B>>>) -> FloatTensor<Profiled<B>> => float(x);
        fn linear_x_backward(weight: FloatTensor<Profiled<B>>, output_grad: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(weight);
        fn linear_weight_backward(x: FloatTensor<Profiled<B>>, output_grad: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(x);
        fn linear_bias_backward(output_grad: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(output_grad);
        fn conv1d(x: FloatTensor<Profiled<B>>, weight: FloatTensor<Profiled<B>>, bias: Option<FloatTensor<Profiled<B>>>, options: ConvOptions<1>) -> FloatTensor<Profiled<B>> => float(x);
        fn conv1d_x_backward(x: FloatTensor<Profiled<B>>, weight: FloatTensor<Profiled<B>>, output_grad: FloatTensor<Profiled<B>>, options: ConvOptions<1>) -> FloatTensor<Profiled<B>> => float(x);
        fn conv1d_weight_backward(x: FloatTensor<Profiled<B>>, weight: FloatTensor<Profiled<B>>, output_grad: FloatTensor<Profiled<B>>, options: ConvOptions<1>) -> FloatTensor<Profiled<B>> => float(x);
        fn conv1d_bias_backward(x: FloatTensor<Profiled<B>>, bias: FloatTensor<Profiled<B>>, output_grad: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(x);
        fn conv2d(x: FloatTensor<Profiled<B>>, weight: FloatTensor<Profiled<B>>, bias: Option<FloatTensor<Profiled<B>>>, options: ConvOptions<2>) -> FloatTensor<Profiled<B>> => float(x);
        fn conv2d_x_backward(x: FloatTensor<Profiled<B>>, weight: FloatTensor<Profiled<B>>, output_grad: FloatTensor<Profiled<B>>, options: ConvOptions<2>) -> FloatTensor<Profiled<B>> => float(x);
        fn conv2d_weight_backward(x: FloatTensor<Profiled<B>>, weight: FloatTensor<Profiled<B>>, output_grad: FloatTensor<Profiled<B>>, options: ConvOptions<2>) -> FloatTensor<Profiled<B>> => float(x);
        fn conv2d_bias_backward(x: FloatTensor<Profiled<B>>, bias: FloatTensor<Profiled<B>>, output_grad: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(x);
        fn deform_conv2d(x: FloatTensor<Profiled<B>>, offset: FloatTensor<Profiled<B>>, weight: FloatTensor<Profiled<B>>, mask: Option<FloatTensor<Profiled<B>>>, bias: Option<FloatTensor<Profiled<B>>>, options: DeformConvOptions<2>) -> FloatTensor<Profiled<B>> => float(x);
        #[retag] fn deform_conv2d_backward(x: FloatTensor<Profiled<B>>, offset: FloatTensor<Profiled<B>>, weight: FloatTensor<Profiled<B>>, mask: Option<FloatTensor<Profiled<B>>>, bias: Option<FloatTensor<Profiled<B>>>, output_grad: FloatTensor<Profiled<B>>, options: DeformConvOptions<2>) -> DeformConv2dBackward<Profiled<B>> => float(x);
        fn conv3d(x: FloatTensor<Profiled<B>>, weight: FloatTensor<Profiled<B>>, bias: Option<FloatTensor<Profiled<B>>>, options: ConvOptions<3>) -> FloatTensor<Profiled<B>> => float(x);
        fn conv3d_x_backward(x: FloatTensor<Profiled<B>>, weight: FloatTensor<Profiled<B>>, output_grad: FloatTensor<Profiled<B>>, options: ConvOptions<3>) -> FloatTensor<Profiled<B>> => float(x);
        fn conv3d_weight_backward(x: FloatTensor<Profiled<B>>, weight: FloatTensor<Profiled<B>>, output_grad: FloatTensor<Profiled<B>>, options: ConvOptions<3>) -> FloatTensor<Profiled<B>> => float(x);
        fn conv3d_bias_backward(x: FloatTensor<Profiled<B>>, bias: FloatTensor<Profiled<B>>, output_grad: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(x);
        fn conv_transpose1d(x: FloatTensor<Profiled<B>>, weight: FloatTensor<Profiled<B>>, bias: Option<FloatTensor<Profiled<B>>>, options: ConvTransposeOptions<1>) -> FloatTensor<Profiled<B>> => float(x);
        fn conv_transpose1d_x_backward(weight: FloatTensor<Profiled<B>>, output_grad: FloatTensor<Profiled<B>>, options: ConvTransposeOptions<1>) -> FloatTensor<Profiled<B>> => float(weight);
        fn conv_transpose1d_weight_backward(x: FloatTensor<Profiled<B>>, weight: FloatTensor<Profiled<B>>, output_grad: FloatTensor<Profiled<B>>, options: ConvTransposeOptions<1>) -> FloatTensor<Profiled<B>> => float(x);
        fn conv_transpose1d_bias_backward(x: FloatTensor<Profiled<B>>, bias: FloatTensor<Profiled<B>>, output_grad: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(x);
        fn conv_transpose2d(x: FloatTensor<Profiled<B>>, weight: FloatTensor<Profiled<B>>, bias: Option<FloatTensor<Profiled<B>>>, options: ConvTransposeOptions<2>) -> FloatTensor<Profiled<B>> => float(x);
        fn conv_transpose2d_x_backward(weight: FloatTensor<Profiled<B>>, output_grad: FloatTensor<Profiled<B>>, options: ConvTransposeOptions<2>) -> FloatTensor<Profiled<B>> => float(weight);
        fn conv_transpose2d_weight_backward(x: FloatTensor<Profiled<B>>, weight: FloatTensor<Profiled<B>>, output_grad: FloatTensor<Profiled<B>>, options: ConvTransposeOptions<2>) -> FloatTensor<Profiled<B>> => float(x);
        fn conv_transpose2d_bias_backward(x: FloatTensor<Profiled<B>>, bias: FloatTensor<Profiled<B>>, output_grad: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(x);
        fn conv_transpose3d(x: FloatTensor<Profiled<B>>, weight: FloatTensor<Profiled<B>>, bias: Option<FloatTensor<Profiled<B>>>, options: ConvTransposeOptions<3>) -> FloatTensor<Profiled<B>> => float(x);
        fn conv_transpose3d_x_backward(weight: FloatTensor<Profiled<B>>, output_grad: FloatTensor<Profiled<B>>, options: ConvTransposeOptions<3>) -> FloatTensor<Profiled<B>> => float(weight);
        fn conv_transpose3d_weight_backward(x: FloatTensor<Profiled<B>>, weight: FloatTensor<Profiled<B>>, output_grad: FloatTensor<Profiled<B>>, options: ConvTransposeOptions<3>) -> FloatTensor<Profiled<B>> => float(x);
        fn conv_transpose3d_bias_backward(x: FloatTensor<Profiled<B>>, bias: FloatTensor<Profiled<B>>, output_grad: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(x);
        fn unfold4d(x: FloatTensor<Profiled<B>>, kernel_size: [usize; 2], options: UnfoldOptions) -> FloatTensor<Profiled<B>> => float(x);
        fn avg_pool1d(x: FloatTensor<Profiled<B>>, kernel_size: usize, stride: usize, padding: usize, count_include_pad: bool, ceil_mode: bool) -> FloatTensor<Profiled<B>> => float(x);
        fn avg_pool1d_backward(x: FloatTensor<Profiled<B>>, grad: FloatTensor<Profiled<B>>, kernel_size: usize, stride: usize, padding: usize, count_include_pad: bool, ceil_mode: bool) -> FloatTensor<Profiled<B>> => float(x);
        fn avg_pool2d(x: FloatTensor<Profiled<B>>, kernel_size: [usize; 2], stride: [usize; 2], padding: [usize; 2], count_include_pad: bool, ceil_mode: bool) -> FloatTensor<Profiled<B>> => float(x);
        fn avg_pool2d_backward(x: FloatTensor<Profiled<B>>, grad: FloatTensor<Profiled<B>>, kernel_size: [usize; 2], stride: [usize; 2], padding: [usize; 2], count_include_pad: bool, ceil_mode: bool) -> FloatTensor<Profiled<B>> => float(x);
        fn adaptive_avg_pool2d(x: FloatTensor<Profiled<B>>, output_size: [usize; 2]) -> FloatTensor<Profiled<B>> => float(x);
        fn adaptive_avg_pool2d_backward(x: FloatTensor<Profiled<B>>, grad: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(x);
        fn adaptive_avg_pool1d(x: FloatTensor<Profiled<B>>, output_size: usize) -> FloatTensor<Profiled<B>> => float(x);
        fn adaptive_avg_pool1d_backward(x: FloatTensor<Profiled<B>>, grad: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(x);
        fn max_pool1d(x: FloatTensor<Profiled<B>>, kernel_size: usize, stride: usize, padding: usize, dilation: usize, ceil_mode: bool) -> FloatTensor<Profiled<B>> => float(x);
        #[retag] fn max_pool1d_with_indices(x: FloatTensor<Profiled<B>>, kernel_size: usize, stride: usize, padding: usize, dilation: usize, ceil_mode: bool) -> MaxPool1dWithIndices<Profiled<B>> => float(x);
        #[retag] fn max_pool1d_with_indices_backward(x: FloatTensor<Profiled<B>>, kernel_size: usize, stride: usize, padding: usize, dilation: usize, ceil_mode: bool, output_grad: FloatTensor<Profiled<B>>, indices: IntTensor<Profiled<B>>) -> MaxPool1dBackward<Profiled<B>> => float(x);
        fn max_pool2d(x: FloatTensor<Profiled<B>>, kernel_size: [usize; 2], stride: [usize; 2], padding: [usize; 2], dilation: [usize; 2], ceil_mode: bool) -> FloatTensor<Profiled<B>> => float(x);
        #[retag] fn max_pool2d_with_indices(x: FloatTensor<Profiled<B>>, kernel_size: [usize; 2], stride: [usize; 2], padding: [usize; 2], dilation: [usize; 2], ceil_mode: bool) -> MaxPool2dWithIndices<Profiled<B>> => float(x);
        #[retag] fn max_pool2d_with_indices_backward(x: FloatTensor<Profiled<B>>, kernel_size: [usize; 2], stride: [usize; 2], padding: [usize; 2], dilation: [usize; 2], ceil_mode: bool, output_grad: FloatTensor<Profiled<B>>, indices: IntTensor<Profiled<B>>) -> MaxPool2dBackward<Profiled<B>> => float(x);
        fn interpolate(x: FloatTensor<Profiled<B>>, output_size: [usize; 2], options: InterpolateOptions) -> FloatTensor<Profiled<B>> => float(x);
        fn interpolate_backward(x: FloatTensor<Profiled<B>>, grad: FloatTensor<Profiled<B>>, output_size: [usize; 2], options: InterpolateOptions) -> FloatTensor<Profiled<B>> => float(x);
        fn attention(query: FloatTensor<Profiled<B>>, key: FloatTensor<Profiled<B>>, value: FloatTensor<Profiled<B>>, mask: Option<BoolTensor<Profiled<B>>>, attn_bias: Option<FloatTensor<Profiled<B>>>, options: AttentionModuleOptions) -> FloatTensor<Profiled<B>> => float(query);
        fn layer_norm(tensor: FloatTensor<Profiled<B>>, gamma: FloatTensor<Profiled<B>>, beta: Option<FloatTensor<Profiled<B>>>, epsilon: f64) -> FloatTensor<Profiled<B>> => float(tensor);
        fn ctc_loss(log_probs: FloatTensor<Profiled<B>>, targets: IntTensor<Profiled<B>>, input_lengths: IntTensor<Profiled<B>>, target_lengths: IntTensor<Profiled<B>>, blank: usize) -> FloatTensor<Profiled<B>> => float(log_probs);
        fn ctc_loss_backward(log_probs: FloatTensor<Profiled<B>>, targets: IntTensor<Profiled<B>>, input_lengths: IntTensor<Profiled<B>>, target_lengths: IntTensor<Profiled<B>>, grad_loss: FloatTensor<Profiled<B>>, blank: usize) -> FloatTensor<Profiled<B>> => float(log_probs);
        fn rfft(signal: FloatTensor<Profiled<B>>, dim: usize, n: Option<usize>) -> (FloatTensor<Profiled<B>>, FloatTensor<Profiled<B>>) => float(signal);
        fn irfft(spectrum_re: FloatTensor<Profiled<B>>, spectrum_im: FloatTensor<Profiled<B>>, dim: usize, n: Option<usize>) -> FloatTensor<Profiled<B>> => float(spectrum_re);
    }

    fn has_ctc_loss_backward() -> bool {
        B::has_ctc_loss_backward()
    }
}

impl<B: Backend> ActivationOps<Self> for Profiled<B> {
    forward! {
        fn leaky_relu(tensor: FloatTensor<Profiled<B>>, negative_slope: Scalar) -> FloatTensor<Profiled<B>> => float(tensor);
        fn relu(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn relu_backward(output: FloatTensor<Profiled<B>>, grad: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(output);
        fn gelu(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn prelu(tensor: FloatTensor<Profiled<B>>, alpha: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn gelu_backward(x: FloatTensor<Profiled<B>>, grad: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(x);
        fn sigmoid(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn sigmoid_backward(output: FloatTensor<Profiled<B>>, grad: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(output);
        fn hard_sigmoid(tensor: FloatTensor<Profiled<B>>, alpha: Scalar, beta: Scalar) -> FloatTensor<Profiled<B>> => float(tensor);
        fn log_sigmoid(tensor: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(tensor);
        fn softmax(tensor: FloatTensor<Profiled<B>>, dim: usize) -> FloatTensor<Profiled<B>> => float(tensor);
        fn log_softmax(tensor: FloatTensor<Profiled<B>>, dim: usize) -> FloatTensor<Profiled<B>> => float(tensor);
        fn softmin(tensor: FloatTensor<Profiled<B>>, dim: usize) -> FloatTensor<Profiled<B>> => float(tensor);
        fn log_sigmoid_backward(x: FloatTensor<Profiled<B>>, grad: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(x);
    }
}

impl<B: Backend> QTensorOps<Self> for Profiled<B> {
    forward! { @no_replay
        fn q_from_data(data: TensorData, device: &Device<Profiled<B>>) -> QuantizedTensor<Profiled<B>> => device(device);
        fn quantize_dynamic(tensor: FloatTensor<Profiled<B>>, scheme: &QuantScheme) -> QuantizedTensor<Profiled<B>> => float(tensor);
        fn dequantize(tensor: QuantizedTensor<Profiled<B>>, dtype: FloatDType) -> FloatTensor<Profiled<B>> => q(tensor);
        #[query] fn q_device(tensor: &QuantizedTensor<Profiled<B>>) -> Device<Profiled<B>> => q(tensor);
        fn q_to_device(tensor: QuantizedTensor<Profiled<B>>, device: &Device<Profiled<B>>) -> QuantizedTensor<Profiled<B>> => q(tensor);
        fn q_reshape(tensor: QuantizedTensor<Profiled<B>>, shape: Shape) -> QuantizedTensor<Profiled<B>> => q(tensor);
        #[read] fn q_into_data(tensor: QuantizedTensor<Profiled<B>>) -> Result<TensorData, ExecutionError> => q(tensor);
        fn q_detach(tensor: QuantizedTensor<Profiled<B>>) -> QuantizedTensor<Profiled<B>> => q(tensor);
        fn q_set_require_grad(tensor: QuantizedTensor<Profiled<B>>, require_grad: bool) -> QuantizedTensor<Profiled<B>> => q(tensor);
        fn q_is_require_grad(tensor: &QuantizedTensor<Profiled<B>>) -> bool => q(tensor);
        fn q_expand(tensor: QuantizedTensor<Profiled<B>>, shape: Shape) -> QuantizedTensor<Profiled<B>> => q(tensor);
        fn q_transpose(tensor: QuantizedTensor<Profiled<B>>) -> QuantizedTensor<Profiled<B>> => q(tensor);
        fn q_swap_dims(tensor: QuantizedTensor<Profiled<B>>, dim1: usize, dim2: usize) -> QuantizedTensor<Profiled<B>> => q(tensor);
        fn q_permute(tensor: QuantizedTensor<Profiled<B>>, axes: &[usize]) -> QuantizedTensor<Profiled<B>> => q(tensor);
        fn q_flip(tensor: QuantizedTensor<Profiled<B>>, axes: &[usize]) -> QuantizedTensor<Profiled<B>> => q(tensor);
        fn q_select(tensor: QuantizedTensor<Profiled<B>>, dim: usize, indices: IntTensor<Profiled<B>>) -> QuantizedTensor<Profiled<B>> => q(tensor);
        fn q_slice(tensor: QuantizedTensor<Profiled<B>>, slices: &[Slice]) -> QuantizedTensor<Profiled<B>> => q(tensor);
        fn q_gather(dim: usize, tensor: QuantizedTensor<Profiled<B>>, indices: IntTensor<Profiled<B>>) -> QuantizedTensor<Profiled<B>> => q(tensor);
        fn q_repeat_dim(tensor: QuantizedTensor<Profiled<B>>, dim: usize, times: usize) -> QuantizedTensor<Profiled<B>> => q(tensor);
        #[retag] fn q_add(lhs: QuantizedTensor<Profiled<B>>, rhs: QuantizedTensor<Profiled<B>>) -> TensorPrimitive<Profiled<B>> => q(lhs);
        #[retag] fn q_add_scalar(lhs: QuantizedTensor<Profiled<B>>, rhs: Scalar) -> TensorPrimitive<Profiled<B>> => q(lhs);
        #[retag] fn q_clamp_min(tensor: QuantizedTensor<Profiled<B>>, min: Scalar) -> TensorPrimitive<Profiled<B>> => q(tensor);
        #[retag] fn q_clamp_max(tensor: QuantizedTensor<Profiled<B>>, max: Scalar) -> TensorPrimitive<Profiled<B>> => q(tensor);
        #[retag] fn q_clamp(tensor: QuantizedTensor<Profiled<B>>, min: Scalar, max: Scalar) -> TensorPrimitive<Profiled<B>> => q(tensor);
        #[retag] fn q_sub(lhs: QuantizedTensor<Profiled<B>>, rhs: QuantizedTensor<Profiled<B>>) -> TensorPrimitive<Profiled<B>> => q(lhs);
        #[retag] fn q_sub_scalar(lhs: QuantizedTensor<Profiled<B>>, rhs: Scalar) -> TensorPrimitive<Profiled<B>> => q(lhs);
        #[retag] fn q_mul(lhs: QuantizedTensor<Profiled<B>>, rhs: QuantizedTensor<Profiled<B>>) -> TensorPrimitive<Profiled<B>> => q(lhs);
        #[retag] fn q_mul_scalar(lhs: QuantizedTensor<Profiled<B>>, rhs: Scalar) -> TensorPrimitive<Profiled<B>> => q(lhs);
        #[retag] fn q_div(lhs: QuantizedTensor<Profiled<B>>, rhs: QuantizedTensor<Profiled<B>>) -> TensorPrimitive<Profiled<B>> => q(lhs);
        #[retag] fn q_div_scalar(lhs: QuantizedTensor<Profiled<B>>, rhs: Scalar) -> TensorPrimitive<Profiled<B>> => q(lhs);
        #[retag] fn q_neg(tensor: QuantizedTensor<Profiled<B>>) -> TensorPrimitive<Profiled<B>> => q(tensor);
        #[retag] fn q_recip(tensor: QuantizedTensor<Profiled<B>>) -> TensorPrimitive<Profiled<B>> => q(tensor);
        #[retag] fn q_sum(tensor: QuantizedTensor<Profiled<B>>) -> TensorPrimitive<Profiled<B>> => q(tensor);
        #[retag] fn q_sum_dim(tensor: QuantizedTensor<Profiled<B>>, dim: usize) -> TensorPrimitive<Profiled<B>> => q(tensor);
        #[retag] fn q_prod(tensor: QuantizedTensor<Profiled<B>>) -> TensorPrimitive<Profiled<B>> => q(tensor);
        #[retag] fn q_prod_dim(tensor: QuantizedTensor<Profiled<B>>, dim: usize) -> TensorPrimitive<Profiled<B>> => q(tensor);
        #[retag] fn q_mean(tensor: QuantizedTensor<Profiled<B>>) -> TensorPrimitive<Profiled<B>> => q(tensor);
        #[retag] fn q_mean_dim(tensor: QuantizedTensor<Profiled<B>>, dim: usize) -> TensorPrimitive<Profiled<B>> => q(tensor);
        #[retag] fn q_cumsum(tensor: QuantizedTensor<Profiled<B>>, dim: usize) -> TensorPrimitive<Profiled<B>> => q(tensor);
        #[retag] fn q_cumprod(tensor: QuantizedTensor<Profiled<B>>, dim: usize) -> TensorPrimitive<Profiled<B>> => q(tensor);
        #[retag] fn q_cummin(tensor: QuantizedTensor<Profiled<B>>, dim: usize) -> TensorPrimitive<Profiled<B>> => q(tensor);
        #[retag] fn q_cummax(tensor: QuantizedTensor<Profiled<B>>, dim: usize) -> TensorPrimitive<Profiled<B>> => q(tensor);
        #[retag] fn q_exp(tensor: QuantizedTensor<Profiled<B>>) -> TensorPrimitive<Profiled<B>> => q(tensor);
        #[retag] fn q_log(tensor: QuantizedTensor<Profiled<B>>) -> TensorPrimitive<Profiled<B>> => q(tensor);
        #[retag] fn q_log1p(tensor: QuantizedTensor<Profiled<B>>) -> TensorPrimitive<Profiled<B>> => q(tensor);
        #[retag] fn q_powf(lhs: QuantizedTensor<Profiled<B>>, rhs: QuantizedTensor<Profiled<B>>) -> TensorPrimitive<Profiled<B>> => q(lhs);
        #[retag] fn q_powi(lhs: QuantizedTensor<Profiled<B>>, rhs: IntTensor<Profiled<B>>) -> TensorPrimitive<Profiled<B>> => q(lhs);
        #[retag] fn q_powi_scalar(lhs: QuantizedTensor<Profiled<B>>, rhs: Scalar) -> TensorPrimitive<Profiled<B>> => q(lhs);
        #[retag] fn q_powf_scalar(tensor: QuantizedTensor<Profiled<B>>, value: Scalar) -> TensorPrimitive<Profiled<B>> => q(tensor);
        #[retag] fn q_sqrt(tensor: QuantizedTensor<Profiled<B>>) -> TensorPrimitive<Profiled<B>> => q(tensor);
        fn q_abs(tensor: QuantizedTensor<Profiled<B>>) -> QuantizedTensor<Profiled<B>> => q(tensor);
        #[retag] fn q_cos(tensor: QuantizedTensor<Profiled<B>>) -> TensorPrimitive<Profiled<B>> => q(tensor);
        #[retag] fn q_sin(tensor: QuantizedTensor<Profiled<B>>) -> TensorPrimitive<Profiled<B>> => q(tensor);
        #[retag] fn q_tan(tensor: QuantizedTensor<Profiled<B>>) -> TensorPrimitive<Profiled<B>> => q(tensor);
        #[retag] fn q_cosh(tensor: QuantizedTensor<Profiled<B>>) -> TensorPrimitive<Profiled<B>> => q(tensor);
        #[retag] fn q_sinh(tensor: QuantizedTensor<Profiled<B>>) -> TensorPrimitive<Profiled<B>> => q(tensor);
        #[retag] fn q_tanh(tensor: QuantizedTensor<Profiled<B>>) -> TensorPrimitive<Profiled<B>> => q(tensor);
        #[retag] fn q_erf(tensor: QuantizedTensor<Profiled<B>>) -> TensorPrimitive<Profiled<B>> => q(tensor);
        fn q_cat(tensors: Vec<QuantizedTensor<Profiled<B>>>, dim: usize) -> QuantizedTensor<Profiled<B>> => qs(tensors);
        fn q_argmax(tensor: QuantizedTensor<Profiled<B>>, dim: usize, out_dtype: IntDType) -> IntTensor<Profiled<B>> => q(tensor);
        fn q_argtopk(tensor: QuantizedTensor<Profiled<B>>, dim: usize, k: usize, out_dtype: IntDType) -> IntTensor<Profiled<B>> => q(tensor);
        fn q_topk(tensor: QuantizedTensor<Profiled<B>>, dim: usize, k: usize) -> QuantizedTensor<Profiled<B>> => q(tensor);
        fn q_argmin(tensor: QuantizedTensor<Profiled<B>>, dim: usize, out_dtype: IntDType) -> IntTensor<Profiled<B>> => q(tensor);
        fn q_max(tensor: QuantizedTensor<Profiled<B>>) -> QuantizedTensor<Profiled<B>> => q(tensor);
        fn q_max_dim(tensor: QuantizedTensor<Profiled<B>>, dim: usize) -> QuantizedTensor<Profiled<B>> => q(tensor);
        fn q_max_dim_with_indices(tensor: QuantizedTensor<Profiled<B>>, dim: usize, out_dtype: IntDType) -> (QuantizedTensor<Profiled<B>>, IntTensor<Profiled<B>>) => q(tensor);
        fn q_min(tensor: QuantizedTensor<Profiled<B>>) -> QuantizedTensor<Profiled<B>> => q(tensor);
        fn q_min_dim(tensor: QuantizedTensor<Profiled<B>>, dim: usize) -> QuantizedTensor<Profiled<B>> => q(tensor);
        fn q_min_dim_with_indices(tensor: QuantizedTensor<Profiled<B>>, dim: usize, out_dtype: IntDType) -> (QuantizedTensor<Profiled<B>>, IntTensor<Profiled<B>>) => q(tensor);
        fn q_max_abs(tensor: QuantizedTensor<Profiled<B>>) -> QuantizedTensor<Profiled<B>> => q(tensor);
        fn q_max_abs_dim(tensor: QuantizedTensor<Profiled<B>>, dim: usize) -> QuantizedTensor<Profiled<B>> => q(tensor);
        fn q_any(tensor: QuantizedTensor<Profiled<B>>, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => q(tensor);
        fn q_any_dim(tensor: QuantizedTensor<Profiled<B>>, dim: usize, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => q(tensor);
        fn q_all(tensor: QuantizedTensor<Profiled<B>>, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => q(tensor);
        fn q_all_dim(tensor: QuantizedTensor<Profiled<B>>, dim: usize, out_dtype: BoolDType) -> BoolTensor<Profiled<B>> => q(tensor);
        fn q_sort(tensor: QuantizedTensor<Profiled<B>>, dim: usize, descending: bool) -> QuantizedTensor<Profiled<B>> => q(tensor);
        fn q_sort_with_indices(tensor: QuantizedTensor<Profiled<B>>, dim: usize, descending: bool, out_dtype: IntDType) -> (QuantizedTensor<Profiled<B>>, IntTensor<Profiled<B>>) => q(tensor);
        fn q_argsort(tensor: QuantizedTensor<Profiled<B>>, dim: usize, descending: bool, out_dtype: IntDType) -> IntTensor<Profiled<B>> => q(tensor);
    }

    fn quantize(
        tensor: FloatTensor<Self>,
        scheme: &QuantScheme,
        qparams: QuantizationParametersPrimitive<Self>,
    ) -> QuantizedTensor<Self> {
        static OP: crate::probe::Op = crate::probe::Op::new("quantize\0");
        let _op = crate::probe::probe!(&OP, B, || Some(B::float_device(&tensor)), Vec::new);
        B::quantize(tensor, scheme, qparams.retag())
    }

    fn q_matmul(lhs: TensorPrimitive<Self>, rhs: TensorPrimitive<Self>) -> TensorPrimitive<Self> {
        static OP: crate::probe::Op = crate::probe::Op::new("q_matmul\0");
        let _op = crate::probe::probe!(
            &OP,
            B,
            || {
                Some(match &lhs {
                    TensorPrimitive::Float(t) => B::float_device(t),
                    TensorPrimitive::QFloat(t) => B::q_device(t),
                })
            },
            Vec::new,
        );
        B::q_matmul(lhs.retag(), rhs.retag()).retag()
    }
}

impl<B: Backend> TransactionOps<Self> for Profiled<B> {
    fn tr_execute(
        transaction: TransactionPrimitive<Self>,
    ) -> impl Future<Output = Result<TransactionPrimitiveData, ExecutionError>> + Send {
        static OP: crate::probe::Op = crate::probe::Op::new("tr_execute\0");
        // `TransactionPrimitive::execute_async` has already taken the read order out, so the
        // four public lists are the whole transaction.
        let TransactionPrimitive {
            read_floats,
            read_qfloats,
            read_ints,
            read_bools,
            ..
        } = transaction;
        // As for reads: one flag check for the call and its await; the device of the first
        // tensor read.
        let flags = crate::probe::flags();
        crate::probe::caller_waits(flags);
        let device = crate::probe::wants_device(flags)
            .then(|| {
                use crate::backend::forward::op_device;
                op_device!(floats(read_floats))
                    .or_else(|| op_device!(qs(read_qfloats)))
                    .or_else(|| op_device!(ints(read_ints)))
                    .or_else(|| op_device!(bools(read_bools)))
            })
            .flatten();
        let execute = B::tr_execute(TransactionPrimitive::new(
            read_floats,
            read_qfloats,
            read_ints,
            read_bools,
        ));
        async move {
            let _op = crate::probe::read_op::<B>(&OP, flags, device);
            execute.await
        }
    }
}
