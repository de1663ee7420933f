//! A fingerprint's statistics reduced on the device, for tensors of [`FROM_ELEMENTS`] elements
//! or more on CubeCL's backends: one kernel reduces each chunk of the flattened f32 tensor to
//! its nine partial statistics ([`STATISTICS`] numbers a chunk, in a fixed order, so that the
//! same tensor gives the same partials bit for bit), and only those are read with the batch;
//! the host adds the chunks' partials in f64 ([`fingerprint`]).
//!
//! Read whole, a tensor costs its size in transfer and a pass over it on the host; reduced, a
//! kernel and 36 bytes per chunk of [`CHUNK`] elements. The sums are then f32 within a chunk:
//! within about 1e-6 of the host's (relative to the sum of magnitudes), not bit for bit, so
//! such a tensor agrees with NdArray's within tolerance, not bit for bit. Counts, minimum and
//! maximum stay exact.

use std::any::Any;
use std::sync::atomic::{AtomicBool, Ordering};

use burn_backend::Backend;
use burn_cubecl::cubecl::{self, prelude::*};
use burn_cubecl::tensor::CubeTensor;
use burn_cubecl::{CubeRuntime, kernel::into_contiguous, ops::numeric::empty_device_dtype};
use burn_profiled_core::numerics::{Fingerprint, WEIGHT_PERIOD};
use burn_std::{DType, Shape};

/// Tensors of this many elements or more are reduced on the device; smaller ones are read
/// whole (a kernel launch costs more than reading them).
pub(crate) const FROM_ELEMENTS: usize = 1 << 16;

static READ_WHOLE: AtomicBool = AtomicBool::new(false);

/// Reads every tensor's fingerprint whole, as before the reduction on the device (for the
/// `numerics` bench, side by side; not an API).
pub fn read_fingerprints_whole(whole: bool) {
    READ_WHOLE.store(whole, Ordering::Relaxed);
}

/// Whether a tensor of `elements` is reduced on the device.
pub(crate) fn reduces(elements: usize) -> bool {
    elements >= FROM_ELEMENTS && !READ_WHOLE.load(Ordering::Relaxed)
}

// The kernel weighs position `i` by `i % 1021 + 1`, as the host's fingerprint does.
const _: () = assert!(WEIGHT_PERIOD == 1021);

/// The units of a cube (the kernel's tree and shared memory are written for 256).
const UNITS: u32 = 256;

/// The elements one cube reduces, at least (more for tensors past 65,535 chunks).
pub(crate) const CHUNK: usize = 4096;

/// Numbers per chunk: NaNs, +inf, -inf, min, max, sum, sum of squares, sum of absolute values,
/// weighted sum.
pub(crate) const STATISTICS: usize = 9;

/// The most cubes a launch has along x.
const MAX_CUBES: usize = 65_535;

/// How many chunks, of how many elements, a tensor of `elements` is reduced in.
pub(crate) fn chunks(elements: usize) -> (usize, usize) {
    let per_cube = CHUNK * elements.div_ceil(CHUNK * MAX_CUBES).max(1);
    (elements.div_ceil(per_cube), per_cube)
}

#[cube(launch)]
fn partial_statistics(input: &Array<f32>, partials: &mut Array<f32>, chunk: u32) {
    let units = 256usize;
    let unit = UNIT_POS_X as usize;
    let cube = CUBE_POS_X as usize;
    let start = cube * chunk as usize;
    let end = min(start + chunk as usize, input.len());

    let mut nan = f32::new(0.0);
    let mut pos_inf = f32::new(0.0);
    let mut neg_inf = f32::new(0.0);
    let mut lo = f32::new(3.4028235e38);
    let mut hi = f32::new(-3.4028235e38);
    let mut sum = f32::new(0.0);
    let mut squares = f32::new(0.0);
    let mut absolute = f32::new(0.0);
    let mut weighted = f32::new(0.0);
    let mut i = start + unit;
    while i < end {
        let x = input[i];
        if x.is_nan() {
            nan += 1.0;
        } else if x.is_inf() {
            if x > 0.0 {
                pos_inf += 1.0;
            } else {
                neg_inf += 1.0;
            }
        } else {
            lo = min(lo, x);
            hi = max(hi, x);
            sum += x;
            squares += x * x;
            absolute += x.abs();
            weighted += x * f32::cast_from((i % 1021usize + 1usize) as u32);
        }
        i += units;
    }

    let mut shared = SharedMemory::<f32>::new(2304usize);
    shared[unit] = nan;
    shared[units + unit] = pos_inf;
    shared[2usize * units + unit] = neg_inf;
    shared[3usize * units + unit] = lo;
    shared[4usize * units + unit] = hi;
    shared[5usize * units + unit] = sum;
    shared[6usize * units + unit] = squares;
    shared[7usize * units + unit] = absolute;
    shared[8usize * units + unit] = weighted;
    sync_cube();

    // The tree: 128 units add the other 128's, then 64, ... (strides written out: a loop's
    // counter would be a compile-time constant).
    combine(&mut shared, unit, 128usize);
    combine(&mut shared, unit, 64usize);
    combine(&mut shared, unit, 32usize);
    combine(&mut shared, unit, 16usize);
    combine(&mut shared, unit, 8usize);
    combine(&mut shared, unit, 4usize);
    combine(&mut shared, unit, 2usize);
    combine(&mut shared, unit, 1usize);

    if unit == 0usize {
        #[unroll]
        for k in 0..9usize {
            partials[cube * 9usize + k] = shared[k * 256usize];
        }
    }
}

