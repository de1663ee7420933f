//! Moving backend-generic structs between `B` and `Profiled<B>`.
//!
//! `Profiled<B>` reuses `B`'s primitive types, so a `TensorPrimitive<B>` and a
//! `TensorPrimitive<Profiled<B>>` hold the same values under different type tags. Re-tagging is a
//! move of the fields, never a conversion of tensor data.

use burn_backend::Backend;
use burn_backend::TensorPrimitive;
use burn_backend::ops::{
    DeformConv2dBackward, MaxPool1dBackward, MaxPool1dWithIndices, MaxPool2dBackward,
    MaxPool2dWithIndices,
};
use burn_backend::quantization::QuantizationParametersPrimitive;

/// A value whose type names one backend, moved to the same value naming another backend with
/// identical primitive types.
pub(crate) trait Retag<To> {
    fn retag(self) -> To;
}

/// `To` shares `From`'s tensor primitives.
pub(crate) trait SamePrimitives<From: Backend>:
    Backend<
        FloatTensorPrimitive = From::FloatTensorPrimitive,
        IntTensorPrimitive = From::IntTensorPrimitive,
        BoolTensorPrimitive = From::BoolTensorPrimitive,
        QuantizedTensorPrimitive = From::QuantizedTensorPrimitive,
    >
{
}

impl<From: Backend, To> SamePrimitives<From> for To where
    To: Backend<
            FloatTensorPrimitive = From::FloatTensorPrimitive,
            IntTensorPrimitive = From::IntTensorPrimitive,
            BoolTensorPrimitive = From::BoolTensorPrimitive,
            QuantizedTensorPrimitive = From::QuantizedTensorPrimitive,
        >
{
}

impl<X: Backend, Y: SamePrimitives<X>> Retag<TensorPrimitive<Y>> for TensorPrimitive<X> {
    fn retag(self) -> TensorPrimitive<Y> {
        match self {
            TensorPrimitive::Float(t) => TensorPrimitive::Float(t),
            TensorPrimitive::QFloat(t) => TensorPrimitive::QFloat(t),
        }
    }
}

impl<X: Backend, Y: SamePrimitives<X>> Retag<QuantizationParametersPrimitive<Y>>
    for QuantizationParametersPrimitive<X>
{
    fn retag(self) -> QuantizationParametersPrimitive<Y> {
        QuantizationParametersPrimitive {
            scales: self.scales,
        }
    }
}

impl<X: Backend, Y: SamePrimitives<X>> Retag<MaxPool1dWithIndices<Y>> for MaxPool1dWithIndices<X> {
    fn retag(self) -> MaxPool1dWithIndices<Y> {
        MaxPool1dWithIndices::new(self.output, self.indices)
    }
}

impl<X: Backend, Y: SamePrimitives<X>> Retag<MaxPool2dWithIndices<Y>> for MaxPool2dWithIndices<X> {
    fn retag(self) -> MaxPool2dWithIndices<Y> {
        MaxPool2dWithIndices::new(self.output, self.indices)
    }
}

impl<X: Backend, Y: SamePrimitives<X>> Retag<MaxPool1dBackward<Y>> for MaxPool1dBackward<X> {
    fn retag(self) -> MaxPool1dBackward<Y> {
        MaxPool1dBackward::new(self.x_grad)
    }
}

impl<X: Backend, Y: SamePrimitives<X>> Retag<MaxPool2dBackward<Y>> for MaxPool2dBackward<X> {
    fn retag(self) -> MaxPool2dBackward<Y> {
        MaxPool2dBackward::new(self.x_grad)
    }
}

impl<X: Backend, Y: SamePrimitives<X>> Retag<DeformConv2dBackward<Y>> for DeformConv2dBackward<X> {
    fn retag(self) -> DeformConv2dBackward<Y> {
        DeformConv2dBackward::new(
            self.x_grad,
            self.offset_grad,
            self.weight_grad,
            self.mask_grad,
            self.bias_grad,
        )
    }
}
