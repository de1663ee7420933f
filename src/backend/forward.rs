//! The macro that turns a table of backend-op signatures into forwarding methods.
//!
//! Each table line is one trait method, its signature written with `Profiled<B>` for the
//! backend, followed by where the op's device comes from (used only when per-op sync is on):
//!
//! ```text
//! fn float_add(lhs: FloatTensor<Profiled<B>>, rhs: FloatTensor<Profiled<B>>) -> FloatTensor<Profiled<B>> => float(lhs);
//! #[retag] fn max_pool2d_with_indices(..) -> MaxPool2dWithIndices<Profiled<B>> => float(x);
//! #[read] fn float_into_data(tensor: FloatTensor<Profiled<B>>) -> Result<TensorData, ExecutionError> => float(tensor);
//! ```
//!
//! * plain: `{ probe; B::op(args) }`, the result type is `B`'s own;
//! * `#[retag]`: the result is a struct generic over the backend, re-tagged from `B` to `Profiled<B>`;
//! * `#[query]`: a question about a tensor (its device): `B`'s answer, inlined, with no report;
//! * `#[read]`: the op returns a future; the op range covers the await. The switches are read
//!   once, at the call, and the device is taken then (before the read consumes the tensor),
//!   only when a tool is on.

/// Expands a table of op signatures into forwarding methods (see the module docs).
macro_rules! forward {
    // A table whose ops are not re-run on NdArray (`[numerics] check_finite`: the quantized
    // ops, whose primitives NdArray's ops do not take).
    (@no_replay $( $(#[$kind:ident])? fn $name:ident($($arg:ident : $ty:ty),* $(,)?) -> $ret:ty => $dev:ident $(($src:ident))?; )*) => {
        $( $crate::backend::forward::forward_one!(no [$($kind)?] fn $name($($arg: $ty),*) -> $ret => $dev $(($src))?); )*
    };
    ($( $(#[$kind:ident])? fn $name:ident($($arg:ident : $ty:ty),* $(,)?) -> $ret:ty => $dev:ident $(($src:ident))?; )*) => {
        $( $crate::backend::forward::forward_one!(yes [$($kind)?] fn $name($($arg: $ty),*) -> $ret => $dev $(($src))?); )*
    };
}

/// Expands one table line; `forward!` dispatches here.
///
/// With everything off, the op is `B`'s op behind one relaxed load and a branch: the probed
/// path is a separate, never-inlined function, so nothing of it (no borrow of the arguments,
/// no guard) reaches the disabled path.
macro_rules! forward_one {
    ($replay:ident [query] fn $name:ident($($arg:ident : $ty:ty),*) -> $ret:ty => $dev:ident $(($src:ident))?) => {
        // A question about a tensor, not work on it: no report, and inlined where burn's
        // callers inline `B`'s own (NdArray's `float_device` is free).
        #[inline(always)]
        fn $name($($arg: $ty),*) -> $ret {
            B::$name($($arg),*)
        }
    };
    ($replay:ident [read] fn $name:ident($($arg:ident : $ty:ty),*) -> $out:ty => $dev:ident $(($src:ident))?) => {
        #[inline(always)]
        fn $name($($arg: $ty),*) -> impl core::future::Future<Output = $out> + Send {
            static OP: $crate::probe::Op = $crate::probe::Op::new(concat!(stringify!($name), "\0"));
            // One flag check for the call and its await, as for the other ops.
            let flags = $crate::probe::flags();
            $crate::probe::caller_waits(flags);
            let device = match $crate::probe::wants_device(flags) {
                false => None,
                true => $crate::backend::forward::op_device!($dev $(($src))?),
            };
            let read = B::$name($($arg),*);
            async move {
                let _op = $crate::probe::read_op::<B>(&OP, flags, device);
                read.await
            }
        }
    };
    ($replay:ident [$($kind:ident)?] fn $name:ident($($arg:ident : $ty:ty),*) -> $ret:ty => $($dev:ident $(($src:ident))?)?) => {
        // Not inlined: inlined, it made burn's callers larger (`cargo bench --bench
        // instructions`).
        #[inline(never)]
        fn $name($($arg: $ty),*) -> $ret {
            #[inline(never)]
            #[allow(clippy::too_many_arguments)]
            fn probed<B: Backend>($($arg: $ty,)* flags: $crate::context::switches::Flags) -> $ret {
                static OP: $crate::probe::Op = $crate::probe::Op::new(concat!(stringify!($name), "\0"));
                $crate::backend::forward::forward_call!([$($kind)?] probed $replay B, OP, flags, $name($($arg),*) => $($dev $(($src))?)?)
            }
            // The disabled path passes the arguments on where they came in; the probed path's
            // copy of them into this frame (rustc moves them) costs the disabled path the frame's
            // set-up: 13 instructions for NdArray's `float_add` (`cargo bench --bench
            // instructions`), as with the earlier hand-made pass by address.
            match $crate::probe::flags() {
                0 => $crate::backend::forward::forward_call!([$($kind)?] direct B, $name($($arg),*)),
                flags => probed::<B>($($arg,)* flags),
            }
        }
    };
}

/// The call of one forwarded op, plain, re-tagged or awaited (`#[read]`), with or without its
/// probe.
macro_rules! forward_call {
    ([] direct $b:ident, $name:ident($($arg:ident),*)) => { $b::$name($($arg),*) };
    ([retag] direct $b:ident, $name:ident($($arg:ident),*)) => {
        $crate::backend::retag::Retag::retag($b::$name($($arg),*))
    };
    ([$($kind:ident)?] probed $replay:ident $b:ident, $op:ident, $flags:ident, $name:ident($($arg:ident),*) => $($dev:ident $(($src:ident))?)?) => {{
        #[allow(unused_imports)]
        use $crate::probe::{NoArg as _, TensorArgOf as _, WindowArgOf as _};
        #[allow(unused_imports)]
        use $crate::op_numerics::{NoTensor as _, TensorOf as _, TensorsIn as _};
        let numerics = $crate::numerics_path::numerics_start::<$b>($flags, |seen| {
            $( (&&&$crate::op_numerics::Tensors(&$arg)).hold(seen); )*
        });
        let replay = $crate::backend::forward::capture!($replay $b, numerics, $name($($arg),*));
        let out = {
            let mut _op = $crate::probe::op::<$b>(
                &$op,
                $flags,
                || $crate::backend::forward::op_device!($($dev $(($src))?)?),
                || {
                    let mut args = Vec::new();
                    $( (&&&$crate::probe::ArgOf(&$arg)).collect_arg(&mut args); )*
                    args
                },
                |ids| {
                    $( (&&&$crate::op_numerics::Tensors(&$arg)).hold(ids); )*
                },
            );
            let out = $crate::backend::forward::forward_call!([$($kind)?] direct $b, $name($($arg),*));
            _op.outputs(|outputs| (&&&$crate::probe::ArgOf(&out)).collect_arg(outputs));
            _op.made(|ids| (&&&$crate::op_numerics::Tensors(&out)).hold(ids));
            out
        };
        // Read after the op's guard ended: the reads are not the op's time.
        $crate::numerics_path::numerics_end::<$b>(&$op, numerics, |seen| {
            (&&&$crate::op_numerics::Tensors(&out)).hold(seen);
        }, replay);
        out
    }};
}

/// The arguments of an op under `check_finite`, captured before it takes them, and NdArray's op
/// of the same name to run on them ([`rerun`](crate::rerun)): `Option<Replay>`.
macro_rules! capture {
    (no $b:ident, $numerics:ident, $name:ident($($arg:ident),*)) => {
        None::<$crate::rerun::Replay>
    };
    (yes $b:ident, $numerics:ident, $name:ident($($arg:ident),*)) => {{
        #[cfg(feature = "ndarray")]
        let replay = match $crate::numerics_path::replay_wanted::<$b>(&$numerics) {
            false => None,
            true => {
                #[allow(unused_imports)]
                use $crate::rerun::{
                    CaptureClone as _, CaptureDevice as _, CaptureOption as _, CaptureSlice as _,
                    CaptureTensor as _, CaptureTensorRef as _, CaptureTensors as _,
                };
                let captured = ( $( (&&&&&&$crate::rerun::Capture(&$arg)).capture::<$b>(), )* );
                let replay: $crate::rerun::Replay = Box::new(move || {
                    $crate::rerun::run(move || {
                        #[allow(unused_variables, clippy::unused_unit)]
                        let ($($arg,)*) = &captured;
                        let out = <burn::backend::NdArray>::$name($($arg.arg()?),*);
                        let mut seen = $crate::op_numerics::Seen::<burn::backend::NdArray>::new(false);
                        (&&&$crate::op_numerics::Tensors(&out)).hold(&mut seen);
                        Some(seen.held.into_iter().filter_map($crate::op_numerics::Held::read).collect())
                    })
                });
                Some(replay)
            }
        };
        #[cfg(not(feature = "ndarray"))]
        let replay = None::<$crate::rerun::Replay>;
        replay
    }};
}

pub(crate) use capture;

/// The device an op runs on, from the argument named in the table; evaluated only when
/// per-op sync is on.
macro_rules! op_device {
    (none) => {
        None
    };
    (device($d:ident)) => {
        Some(<B::Device as Clone>::clone($d))
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

pub(crate) use {forward, forward_call, forward_one, op_device};
