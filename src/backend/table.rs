//! The forwarding table: every method of Burn 0.21's op traits, forwarded to `B`.
//!
//! The signatures are Burn's own (`burn-backend` 0.21.0, `src/backend/ops/`), with `Self` for the
//! backend; `scripts/list-backend-ops.py` prints them from the Burn sources for a diff on a Burn
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
        fn float_from_data(data: TensorData, device: &Device<Self>) -> FloatTensor<Self> => device(device);
        fn float_random(shape: Shape, distribution: Distribution, device: &Device<Self>, dtype: FloatDType) -> FloatTensor<Self> => device(device);
        fn float_zeros(shape: Shape, device: &Device<Self>, dtype: FloatDType) -> FloatTensor<Self> => device(device);
        fn float_ones(shape: Shape, device: &Device<Self>, dtype: FloatDType) -> FloatTensor<Self> => device(device);
        fn float_full(shape: Shape, fill_value: Scalar, device: &Device<Self>, dtype: FloatDType) -> FloatTensor<Self> => device(device);
        #[read] fn float_into_data(tensor: FloatTensor<Self>) -> Result<TensorData, ExecutionError> => none;
        fn float_device(tensor: &FloatTensor<Self>) -> Device<Self> => float(tensor);
        fn float_to_device(tensor: FloatTensor<Self>, device: &Device<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_into_int(tensor: FloatTensor<Self>, out_dtype: IntDType) -> IntTensor<Self> => float(tensor);
        fn float_empty(shape: Shape, device: &Device<Self>, dtype: FloatDType) -> FloatTensor<Self> => device(device);
        fn float_repeat_dim(tensor: FloatTensor<Self>, dim: usize, times: usize) -> FloatTensor<Self> => float(tensor);
        fn float_add(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> => float(lhs);
        fn float_add_scalar(lhs: FloatTensor<Self>, rhs: Scalar) -> FloatTensor<Self> => float(lhs);
        fn float_clamp_min(tensor: FloatTensor<Self>, min: Scalar) -> FloatTensor<Self> => float(tensor);
        fn float_clamp_max(tensor: FloatTensor<Self>, max: Scalar) -> FloatTensor<Self> => float(tensor);
        fn float_clamp(tensor: FloatTensor<Self>, min: Scalar, max: Scalar) -> FloatTensor<Self> => float(tensor);
        fn float_sub(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> => float(lhs);
        fn float_sub_scalar(lhs: FloatTensor<Self>, rhs: Scalar) -> FloatTensor<Self> => float(lhs);
        fn float_mul(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> => float(lhs);
        fn float_mul_scalar(lhs: FloatTensor<Self>, rhs: Scalar) -> FloatTensor<Self> => float(lhs);
        fn float_div(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> => float(lhs);
        fn float_div_scalar(lhs: FloatTensor<Self>, rhs: Scalar) -> FloatTensor<Self> => float(lhs);
        fn float_remainder(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> => float(lhs);
        fn float_remainder_scalar(lhs: FloatTensor<Self>, rhs: Scalar) -> FloatTensor<Self> => float(lhs);
        fn float_matmul(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> => float(lhs);
        fn float_cross(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> => float(lhs);
        fn float_neg(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_recip(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_transpose(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_swap_dims(tensor: FloatTensor<Self>, dim1: usize, dim2: usize) -> FloatTensor<Self> => float(tensor);
        fn float_permute(tensor: FloatTensor<Self>, axes: &[usize]) -> FloatTensor<Self> => float(tensor);
        fn float_flip(tensor: FloatTensor<Self>, axes: &[usize]) -> FloatTensor<Self> => float(tensor);
        fn float_reshape(tensor: FloatTensor<Self>, shape: Shape) -> FloatTensor<Self> => float(tensor);
        fn float_gather(dim: usize, tensor: FloatTensor<Self>, indices: IntTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_scatter_add(dim: usize, tensor: FloatTensor<Self>, indices: IntTensor<Self>, value: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_scatter_nd(data: FloatTensor<Self>, indices: IntTensor<Self>, values: FloatTensor<Self>, reduction: IndexingUpdateOp) -> FloatTensor<Self> => float(data);
        fn float_gather_nd(data: FloatTensor<Self>, indices: IntTensor<Self>) -> FloatTensor<Self> => float(data);
        fn float_select(tensor: FloatTensor<Self>, dim: usize, indices: IntTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_select_add(tensor: FloatTensor<Self>, dim: usize, indices: IntTensor<Self>, value: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_slice(tensor: FloatTensor<Self>, slices: &[Slice]) -> FloatTensor<Self> => float(tensor);
        fn float_slice_assign(tensor: FloatTensor<Self>, slices: &[Slice], value: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_mask_where(tensor: FloatTensor<Self>, mask: BoolTensor<Self>, value: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_mask_fill(tensor: FloatTensor<Self>, mask: BoolTensor<Self>, value: Scalar) -> FloatTensor<Self> => float(tensor);
        fn float_equal(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>, out_dtype: BoolDType) -> BoolTensor<Self> => float(lhs);
        fn float_not_equal(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>, out_dtype: BoolDType) -> BoolTensor<Self> => float(lhs);
        fn float_equal_elem(lhs: FloatTensor<Self>, rhs: Scalar, out_dtype: BoolDType) -> BoolTensor<Self> => float(lhs);
        fn float_not_equal_elem(lhs: FloatTensor<Self>, rhs: Scalar, out_dtype: BoolDType) -> BoolTensor<Self> => float(lhs);
        fn float_greater(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>, out_dtype: BoolDType) -> BoolTensor<Self> => float(lhs);
        fn float_greater_elem(lhs: FloatTensor<Self>, rhs: Scalar, out_dtype: BoolDType) -> BoolTensor<Self> => float(lhs);
        fn float_greater_equal(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>, out_dtype: BoolDType) -> BoolTensor<Self> => float(lhs);
        fn float_greater_equal_elem(lhs: FloatTensor<Self>, rhs: Scalar, out_dtype: BoolDType) -> BoolTensor<Self> => float(lhs);
        fn float_lower(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>, out_dtype: BoolDType) -> BoolTensor<Self> => float(lhs);
        fn float_lower_elem(lhs: FloatTensor<Self>, rhs: Scalar, out_dtype: BoolDType) -> BoolTensor<Self> => float(lhs);
        fn float_lower_equal(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>, out_dtype: BoolDType) -> BoolTensor<Self> => float(lhs);
        fn float_lower_equal_elem(lhs: FloatTensor<Self>, rhs: Scalar, out_dtype: BoolDType) -> BoolTensor<Self> => float(lhs);
        fn float_detach(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_set_require_grad(tensor: FloatTensor<Self>, require_grad: bool) -> FloatTensor<Self> => float(tensor);
        fn float_is_require_grad(tensor: &FloatTensor<Self>) -> bool => float(tensor);
        fn float_sum(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_sum_dim(tensor: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> => float(tensor);
        fn float_prod(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_prod_dim(tensor: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> => float(tensor);
        fn float_mean(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_mean_dim(tensor: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> => float(tensor);
        fn float_cumsum(tensor: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> => float(tensor);
        fn float_cumprod(tensor: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> => float(tensor);
        fn float_cummin(tensor: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> => float(tensor);
        fn float_cummax(tensor: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> => float(tensor);
        fn float_cast(tensor: FloatTensor<Self>, dtype: FloatDType) -> FloatTensor<Self> => float(tensor);
        fn float_exp(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_log(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_log1p(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_powf(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> => float(lhs);
        fn float_powi(lhs: FloatTensor<Self>, rhs: IntTensor<Self>) -> FloatTensor<Self> => float(lhs);
        fn float_powi_scalar(lhs: FloatTensor<Self>, rhs: Scalar) -> FloatTensor<Self> => float(lhs);
        fn float_powi_scalar_impl(lhs: FloatTensor<Self>, rhs: Scalar) -> FloatTensor<Self> => float(lhs);
        fn float_powf_scalar(tensor: FloatTensor<Self>, value: Scalar) -> FloatTensor<Self> => float(tensor);
        fn float_powf_scalar_impl(tensor: FloatTensor<Self>, value: Scalar) -> FloatTensor<Self> => float(tensor);
        fn float_sqrt(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_abs(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_cos(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_sin(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_tan(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_cosh(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_sinh(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_tanh(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_acos(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_acosh(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_asin(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_asinh(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_atan(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_atanh(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_atan2(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> => float(lhs);
        fn float_round(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_floor(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_ceil(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_trunc(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_erf(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_cat(tensors: Vec<FloatTensor<Self>>, dim: usize) -> FloatTensor<Self> => floats(tensors);
        fn float_argmax(tensor: FloatTensor<Self>, dim: usize, out_dtype: IntDType) -> IntTensor<Self> => float(tensor);
        fn float_argtopk(tensor: FloatTensor<Self>, dim: usize, k: usize, out_dtype: IntDType) -> IntTensor<Self> => float(tensor);
        fn float_topk(tensor: FloatTensor<Self>, dim: usize, k: usize) -> FloatTensor<Self> => float(tensor);
        fn float_argmin(tensor: FloatTensor<Self>, dim: usize, out_dtype: IntDType) -> IntTensor<Self> => float(tensor);
        fn float_max(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_max_dim(tensor: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> => float(tensor);
        fn float_max_dim_with_indices(tensor: FloatTensor<Self>, dim: usize, indices_dtype: IntDType) -> (FloatTensor<Self>, IntTensor<Self>) => float(tensor);
        fn float_min(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_min_dim(tensor: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> => float(tensor);
        fn float_min_dim_with_indices(tensor: FloatTensor<Self>, dim: usize, indices_dtype: IntDType) -> (FloatTensor<Self>, IntTensor<Self>) => float(tensor);
        fn float_max_abs(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_max_abs_dim(tensor: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> => float(tensor);
        fn float_any(tensor: FloatTensor<Self>, out_dtype: BoolDType) -> BoolTensor<Self> => float(tensor);
        fn float_any_dim(tensor: FloatTensor<Self>, dim: usize, out_dtype: BoolDType) -> BoolTensor<Self> => float(tensor);
        fn float_all(tensor: FloatTensor<Self>, out_dtype: BoolDType) -> BoolTensor<Self> => float(tensor);
        fn float_all_dim(tensor: FloatTensor<Self>, dim: usize, out_dtype: BoolDType) -> BoolTensor<Self> => float(tensor);
        fn float_sign(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn float_expand(tensor: FloatTensor<Self>, shape: Shape) -> FloatTensor<Self> => float(tensor);
        fn float_sort(tensor: FloatTensor<Self>, dim: usize, descending: bool) -> FloatTensor<Self> => float(tensor);
        fn float_sort_with_indices(tensor: FloatTensor<Self>, dim: usize, descending: bool, indices_dtype: IntDType) -> (FloatTensor<Self>, IntTensor<Self>) => float(tensor);
        fn float_argsort(tensor: FloatTensor<Self>, dim: usize, descending: bool, out_dtype: IntDType) -> IntTensor<Self> => float(tensor);
        fn float_grid_sample_2d(tensor: FloatTensor<Self>, grid: FloatTensor<Self>, options: GridSampleOptions) -> FloatTensor<Self> => float(tensor);
        fn float_unfold(tensor: FloatTensor<Self>, dim: usize, size: usize, step: usize) -> FloatTensor<Self> => float(tensor);
        fn float_is_nan(tensor: FloatTensor<Self>, out_dtype: BoolDType) -> BoolTensor<Self> => float(tensor);
        fn float_is_inf(tensor: FloatTensor<Self>, out_dtype: BoolDType) -> BoolTensor<Self> => float(tensor);
    }
}

impl<B: Backend> IntTensorOps<Self> for Profiled<B> {
    forward! {
        fn int_empty(shape: Shape, device: &Device<Self>, dtype: IntDType) -> IntTensor<Self> => device(device);
        #[read] fn int_into_data(tensor: IntTensor<Self>) -> Result<TensorData, ExecutionError> => none;
        fn int_from_data(data: TensorData, device: &Device<Self>) -> IntTensor<Self> => device(device);
        fn int_device(tensor: &IntTensor<Self>) -> Device<Self> => int(tensor);
        fn int_to_device(tensor: IntTensor<Self>, device: &Device<Self>) -> IntTensor<Self> => int(tensor);
        fn int_reshape(tensor: IntTensor<Self>, shape: Shape) -> IntTensor<Self> => int(tensor);
        fn int_slice(tensor: IntTensor<Self>, slices: &[Slice]) -> IntTensor<Self> => int(tensor);
        fn int_slice_assign(tensor: IntTensor<Self>, slices: &[Slice], value: IntTensor<Self>) -> IntTensor<Self> => int(tensor);
        fn int_into_float(tensor: IntTensor<Self>, out_dtype: FloatDType) -> FloatTensor<Self> => int(tensor);
        fn int_mask_where(tensor: IntTensor<Self>, mask: BoolTensor<Self>, value: IntTensor<Self>) -> IntTensor<Self> => int(tensor);
        fn int_mask_fill(tensor: IntTensor<Self>, mask: BoolTensor<Self>, value: Scalar) -> IntTensor<Self> => int(tensor);
        fn int_gather(dim: usize, tensor: IntTensor<Self>, indices: IntTensor<Self>) -> IntTensor<Self> => int(tensor);
        fn int_scatter_add(dim: usize, tensor: IntTensor<Self>, indices: IntTensor<Self>, value: IntTensor<Self>) -> IntTensor<Self> => int(tensor);
        fn int_scatter_nd(data: IntTensor<Self>, indices: IntTensor<Self>, values: IntTensor<Self>, reduction: IndexingUpdateOp) -> IntTensor<Self> => int(data);
        fn int_gather_nd(data: IntTensor<Self>, indices: IntTensor<Self>) -> IntTensor<Self> => int(data);
        fn int_select(tensor: IntTensor<Self>, dim: usize, indices: IntTensor<Self>) -> IntTensor<Self> => int(tensor);
        fn int_select_add(tensor: IntTensor<Self>, dim: usize, indices: IntTensor<Self>, value: IntTensor<Self>) -> IntTensor<Self> => int(tensor);
        fn int_repeat_dim(tensor: IntTensor<Self>, dim: usize, times: usize) -> IntTensor<Self> => int(tensor);
        fn int_cat(tensors: Vec<IntTensor<Self>>, dim: usize) -> IntTensor<Self> => ints(tensors);
        fn int_equal(lhs: IntTensor<Self>, rhs: IntTensor<Self>, out_dtype: BoolDType) -> BoolTensor<Self> => int(lhs);
        fn int_not_equal(lhs: IntTensor<Self>, rhs: IntTensor<Self>, out_dtype: BoolDType) -> BoolTensor<Self> => int(lhs);
        fn int_equal_elem(lhs: IntTensor<Self>, rhs: Scalar, out_dtype: BoolDType) -> BoolTensor<Self> => int(lhs);
        fn int_not_equal_elem(lhs: IntTensor<Self>, rhs: Scalar, out_dtype: BoolDType) -> BoolTensor<Self> => int(lhs);
        fn int_greater(lhs: IntTensor<Self>, rhs: IntTensor<Self>, out_dtype: BoolDType) -> BoolTensor<Self> => int(lhs);
        fn int_greater_elem(lhs: IntTensor<Self>, rhs: Scalar, out_dtype: BoolDType) -> BoolTensor<Self> => int(lhs);
        fn int_greater_equal(lhs: IntTensor<Self>, rhs: IntTensor<Self>, out_dtype: BoolDType) -> BoolTensor<Self> => int(lhs);
        fn int_greater_equal_elem(lhs: IntTensor<Self>, rhs: Scalar, out_dtype: BoolDType) -> BoolTensor<Self> => int(lhs);
        fn int_lower(lhs: IntTensor<Self>, rhs: IntTensor<Self>, out_dtype: BoolDType) -> BoolTensor<Self> => int(lhs);
        fn int_lower_elem(lhs: IntTensor<Self>, rhs: Scalar, out_dtype: BoolDType) -> BoolTensor<Self> => int(lhs);
        fn int_lower_equal(lhs: IntTensor<Self>, rhs: IntTensor<Self>, out_dtype: BoolDType) -> BoolTensor<Self> => int(lhs);
        fn int_lower_equal_elem(lhs: IntTensor<Self>, rhs: Scalar, out_dtype: BoolDType) -> BoolTensor<Self> => int(lhs);
        fn int_add(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> => int(lhs);
        fn int_add_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> => int(lhs);
        fn int_powi(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> => int(lhs);
        fn int_powi_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> => int(lhs);
        fn int_powi_scalar_impl(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> => int(lhs);
        fn int_clamp_min(tensor: IntTensor<Self>, min: Scalar) -> IntTensor<Self> => int(tensor);
        fn int_clamp_max(tensor: IntTensor<Self>, max: Scalar) -> IntTensor<Self> => int(tensor);
        fn int_clamp(tensor: IntTensor<Self>, min: Scalar, max: Scalar) -> IntTensor<Self> => int(tensor);
        fn int_sub(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> => int(lhs);
        fn int_sub_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> => int(lhs);
        fn int_mul(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> => int(lhs);
        fn int_mul_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> => int(lhs);
        fn int_div(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> => int(lhs);
        fn int_div_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> => int(lhs);
        fn int_remainder(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> => int(lhs);
        fn int_remainder_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> => int(lhs);
        fn int_matmul(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> => int(lhs);
        fn int_neg(tensor: IntTensor<Self>) -> IntTensor<Self> => int(tensor);
        fn int_zeros(shape: Shape, device: &Device<Self>, dtype: IntDType) -> IntTensor<Self> => device(device);
        fn int_ones(shape: Shape, device: &Device<Self>, dtype: IntDType) -> IntTensor<Self> => device(device);
        fn int_full(shape: Shape, fill_value: Scalar, device: &Device<Self>, dtype: IntDType) -> IntTensor<Self> => device(device);
        fn int_sum(tensor: IntTensor<Self>) -> IntTensor<Self> => int(tensor);
        fn int_sum_dim(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> => int(tensor);
        fn int_prod(tensor: IntTensor<Self>) -> IntTensor<Self> => int(tensor);
        fn int_prod_dim(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> => int(tensor);
        fn int_mean(tensor: IntTensor<Self>) -> IntTensor<Self> => int(tensor);
        fn int_mean_dim(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> => int(tensor);
        fn int_cumsum(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> => int(tensor);
        fn int_cumprod(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> => int(tensor);
        fn int_cummin(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> => int(tensor);
        fn int_cummax(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> => int(tensor);
        fn int_argmax(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> => int(tensor);
        fn int_argtopk(tensor: IntTensor<Self>, dim: usize, k: usize) -> IntTensor<Self> => int(tensor);
        fn int_topk(tensor: IntTensor<Self>, dim: usize, k: usize) -> IntTensor<Self> => int(tensor);
        fn int_argmin(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> => int(tensor);
        fn int_max(tensor: IntTensor<Self>) -> IntTensor<Self> => int(tensor);
        fn int_max_dim(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> => int(tensor);
        fn int_max_dim_with_indices(tensor: IntTensor<Self>, dim: usize) -> (IntTensor<Self>, IntTensor<Self>) => int(tensor);
        fn int_max_abs(tensor: IntTensor<Self>) -> IntTensor<Self> => int(tensor);
        fn int_max_abs_dim(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> => int(tensor);
        fn int_min(tensor: IntTensor<Self>) -> IntTensor<Self> => int(tensor);
        fn int_min_dim(tensor: IntTensor<Self>, dim: usize) -> IntTensor<Self> => int(tensor);
        fn int_min_dim_with_indices(tensor: IntTensor<Self>, dim: usize) -> (IntTensor<Self>, IntTensor<Self>) => int(tensor);
        fn int_abs(tensor: IntTensor<Self>) -> IntTensor<Self> => int(tensor);
        fn int_transpose(tensor: IntTensor<Self>) -> IntTensor<Self> => int(tensor);
        fn int_swap_dims(tensor: IntTensor<Self>, dim1: usize, dim2: usize) -> IntTensor<Self> => int(tensor);
        fn int_permute(tensor: IntTensor<Self>, axes: &[usize]) -> IntTensor<Self> => int(tensor);
        fn int_flip(tensor: IntTensor<Self>, axes: &[usize]) -> IntTensor<Self> => int(tensor);
        fn int_random(shape: Shape, distribution: Distribution, device: &Device<Self>, dtype: IntDType) -> IntTensor<Self> => device(device);
        fn int_arange_step(range: Range<i64>, step: usize, device: &Device<Self>, dtype: IntDType) -> IntTensor<Self> => device(device);
        fn int_arange(range: Range<i64>, device: &Device<Self>, dtype: IntDType) -> IntTensor<Self> => device(device);
        fn int_any(tensor: IntTensor<Self>, out_dtype: BoolDType) -> BoolTensor<Self> => int(tensor);
        fn int_any_dim(tensor: IntTensor<Self>, dim: usize, out_dtype: BoolDType) -> BoolTensor<Self> => int(tensor);
        fn int_all(tensor: IntTensor<Self>, out_dtype: BoolDType) -> BoolTensor<Self> => int(tensor);
        fn int_all_dim(tensor: IntTensor<Self>, dim: usize, out_dtype: BoolDType) -> BoolTensor<Self> => int(tensor);
        fn int_sign(tensor: IntTensor<Self>) -> IntTensor<Self> => int(tensor);
        fn int_expand(tensor: IntTensor<Self>, shape: Shape) -> IntTensor<Self> => int(tensor);
        fn int_sort(tensor: IntTensor<Self>, dim: usize, descending: bool) -> IntTensor<Self> => int(tensor);
        fn int_sort_with_indices(tensor: IntTensor<Self>, dim: usize, descending: bool) -> (IntTensor<Self>, IntTensor<Self>) => int(tensor);
        fn int_argsort(tensor: IntTensor<Self>, dim: usize, descending: bool) -> IntTensor<Self> => int(tensor);
        fn bitwise_and(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> => int(lhs);
        fn bitwise_and_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> => int(lhs);
        fn bitwise_or(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> => int(lhs);
        fn bitwise_or_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> => int(lhs);
        fn bitwise_xor(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> => int(lhs);
        fn bitwise_xor_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> => int(lhs);
        fn bitwise_not(tensor: IntTensor<Self>) -> IntTensor<Self> => int(tensor);
        fn bitwise_left_shift(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> => int(lhs);
        fn bitwise_left_shift_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> => int(lhs);
        fn bitwise_right_shift(lhs: IntTensor<Self>, rhs: IntTensor<Self>) -> IntTensor<Self> => int(lhs);
        fn bitwise_right_shift_scalar(lhs: IntTensor<Self>, rhs: Scalar) -> IntTensor<Self> => int(lhs);
        fn int_cast(tensor: IntTensor<Self>, dtype: IntDType) -> IntTensor<Self> => int(tensor);
        fn int_unfold(tensor: IntTensor<Self>, dim: usize, size: usize, step: usize) -> IntTensor<Self> => int(tensor);
    }
}

impl<B: Backend> BoolTensorOps<Self> for Profiled<B> {
    forward! {
        fn bool_empty(shape: Shape, device: &Device<Self>, dtype: BoolDType) -> BoolTensor<Self> => device(device);
        fn bool_zeros(shape: Shape, device: &Device<Self>, dtype: BoolDType) -> BoolTensor<Self> => device(device);
        fn bool_ones(shape: Shape, device: &Device<Self>, dtype: BoolDType) -> BoolTensor<Self> => device(device);
        #[read] fn bool_into_data(tensor: BoolTensor<Self>) -> Result<TensorData, ExecutionError> => none;
        fn bool_from_data(data: TensorData, device: &Device<Self>) -> BoolTensor<Self> => device(device);
        fn bool_into_int(tensor: BoolTensor<Self>, out_dtype: IntDType) -> IntTensor<Self> => bool(tensor);
        fn bool_into_float(tensor: BoolTensor<Self>, out_dtype: FloatDType) -> FloatTensor<Self> => bool(tensor);
        fn bool_device(tensor: &BoolTensor<Self>) -> Device<Self> => bool(tensor);
        fn bool_to_device(tensor: BoolTensor<Self>, device: &Device<Self>) -> BoolTensor<Self> => bool(tensor);
        fn bool_reshape(tensor: BoolTensor<Self>, shape: Shape) -> BoolTensor<Self> => bool(tensor);
        fn bool_slice(tensor: BoolTensor<Self>, slices: &[Slice]) -> BoolTensor<Self> => bool(tensor);
        fn bool_slice_assign(tensor: BoolTensor<Self>, slices: &[Slice], value: BoolTensor<Self>) -> BoolTensor<Self> => bool(tensor);
        fn bool_mask_where(tensor: BoolTensor<Self>, mask: BoolTensor<Self>, value: BoolTensor<Self>) -> BoolTensor<Self> => bool(tensor);
        fn bool_mask_fill(tensor: BoolTensor<Self>, mask: BoolTensor<Self>, value: Scalar) -> BoolTensor<Self> => bool(tensor);
        fn bool_gather(dim: usize, tensor: BoolTensor<Self>, indices: IntTensor<Self>) -> BoolTensor<Self> => bool(tensor);
        fn bool_scatter_or(dim: usize, tensor: BoolTensor<Self>, indices: IntTensor<Self>, value: BoolTensor<Self>) -> BoolTensor<Self> => bool(tensor);
        fn bool_select(tensor: BoolTensor<Self>, dim: usize, indices: IntTensor<Self>) -> BoolTensor<Self> => bool(tensor);
        fn bool_select_or(tensor: BoolTensor<Self>, dim: usize, indices: IntTensor<Self>, value: BoolTensor<Self>) -> BoolTensor<Self> => bool(tensor);
        fn bool_repeat_dim(tensor: BoolTensor<Self>, dim: usize, times: usize) -> BoolTensor<Self> => bool(tensor);
        fn bool_cat(tensors: Vec<BoolTensor<Self>>, dim: usize) -> BoolTensor<Self> => bools(tensors);
        fn bool_equal(lhs: BoolTensor<Self>, rhs: BoolTensor<Self>) -> BoolTensor<Self> => bool(lhs);
        fn bool_not_equal(lhs: BoolTensor<Self>, rhs: BoolTensor<Self>) -> BoolTensor<Self> => bool(lhs);
        fn bool_equal_elem(lhs: BoolTensor<Self>, rhs: Scalar) -> BoolTensor<Self> => bool(lhs);
        fn bool_not_equal_elem(lhs: BoolTensor<Self>, rhs: Scalar) -> BoolTensor<Self> => bool(lhs);
        fn bool_not(tensor: BoolTensor<Self>) -> BoolTensor<Self> => bool(tensor);
        fn bool_and(lhs: BoolTensor<Self>, rhs: BoolTensor<Self>) -> BoolTensor<Self> => bool(lhs);
        fn bool_or(lhs: BoolTensor<Self>, rhs: BoolTensor<Self>) -> BoolTensor<Self> => bool(lhs);
        fn bool_xor(lhs: BoolTensor<Self>, rhs: BoolTensor<Self>) -> BoolTensor<Self> => bool(lhs);
        fn bool_transpose(tensor: BoolTensor<Self>) -> BoolTensor<Self> => bool(tensor);
        fn bool_swap_dims(tensor: BoolTensor<Self>, dim1: usize, dim2: usize) -> BoolTensor<Self> => bool(tensor);
        fn bool_permute(tensor: BoolTensor<Self>, axes: &[usize]) -> BoolTensor<Self> => bool(tensor);
        fn bool_flip(tensor: BoolTensor<Self>, axes: &[usize]) -> BoolTensor<Self> => bool(tensor);
        fn bool_any(tensor: BoolTensor<Self>) -> BoolTensor<Self> => bool(tensor);
        fn bool_any_dim(tensor: BoolTensor<Self>, dim: usize) -> BoolTensor<Self> => bool(tensor);
        fn bool_all(tensor: BoolTensor<Self>) -> BoolTensor<Self> => bool(tensor);
        fn bool_all_dim(tensor: BoolTensor<Self>, dim: usize) -> BoolTensor<Self> => bool(tensor);
        fn bool_expand(tensor: BoolTensor<Self>, shape: Shape) -> BoolTensor<Self> => bool(tensor);
        fn bool_unfold(tensor: BoolTensor<Self>, dim: usize, size: usize, step: usize) -> BoolTensor<Self> => bool(tensor);
    }

    fn bool_argwhere(
        tensor: BoolTensor<Self>,
        out_dtype: IntDType,
    ) -> impl Future<Output = IntTensor<Self>> + 'static + Send {
        static OP: crate::probe::Op = crate::probe::Op::new("bool_argwhere\0");
        let argwhere = B::bool_argwhere(tensor, out_dtype);
        async move {
            let _op = crate::probe::op::<B>(&OP, || None, Vec::new);
            argwhere.await
        }
    }
}

impl<B: Backend> ModuleOps<Self> for Profiled<B> {
    forward! {
        fn embedding(weights: FloatTensor<Self>, indices: IntTensor<Self>) -> FloatTensor<Self> => float(weights);
        fn embedding_backward(weights: FloatTensor<Self>, output_grad: FloatTensor<Self>, indices: IntTensor<Self>) -> FloatTensor<Self> => float(weights);
        fn linear(x: FloatTensor<Self>, weight: FloatTensor<Self>, bias: Option<FloatTensor<Self>>) -> FloatTensor<Self> => float(x);
        fn linear_x_backward(weight: FloatTensor<Self>, output_grad: FloatTensor<Self>) -> FloatTensor<Self> => float(weight);
        fn linear_weight_backward(x: FloatTensor<Self>, output_grad: FloatTensor<Self>) -> FloatTensor<Self> => float(x);
        fn linear_bias_backward(output_grad: FloatTensor<Self>) -> FloatTensor<Self> => float(output_grad);
        fn conv1d(x: FloatTensor<Self>, weight: FloatTensor<Self>, bias: Option<FloatTensor<Self>>, options: ConvOptions<1>) -> FloatTensor<Self> => float(x);
        fn conv1d_x_backward(x: FloatTensor<Self>, weight: FloatTensor<Self>, output_grad: FloatTensor<Self>, options: ConvOptions<1>) -> FloatTensor<Self> => float(x);
        fn conv1d_weight_backward(x: FloatTensor<Self>, weight: FloatTensor<Self>, output_grad: FloatTensor<Self>, options: ConvOptions<1>) -> FloatTensor<Self> => float(x);
        fn conv1d_bias_backward(x: FloatTensor<Self>, bias: FloatTensor<Self>, output_grad: FloatTensor<Self>) -> FloatTensor<Self> => float(x);
        fn conv2d(x: FloatTensor<Self>, weight: FloatTensor<Self>, bias: Option<FloatTensor<Self>>, options: ConvOptions<2>) -> FloatTensor<Self> => float(x);
        fn conv2d_x_backward(x: FloatTensor<Self>, weight: FloatTensor<Self>, output_grad: FloatTensor<Self>, options: ConvOptions<2>) -> FloatTensor<Self> => float(x);
        fn conv2d_weight_backward(x: FloatTensor<Self>, weight: FloatTensor<Self>, output_grad: FloatTensor<Self>, options: ConvOptions<2>) -> FloatTensor<Self> => float(x);
        fn conv2d_bias_backward(x: FloatTensor<Self>, bias: FloatTensor<Self>, output_grad: FloatTensor<Self>) -> FloatTensor<Self> => float(x);
        fn deform_conv2d(x: FloatTensor<Self>, offset: FloatTensor<Self>, weight: FloatTensor<Self>, mask: Option<FloatTensor<Self>>, bias: Option<FloatTensor<Self>>, options: DeformConvOptions<2>) -> FloatTensor<Self> => float(x);
        #[retag] fn deform_conv2d_backward(x: FloatTensor<Self>, offset: FloatTensor<Self>, weight: FloatTensor<Self>, mask: Option<FloatTensor<Self>>, bias: Option<FloatTensor<Self>>, output_grad: FloatTensor<Self>, options: DeformConvOptions<2>) -> DeformConv2dBackward<Self> => float(x);
        fn conv3d(x: FloatTensor<Self>, weight: FloatTensor<Self>, bias: Option<FloatTensor<Self>>, options: ConvOptions<3>) -> FloatTensor<Self> => float(x);
        fn conv3d_x_backward(x: FloatTensor<Self>, weight: FloatTensor<Self>, output_grad: FloatTensor<Self>, options: ConvOptions<3>) -> FloatTensor<Self> => float(x);
        fn conv3d_weight_backward(x: FloatTensor<Self>, weight: FloatTensor<Self>, output_grad: FloatTensor<Self>, options: ConvOptions<3>) -> FloatTensor<Self> => float(x);
        fn conv3d_bias_backward(x: FloatTensor<Self>, bias: FloatTensor<Self>, output_grad: FloatTensor<Self>) -> FloatTensor<Self> => float(x);
        fn conv_transpose1d(x: FloatTensor<Self>, weight: FloatTensor<Self>, bias: Option<FloatTensor<Self>>, options: ConvTransposeOptions<1>) -> FloatTensor<Self> => float(x);
        fn conv_transpose1d_x_backward(weight: FloatTensor<Self>, output_grad: FloatTensor<Self>, options: ConvTransposeOptions<1>) -> FloatTensor<Self> => float(weight);
        fn conv_transpose1d_weight_backward(x: FloatTensor<Self>, weight: FloatTensor<Self>, output_grad: FloatTensor<Self>, options: ConvTransposeOptions<1>) -> FloatTensor<Self> => float(x);
        fn conv_transpose1d_bias_backward(x: FloatTensor<Self>, bias: FloatTensor<Self>, output_grad: FloatTensor<Self>) -> FloatTensor<Self> => float(x);
        fn conv_transpose2d(x: FloatTensor<Self>, weight: FloatTensor<Self>, bias: Option<FloatTensor<Self>>, options: ConvTransposeOptions<2>) -> FloatTensor<Self> => float(x);
        fn conv_transpose2d_x_backward(weight: FloatTensor<Self>, output_grad: FloatTensor<Self>, options: ConvTransposeOptions<2>) -> FloatTensor<Self> => float(weight);
        fn conv_transpose2d_weight_backward(x: FloatTensor<Self>, weight: FloatTensor<Self>, output_grad: FloatTensor<Self>, options: ConvTransposeOptions<2>) -> FloatTensor<Self> => float(x);
        fn conv_transpose2d_bias_backward(x: FloatTensor<Self>, bias: FloatTensor<Self>, output_grad: FloatTensor<Self>) -> FloatTensor<Self> => float(x);
        fn conv_transpose3d(x: FloatTensor<Self>, weight: FloatTensor<Self>, bias: Option<FloatTensor<Self>>, options: ConvTransposeOptions<3>) -> FloatTensor<Self> => float(x);
        fn conv_transpose3d_x_backward(weight: FloatTensor<Self>, output_grad: FloatTensor<Self>, options: ConvTransposeOptions<3>) -> FloatTensor<Self> => float(weight);
        fn conv_transpose3d_weight_backward(x: FloatTensor<Self>, weight: FloatTensor<Self>, output_grad: FloatTensor<Self>, options: ConvTransposeOptions<3>) -> FloatTensor<Self> => float(x);
        fn conv_transpose3d_bias_backward(x: FloatTensor<Self>, bias: FloatTensor<Self>, output_grad: FloatTensor<Self>) -> FloatTensor<Self> => float(x);
        fn unfold4d(x: FloatTensor<Self>, kernel_size: [usize; 2], options: UnfoldOptions) -> FloatTensor<Self> => float(x);
        fn avg_pool1d(x: FloatTensor<Self>, kernel_size: usize, stride: usize, padding: usize, count_include_pad: bool, ceil_mode: bool) -> FloatTensor<Self> => float(x);
        fn avg_pool1d_backward(x: FloatTensor<Self>, grad: FloatTensor<Self>, kernel_size: usize, stride: usize, padding: usize, count_include_pad: bool, ceil_mode: bool) -> FloatTensor<Self> => float(x);
        fn avg_pool2d(x: FloatTensor<Self>, kernel_size: [usize; 2], stride: [usize; 2], padding: [usize; 2], count_include_pad: bool, ceil_mode: bool) -> FloatTensor<Self> => float(x);
        fn avg_pool2d_backward(x: FloatTensor<Self>, grad: FloatTensor<Self>, kernel_size: [usize; 2], stride: [usize; 2], padding: [usize; 2], count_include_pad: bool, ceil_mode: bool) -> FloatTensor<Self> => float(x);
        fn adaptive_avg_pool2d(x: FloatTensor<Self>, output_size: [usize; 2]) -> FloatTensor<Self> => float(x);
        fn adaptive_avg_pool2d_backward(x: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> => float(x);
        fn adaptive_avg_pool1d(x: FloatTensor<Self>, output_size: usize) -> FloatTensor<Self> => float(x);
        fn adaptive_avg_pool1d_backward(x: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> => float(x);
        fn max_pool1d(x: FloatTensor<Self>, kernel_size: usize, stride: usize, padding: usize, dilation: usize, ceil_mode: bool) -> FloatTensor<Self> => float(x);
        #[retag] fn max_pool1d_with_indices(x: FloatTensor<Self>, kernel_size: usize, stride: usize, padding: usize, dilation: usize, ceil_mode: bool) -> MaxPool1dWithIndices<Self> => float(x);
        #[retag] fn max_pool1d_with_indices_backward(x: FloatTensor<Self>, kernel_size: usize, stride: usize, padding: usize, dilation: usize, ceil_mode: bool, output_grad: FloatTensor<Self>, indices: IntTensor<Self>) -> MaxPool1dBackward<Self> => float(x);
        fn max_pool2d(x: FloatTensor<Self>, kernel_size: [usize; 2], stride: [usize; 2], padding: [usize; 2], dilation: [usize; 2], ceil_mode: bool) -> FloatTensor<Self> => float(x);
        #[retag] fn max_pool2d_with_indices(x: FloatTensor<Self>, kernel_size: [usize; 2], stride: [usize; 2], padding: [usize; 2], dilation: [usize; 2], ceil_mode: bool) -> MaxPool2dWithIndices<Self> => float(x);
        #[retag] fn max_pool2d_with_indices_backward(x: FloatTensor<Self>, kernel_size: [usize; 2], stride: [usize; 2], padding: [usize; 2], dilation: [usize; 2], ceil_mode: bool, output_grad: FloatTensor<Self>, indices: IntTensor<Self>) -> MaxPool2dBackward<Self> => float(x);
        fn interpolate(x: FloatTensor<Self>, output_size: [usize; 2], options: InterpolateOptions) -> FloatTensor<Self> => float(x);
        fn interpolate_backward(x: FloatTensor<Self>, grad: FloatTensor<Self>, output_size: [usize; 2], options: InterpolateOptions) -> FloatTensor<Self> => float(x);
        fn attention(query: FloatTensor<Self>, key: FloatTensor<Self>, value: FloatTensor<Self>, mask: Option<BoolTensor<Self>>, attn_bias: Option<FloatTensor<Self>>, options: AttentionModuleOptions) -> FloatTensor<Self> => float(query);
        fn layer_norm(tensor: FloatTensor<Self>, gamma: FloatTensor<Self>, beta: Option<FloatTensor<Self>>, epsilon: f64) -> FloatTensor<Self> => float(tensor);
        fn ctc_loss(log_probs: FloatTensor<Self>, targets: IntTensor<Self>, input_lengths: IntTensor<Self>, target_lengths: IntTensor<Self>, blank: usize) -> FloatTensor<Self> => float(log_probs);
        fn ctc_loss_backward(log_probs: FloatTensor<Self>, targets: IntTensor<Self>, input_lengths: IntTensor<Self>, target_lengths: IntTensor<Self>, grad_loss: FloatTensor<Self>, blank: usize) -> FloatTensor<Self> => float(log_probs);
        fn rfft(signal: FloatTensor<Self>, dim: usize, n: Option<usize>) -> (FloatTensor<Self>, FloatTensor<Self>) => float(signal);
        fn irfft(spectrum_re: FloatTensor<Self>, spectrum_im: FloatTensor<Self>, dim: usize, n: Option<usize>) -> FloatTensor<Self> => float(spectrum_re);
    }

    fn has_ctc_loss_backward() -> bool {
        B::has_ctc_loss_backward()
    }
}

impl<B: Backend> ActivationOps<Self> for Profiled<B> {
    forward! {
        fn leaky_relu(tensor: FloatTensor<Self>, negative_slope: Scalar) -> FloatTensor<Self> => float(tensor);
        fn relu(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn relu_backward(output: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> => float(output);
        fn gelu(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn prelu(tensor: FloatTensor<Self>, alpha: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn gelu_backward(x: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> => float(x);
        fn sigmoid(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn sigmoid_backward(output: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> => float(output);
        fn hard_sigmoid(tensor: FloatTensor<Self>, alpha: Scalar, beta: Scalar) -> FloatTensor<Self> => float(tensor);
        fn log_sigmoid(tensor: FloatTensor<Self>) -> FloatTensor<Self> => float(tensor);
        fn softmax(tensor: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> => float(tensor);
        fn log_softmax(tensor: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> => float(tensor);
        fn softmin(tensor: FloatTensor<Self>, dim: usize) -> FloatTensor<Self> => float(tensor);
        fn log_sigmoid_backward(x: FloatTensor<Self>, grad: FloatTensor<Self>) -> FloatTensor<Self> => float(x);
    }
}

impl<B: Backend> QTensorOps<Self> for Profiled<B> {
    forward! {
        fn q_from_data(data: TensorData, device: &Device<Self>) -> QuantizedTensor<Self> => device(device);
        fn quantize_dynamic(tensor: FloatTensor<Self>, scheme: &QuantScheme) -> QuantizedTensor<Self> => float(tensor);
        fn dequantize(tensor: QuantizedTensor<Self>, dtype: FloatDType) -> FloatTensor<Self> => q(tensor);
        fn q_device(tensor: &QuantizedTensor<Self>) -> Device<Self> => q(tensor);
        fn q_to_device(tensor: QuantizedTensor<Self>, device: &Device<Self>) -> QuantizedTensor<Self> => q(tensor);
        fn q_reshape(tensor: QuantizedTensor<Self>, shape: Shape) -> QuantizedTensor<Self> => q(tensor);
        #[read] fn q_into_data(tensor: QuantizedTensor<Self>) -> Result<TensorData, ExecutionError> => none;
        fn q_detach(tensor: QuantizedTensor<Self>) -> QuantizedTensor<Self> => q(tensor);
        fn q_set_require_grad(tensor: QuantizedTensor<Self>, require_grad: bool) -> QuantizedTensor<Self> => q(tensor);
        fn q_is_require_grad(tensor: &QuantizedTensor<Self>) -> bool => q(tensor);
        fn q_expand(tensor: QuantizedTensor<Self>, shape: Shape) -> QuantizedTensor<Self> => q(tensor);
        fn q_transpose(tensor: QuantizedTensor<Self>) -> QuantizedTensor<Self> => q(tensor);
        fn q_swap_dims(tensor: QuantizedTensor<Self>, dim1: usize, dim2: usize) -> QuantizedTensor<Self> => q(tensor);
        fn q_permute(tensor: QuantizedTensor<Self>, axes: &[usize]) -> QuantizedTensor<Self> => q(tensor);
        fn q_flip(tensor: QuantizedTensor<Self>, axes: &[usize]) -> QuantizedTensor<Self> => q(tensor);
        fn q_select(tensor: QuantizedTensor<Self>, dim: usize, indices: IntTensor<Self>) -> QuantizedTensor<Self> => q(tensor);
        fn q_slice(tensor: QuantizedTensor<Self>, slices: &[Slice]) -> QuantizedTensor<Self> => q(tensor);
        fn q_gather(dim: usize, tensor: QuantizedTensor<Self>, indices: IntTensor<Self>) -> QuantizedTensor<Self> => q(tensor);
        fn q_repeat_dim(tensor: QuantizedTensor<Self>, dim: usize, times: usize) -> QuantizedTensor<Self> => q(tensor);
        #[retag] fn q_add(lhs: QuantizedTensor<Self>, rhs: QuantizedTensor<Self>) -> TensorPrimitive<Self> => q(lhs);
        #[retag] fn q_add_scalar(lhs: QuantizedTensor<Self>, rhs: Scalar) -> TensorPrimitive<Self> => q(lhs);
        #[retag] fn q_clamp_min(tensor: QuantizedTensor<Self>, min: Scalar) -> TensorPrimitive<Self> => q(tensor);
        #[retag] fn q_clamp_max(tensor: QuantizedTensor<Self>, max: Scalar) -> TensorPrimitive<Self> => q(tensor);
        #[retag] fn q_clamp(tensor: QuantizedTensor<Self>, min: Scalar, max: Scalar) -> TensorPrimitive<Self> => q(tensor);
        #[retag] fn q_sub(lhs: QuantizedTensor<Self>, rhs: QuantizedTensor<Self>) -> TensorPrimitive<Self> => q(lhs);
        #[retag] fn q_sub_scalar(lhs: QuantizedTensor<Self>, rhs: Scalar) -> TensorPrimitive<Self> => q(lhs);
        #[retag] fn q_mul(lhs: QuantizedTensor<Self>, rhs: QuantizedTensor<Self>) -> TensorPrimitive<Self> => q(lhs);
        #[retag] fn q_mul_scalar(lhs: QuantizedTensor<Self>, rhs: Scalar) -> TensorPrimitive<Self> => q(lhs);
        #[retag] fn q_div(lhs: QuantizedTensor<Self>, rhs: QuantizedTensor<Self>) -> TensorPrimitive<Self> => q(lhs);
        #[retag] fn q_div_scalar(lhs: QuantizedTensor<Self>, rhs: Scalar) -> TensorPrimitive<Self> => q(lhs);
        #[retag] fn q_neg(tensor: QuantizedTensor<Self>) -> TensorPrimitive<Self> => q(tensor);
        #[retag] fn q_recip(tensor: QuantizedTensor<Self>) -> TensorPrimitive<Self> => q(tensor);
        #[retag] fn q_sum(tensor: QuantizedTensor<Self>) -> TensorPrimitive<Self> => q(tensor);
        #[retag] fn q_sum_dim(tensor: QuantizedTensor<Self>, dim: usize) -> TensorPrimitive<Self> => q(tensor);
        #[retag] fn q_prod(tensor: QuantizedTensor<Self>) -> TensorPrimitive<Self> => q(tensor);
        #[retag] fn q_prod_dim(tensor: QuantizedTensor<Self>, dim: usize) -> TensorPrimitive<Self> => q(tensor);
        #[retag] fn q_mean(tensor: QuantizedTensor<Self>) -> TensorPrimitive<Self> => q(tensor);
        #[retag] fn q_mean_dim(tensor: QuantizedTensor<Self>, dim: usize) -> TensorPrimitive<Self> => q(tensor);
        #[retag] fn q_cumsum(tensor: QuantizedTensor<Self>, dim: usize) -> TensorPrimitive<Self> => q(tensor);
        #[retag] fn q_cumprod(tensor: QuantizedTensor<Self>, dim: usize) -> TensorPrimitive<Self> => q(tensor);
        #[retag] fn q_cummin(tensor: QuantizedTensor<Self>, dim: usize) -> TensorPrimitive<Self> => q(tensor);
        #[retag] fn q_cummax(tensor: QuantizedTensor<Self>, dim: usize) -> TensorPrimitive<Self> => q(tensor);
        #[retag] fn q_exp(tensor: QuantizedTensor<Self>) -> TensorPrimitive<Self> => q(tensor);
        #[retag] fn q_log(tensor: QuantizedTensor<Self>) -> TensorPrimitive<Self> => q(tensor);
        #[retag] fn q_log1p(tensor: QuantizedTensor<Self>) -> TensorPrimitive<Self> => q(tensor);
        #[retag] fn q_powf(lhs: QuantizedTensor<Self>, rhs: QuantizedTensor<Self>) -> TensorPrimitive<Self> => q(lhs);
        #[retag] fn q_powi(lhs: QuantizedTensor<Self>, rhs: IntTensor<Self>) -> TensorPrimitive<Self> => q(lhs);
        #[retag] fn q_powi_scalar(lhs: QuantizedTensor<Self>, rhs: Scalar) -> TensorPrimitive<Self> => q(lhs);
        #[retag] fn q_powf_scalar(tensor: QuantizedTensor<Self>, value: Scalar) -> TensorPrimitive<Self> => q(tensor);
        #[retag] fn q_sqrt(tensor: QuantizedTensor<Self>) -> TensorPrimitive<Self> => q(tensor);
        fn q_abs(tensor: QuantizedTensor<Self>) -> QuantizedTensor<Self> => q(tensor);
        #[retag] fn q_cos(tensor: QuantizedTensor<Self>) -> TensorPrimitive<Self> => q(tensor);
        #[retag] fn q_sin(tensor: QuantizedTensor<Self>) -> TensorPrimitive<Self> => q(tensor);
        #[retag] fn q_tan(tensor: QuantizedTensor<Self>) -> TensorPrimitive<Self> => q(tensor);
        #[retag] fn q_cosh(tensor: QuantizedTensor<Self>) -> TensorPrimitive<Self> => q(tensor);
        #[retag] fn q_sinh(tensor: QuantizedTensor<Self>) -> TensorPrimitive<Self> => q(tensor);
        #[retag] fn q_tanh(tensor: QuantizedTensor<Self>) -> TensorPrimitive<Self> => q(tensor);
        #[retag] fn q_erf(tensor: QuantizedTensor<Self>) -> TensorPrimitive<Self> => q(tensor);
        fn q_cat(tensors: Vec<QuantizedTensor<Self>>, dim: usize) -> QuantizedTensor<Self> => qs(tensors);
        fn q_argmax(tensor: QuantizedTensor<Self>, dim: usize, out_dtype: IntDType) -> IntTensor<Self> => q(tensor);
        fn q_argtopk(tensor: QuantizedTensor<Self>, dim: usize, k: usize, out_dtype: IntDType) -> IntTensor<Self> => q(tensor);
        fn q_topk(tensor: QuantizedTensor<Self>, dim: usize, k: usize) -> QuantizedTensor<Self> => q(tensor);
        fn q_argmin(tensor: QuantizedTensor<Self>, dim: usize, out_dtype: IntDType) -> IntTensor<Self> => q(tensor);
        fn q_max(tensor: QuantizedTensor<Self>) -> QuantizedTensor<Self> => q(tensor);
        fn q_max_dim(tensor: QuantizedTensor<Self>, dim: usize) -> QuantizedTensor<Self> => q(tensor);
        fn q_max_dim_with_indices(tensor: QuantizedTensor<Self>, dim: usize, out_dtype: IntDType) -> (QuantizedTensor<Self>, IntTensor<Self>) => q(tensor);
        fn q_min(tensor: QuantizedTensor<Self>) -> QuantizedTensor<Self> => q(tensor);
        fn q_min_dim(tensor: QuantizedTensor<Self>, dim: usize) -> QuantizedTensor<Self> => q(tensor);
        fn q_min_dim_with_indices(tensor: QuantizedTensor<Self>, dim: usize, out_dtype: IntDType) -> (QuantizedTensor<Self>, IntTensor<Self>) => q(tensor);
        fn q_max_abs(tensor: QuantizedTensor<Self>) -> QuantizedTensor<Self> => q(tensor);
        fn q_max_abs_dim(tensor: QuantizedTensor<Self>, dim: usize) -> QuantizedTensor<Self> => q(tensor);
        fn q_any(tensor: QuantizedTensor<Self>, out_dtype: BoolDType) -> BoolTensor<Self> => q(tensor);
        fn q_any_dim(tensor: QuantizedTensor<Self>, dim: usize, out_dtype: BoolDType) -> BoolTensor<Self> => q(tensor);
        fn q_all(tensor: QuantizedTensor<Self>, out_dtype: BoolDType) -> BoolTensor<Self> => q(tensor);
        fn q_all_dim(tensor: QuantizedTensor<Self>, dim: usize, out_dtype: BoolDType) -> BoolTensor<Self> => q(tensor);
        fn q_sort(tensor: QuantizedTensor<Self>, dim: usize, descending: bool) -> QuantizedTensor<Self> => q(tensor);
        fn q_sort_with_indices(tensor: QuantizedTensor<Self>, dim: usize, descending: bool, out_dtype: IntDType) -> (QuantizedTensor<Self>, IntTensor<Self>) => q(tensor);
        fn q_argsort(tensor: QuantizedTensor<Self>, dim: usize, descending: bool, out_dtype: IntDType) -> IntTensor<Self> => q(tensor);
    }

    fn quantize(
        tensor: FloatTensor<Self>,
        scheme: &QuantScheme,
        qparams: QuantizationParametersPrimitive<Self>,
    ) -> QuantizedTensor<Self> {
        static OP: crate::probe::Op = crate::probe::Op::new("quantize\0");
        let _op = crate::probe::op::<B>(&OP, || Some(B::float_device(&tensor)), Vec::new);
        B::quantize(tensor, scheme, qparams.retag())
    }

    fn q_matmul(lhs: TensorPrimitive<Self>, rhs: TensorPrimitive<Self>) -> TensorPrimitive<Self> {
        static OP: crate::probe::Op = crate::probe::Op::new("q_matmul\0");
        let _op = crate::probe::op::<B>(
            &OP,
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
        let execute = B::tr_execute(TransactionPrimitive::new(
            read_floats,
            read_qfloats,
            read_ints,
            read_bools,
        ));
        async move {
            let _op = crate::probe::op::<B>(&OP, || None, Vec::new);
            execute.await
        }
    }
}
