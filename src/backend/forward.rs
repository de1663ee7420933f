//! The macro that turns a table of backend-op signatures into forwarding methods.
//!
//! Each table line is one trait method with `Self` in its signature, followed by where the
//! op's device comes from (used only when per-op sync is on):
//!
//! ```text
//! fn float_add(lhs: FloatTensor<Self>, rhs: FloatTensor<Self>) -> FloatTensor<Self> => float(lhs);
//! #[retag] fn max_pool2d_with_indices(..) -> MaxPool2dWithIndices<Self> => float(x);
//! #[read] fn float_into_data(tensor: FloatTensor<Self>) -> Result<TensorData, ExecutionError> => none;
//! ```
//!
//! * plain: `{ probe; B::op(args) }`, the result type is `B`'s own;
//! * `#[retag]`: the result is a struct generic over the backend, re-tagged from `B` to `Profiled<B>`;
//! * `#[read]`: the op returns a future; the op range covers the await.

/// Expands a table of op signatures into forwarding methods (see the module docs).
macro_rules! forward {
    ($( $(#[$kind:ident])? fn $name:ident($($arg:ident : $ty:ty),* $(,)?) -> $ret:ty => $dev:ident $(($src:ident))?; )*) => {
        $( $crate::backend::forward::forward_one!([$($kind)?] fn $name($($arg: $ty),*) -> $ret => $dev $(($src))?); )*
    };
}

/// Expands one table line; `forward!` dispatches here.
macro_rules! forward_one {
    ([] fn $name:ident($($arg:ident : $ty:ty),*) -> $ret:ty => $($dev:tt)*) => {
        #[inline]
        fn $name($($arg: $ty),*) -> $ret {
            static OP: $crate::probe::Op = $crate::probe::Op::new(concat!(stringify!($name), "\0"));
            let _op = $crate::probe::op::<B>(&OP, || $crate::backend::forward::op_device!($($dev)*), || {
                #[allow(unused_imports)]
                use $crate::probe::{NoShape as _, TensorShape as _};
                let mut shapes = Vec::new();
                $( (&&$crate::probe::ShapeOf(&$arg)).collect_shape(&mut shapes); )*
                shapes
            });
            B::$name($($arg),*)
        }
    };
    ([retag] fn $name:ident($($arg:ident : $ty:ty),*) -> $ret:ty => $($dev:tt)*) => {
        #[inline]
        fn $name($($arg: $ty),*) -> $ret {
            static OP: $crate::probe::Op = $crate::probe::Op::new(concat!(stringify!($name), "\0"));
            let _op = $crate::probe::op::<B>(&OP, || $crate::backend::forward::op_device!($($dev)*), || {
                #[allow(unused_imports)]
                use $crate::probe::{NoShape as _, TensorShape as _};
                let mut shapes = Vec::new();
                $( (&&$crate::probe::ShapeOf(&$arg)).collect_shape(&mut shapes); )*
                shapes
            });
            $crate::backend::retag::Retag::retag(B::$name($($arg),*))
        }
    };
    ([read] fn $name:ident($($arg:ident : $ty:ty),*) -> $out:ty => none) => {
        #[inline]
        fn $name($($arg: $ty),*) -> impl core::future::Future<Output = $out> + Send {
            static OP: $crate::probe::Op = $crate::probe::Op::new(concat!(stringify!($name), "\0"));
            let read = B::$name($($arg),*);
            async move {
                let _op = $crate::probe::op::<B>(&OP, || None, Vec::new);
                read.await
            }
        }
    };
}

/// The device an op runs on, from the argument named in the table; evaluated only when
/// per-op sync is on.
macro_rules! op_device {
    (none) => {
        None
    };
    (device($d:ident)) => {
        Some($d.clone())
    };
    (float($t:ident)) => {
        Some(B::float_device(&$t))
    };
    (int($t:ident)) => {
        Some(B::int_device(&$t))
    };
    (bool($t:ident)) => {
        Some(B::bool_device(&$t))
    };
    (q($t:ident)) => {
        Some(B::q_device(&$t))
    };
    (floats($t:ident)) => {
        $t.first().map(|t| B::float_device(t))
    };
    (ints($t:ident)) => {
        $t.first().map(|t| B::int_device(t))
    };
    (bools($t:ident)) => {
        $t.first().map(|t| B::bool_device(t))
    };
    (qs($t:ident)) => {
        $t.first().map(|t| B::q_device(t))
    };
}

pub(crate) use {forward, forward_one, op_device};