/// One level of the tree: each unit under `stride` takes in the statistics of the unit
/// `stride` above it.
#[cube]
fn combine(shared: &mut SharedMemory<f32>, unit: usize, #[comptime] stride: usize) {
    let units = 256usize;
    if unit < stride {
        let other = unit + stride;
        shared[unit] += shared[other];
        shared[units + unit] += shared[units + other];
        shared[2usize * units + unit] += shared[2usize * units + other];
        shared[3usize * units + unit] = min(
            shared[3usize * units + unit],
            shared[3usize * units + other],
        );
        shared[4usize * units + unit] = max(
            shared[4usize * units + unit],
            shared[4usize * units + other],
        );
        shared[5usize * units + unit] += shared[5usize * units + other];
        shared[6usize * units + unit] += shared[6usize * units + other];
        shared[7usize * units + unit] += shared[7usize * units + other];
        shared[8usize * units + unit] += shared[8usize * units + other];
    }
    sync_cube();
}

/// `flat`'s partial statistics, when `B` is one of CubeCL's backends (its float primitive a
/// `CubeTensor` of a runtime built in); `Err(flat)` elsewhere.
pub(crate) fn partials_of<B: Backend>(
    flat: B::FloatTensorPrimitive,
) -> Result<B::FloatTensorPrimitive, B::FloatTensorPrimitive> {
    let reduced = Err(flat);
    #[cfg(feature = "wgpu")]
    let reduced = reduced.or_else(on::<B, burn_cubecl::cubecl::wgpu::WgpuRuntime>);
    #[cfg(feature = "cuda")]
    let reduced = reduced.or_else(on::<B, burn_cubecl::cubecl::cuda::CudaRuntime>);
    reduced
}

/// `Ok(partials)` when `B`'s float primitive is `CubeTensor<R>`, `Err(flat)` otherwise.
#[cfg_attr(not(any(feature = "wgpu", feature = "cuda")), allow(dead_code))]
fn on<B: Backend, R: CubeRuntime>(
    flat: B::FloatTensorPrimitive,
) -> Result<B::FloatTensorPrimitive, B::FloatTensorPrimitive> {
    let mut slot = Some(flat);
    let cube = (&mut slot as &mut dyn Any).downcast_mut::<Option<CubeTensor<R>>>();
    let Some(tensor) = cube.and_then(Option::take) else {
        return match slot {
            Some(flat) => Err(flat),
            None => unreachable!("taken only when it is a CubeTensor<R>"),
        };
    };
    let mut back: Option<B::FloatTensorPrimitive> = None;
    if let Some(back) = (&mut back as &mut dyn Any).downcast_mut::<Option<CubeTensor<R>>>() {
        *back = Some(partials(tensor));
    }
    match back {
        Some(partials) => Ok(partials),
        None => unreachable!("B's float primitive is CubeTensor<R>"),
    }
}

/// `flat`'s partial statistics (a contiguous f32 tensor of one dimension), [`STATISTICS`]
/// numbers per chunk of [`chunks`].
pub(crate) fn partials<R: CubeRuntime>(flat: CubeTensor<R>) -> CubeTensor<R> {
    let flat = into_contiguous(flat);
    let elements = flat.meta.num_elements();
    let (count, per_cube) = chunks(elements);
    let client = flat.client.clone();
    let output = empty_device_dtype(
        client.clone(),
        flat.device.clone(),
        Shape::new([count * STATISTICS]),
        DType::F32,
    );
    // `chunk` fits a u32: a tensor's elements per cube are at most 2^32 / 65,535 chunks.
    let chunk = u32::try_from(per_cube).unwrap_or(u32::MAX);
    partial_statistics::launch::<R>(
        &client,
        CubeCount::Static(count as u32, 1, 1),
        CubeDim::new_1d(UNITS),
        flat.into_array_arg(),
        output.clone().into_array_arg(),
        chunk,
    );
    output
}

/// The fingerprint of a tensor of `dtype` and `shape`, from its chunks' `partials` as read.
pub(crate) fn fingerprint(dtype: &str, shape: &[usize], partials: &[f32]) -> Fingerprint {
    let elements: usize = shape.iter().product();
    let (_, per_cube) = chunks(elements);
    let mut print = Fingerprint::of::<f32>(&[], shape);
    print.dtype = dtype.to_owned();
    print.elements = elements as u64;
    for (index, chunk) in partials.chunks_exact(STATISTICS).enumerate() {
        let [
            nan,
            pos_inf,
            neg_inf,
            lo,
            hi,
            sum,
            squares,
            absolute,
            weighted,
        ] = chunk.try_into().unwrap_or([0.0; STATISTICS]);
        let (nan, pos_inf, neg_inf) = (nan as u64, pos_inf as u64, neg_inf as u64);
        print.nan += nan;
        print.pos_inf += pos_inf;
        print.neg_inf += neg_inf;
        let size = per_cube.min(elements.saturating_sub(index * per_cube)) as u64;
        if size > nan + pos_inf + neg_inf {
            let (lo, hi) = (f64::from(lo), f64::from(hi));
            print.min = Some(print.min.map_or(lo, |m| m.min(lo)));
            print.max = Some(print.max.map_or(hi, |m| m.max(hi)));
        }
        print.sum += f64::from(sum);
        print.sum_squares += f64::from(squares);
        print.sum_abs += f64::from(absolute);
        print.weighted_sum += f64::from(weighted);
    }
    print
}
