//! Which tensor a primitive is, without reading it: what links an op's input to the op that
//! made it (`[numerics]` fingerprints' producers, `[stats] forward_links`).
//!
//! Known for NdArray and CubeCL's wgpu and CUDA tensors; `None` for other backends (and for
//! fused tensors, whose blocks are probed whole).

#[cfg(any(
    feature = "ndarray",
    feature = "wgpu",
    feature = "cuda",
    feature = "fusion"
))]
use rustc_hash::FxHasher;
use std::any::Any;
#[cfg(any(
    feature = "ndarray",
    feature = "wgpu",
    feature = "cuda",
    feature = "fusion"
))]
use std::hash::{Hash, Hasher};

use burn_backend::TensorMetadata;
use burn_profiled_core::sinks::graph::{self, TensorSeen};

/// A key that stays the same for one tensor while it lives and differs between tensors alive
/// at once, where the backend gives one without reading the tensor: for NdArray its buffer's
/// address, for CubeCL's tensors (wgpu, CUDA) its buffer's memory id and offset, with the
/// shape and strides (a view of another tensor's buffer differs in them). `None` elsewhere.
pub(crate) fn identity<T: 'static>(tensor: &T) -> Option<u64> {
    let tensor = tensor as &dyn Any;
    #[cfg(feature = "ndarray")]
    if let Some(tensor) = tensor.downcast_ref::<burn::backend::ndarray::NdArrayTensor>() {
        return Some(ndarray_identity(tensor));
    }
    #[cfg(feature = "wgpu")]
    if let Some(tensor) = tensor
        .downcast_ref::<burn_cubecl::tensor::CubeTensor<burn_cubecl::cubecl::wgpu::WgpuRuntime>>()
    {
        return cube_identity(tensor);
    }
    #[cfg(feature = "cuda")]
    if let Some(tensor) = tensor
        .downcast_ref::<burn_cubecl::tensor::CubeTensor<burn_cubecl::cubecl::cuda::CudaRuntime>>()
    {
        return cube_identity(tensor);
    }
    let _ = tensor;
    None
}

/// [`identity`] for NdArray's tensors only: what `[numerics]` links an input to its producer
/// by (on CubeCL's backends it reads the input and links it by its fingerprint, which its
/// alignment of runs across backends relies on).
pub(crate) fn ndarray_identity_of<T: 'static>(tensor: &T) -> Option<u64> {
    #[cfg(feature = "ndarray")]
    if let Some(tensor) = (tensor as &dyn Any).downcast_ref() {
        return Some(ndarray_identity(tensor));
    }
    let _ = tensor;
    None
}

#[cfg(feature = "ndarray")]
fn ndarray_identity(tensor: &burn::backend::ndarray::NdArrayTensor) -> u64 {
    use burn::backend::ndarray::NdArrayTensor;
    let mut hasher = FxHasher::default();
    macro_rules! key {
        ($($variant:ident),*) => {
            match tensor {
                $(NdArrayTensor::$variant(storage) => {
                    let view = storage.view();
                    (stringify!($variant), view.as_ptr() as usize, view.shape(), view.strides())
                        .hash(&mut hasher);
                })*
            }
        };
    }
    key!(F64, F32, I64, I32, I16, I8, U64, U32, U16, U8, Bool);
    hasher.finish()
}

/// A CubeCL tensor's identity: its buffer's id, its offset, shape, strides and dtype.
#[cfg(any(feature = "wgpu", feature = "cuda"))]
fn cube_identity<R: burn_cubecl::CubeRuntime>(
    tensor: &burn_cubecl::tensor::CubeTensor<R>,
) -> Option<u64> {
    cube_buffer_identity(
        &tensor.handle,
        tensor.meta.shape(),
        tensor.meta.strides(),
        tensor.dtype,
    )
}

/// The identity of a CubeCL buffer seen with `shape`, `strides` and `dtype`: the same for a
/// tensor of CubeCL's backend ([`identity`]) and for a fused block's handle of the same
/// buffer, so that blocks and the ops fusion runs unfused link to each other.
///
/// cubecl-runtime 0.10 keeps the buffer's `ManagedMemoryId` private and shows it only in the
/// handle's `Debug` text (`Handle { id: ManagedMemoryHandle { descriptor:
/// ManagedMemoryDescriptor { id: ManagedMemoryId { value: 7 }, ..`), read there.
#[cfg(any(feature = "wgpu", feature = "cuda", feature = "fusion"))]
pub(crate) fn cube_buffer_identity(
    handle: &burn_cubecl::cubecl::server::Handle,
    shape: &[usize],
    strides: &[usize],
    dtype: burn_backend::DType,
) -> Option<u64> {
    const ID: &str = "ManagedMemoryId { value: ";
    let text = format!("{handle:?}");
    let at = text.find(ID)? + ID.len();
    let digits = &text[at..];
    let end = digits.find(|c: char| !c.is_ascii_digit())?;
    let memory: u64 = digits[..end].parse().ok()?;
    let mut hasher = FxHasher::default();
    (memory, handle.offset_start, shape, strides, dtype).hash(&mut hasher);
    Some(hasher.finish())
}

/// Where [`Tensors`](crate::op_numerics::Tensors) puts the tensors it finds: an op's numerics
/// (`op_numerics::Seen`) or their [`Identities`].
pub(crate) trait TensorSink {
    fn add<T: TensorMetadata + 'static>(&mut self, tensor: &T);

    /// An optional argument (a linear layer's or a convolution's bias), when given; ignored by
    /// default.
    fn add_optional<T: TensorMetadata + 'static>(&mut self, tensor: Option<&T>) {
        let _ = tensor;
    }
}

/// The identities of the tensors [`Tensors`](crate::op_numerics::Tensors) finds, and whether
/// every one had one; while the graph of a step records, the tensors themselves too.
pub(crate) struct Identities {
    pub(crate) ids: Vec<u64>,
    pub(crate) complete: bool,
    /// The tensors for the graph, each with its host buffer where it has one (NdArray's).
    pub(crate) seen: Option<Vec<(TensorSeen, Option<usize>)>>,
}

impl Default for Identities {
    fn default() -> Self {
        Identities {
            ids: Vec::new(),
            complete: true,
            seen: graph::recording().then(Vec::new),
        }
    }
}

impl Identities {
    /// Some tensor's identity is not known (an op whose tensors were not collected).
    pub(crate) fn unknown(&mut self) {
        self.complete = false;
    }

    /// A tensor known by `id`, of `shape` and `dtype`, with no host buffer (a fused block's).
    #[cfg(feature = "fusion")]
    pub(crate) fn add_known(&mut self, id: u64, shape: &[usize], dtype: burn_backend::DType) {
        self.ids.push(id);
        if let Some(seen) = &mut self.seen {
            let tensor_seen = TensorSeen {
                id,
                bytes: (shape.iter().product::<usize>() * dtype.size()) as u64,
                shape: shape.to_vec(),
                dtype: format!("{dtype:?}").to_lowercase(),
            };
            seen.push((tensor_seen, None));
        }
    }
}

impl TensorSink for Identities {
    fn add<T: TensorMetadata + 'static>(&mut self, tensor: &T) {
        let Some(id) = identity(tensor) else {
            self.complete = false;
            return;
        };
        self.ids.push(id);
        if let Some(seen) = &mut self.seen {
            let (shape, dtype) = (tensor.shape(), tensor.dtype());
            let tensor_seen = TensorSeen {
                id,
                bytes: (shape.num_elements() * dtype.size()) as u64,
                shape: shape.to_vec(),
                dtype: format!("{dtype:?}").to_lowercase(),
            };
            seen.push((tensor_seen, host_buffer(tensor)));
        }
    }

    fn add_optional<T: TensorMetadata + 'static>(&mut self, tensor: Option<&T>) {
        if let Some(tensor) = tensor {
            self.add(tensor);
        }
    }
}

/// Where a tensor's data starts in host memory, where it is a host buffer (NdArray's): the
/// tracking allocator's block of it, when the tensor owns its buffer from its start.
fn host_buffer<T: 'static>(tensor: &T) -> Option<usize> {
    #[cfg(feature = "ndarray")]
    if let Some(tensor) =
        (tensor as &dyn Any).downcast_ref::<burn::backend::ndarray::NdArrayTensor>()
    {
        use burn::backend::ndarray::NdArrayTensor;
        macro_rules! pointer {
            ($($variant:ident),*) => {
                match tensor {
                    $(NdArrayTensor::$variant(storage) => storage.view().as_ptr() as usize,)*
                }
            };
        }
        return Some(pointer!(
            F64, F32, I64, I32, I16, I8, U64, U32, U16, U8, Bool
        ));
    }
    let _ = tensor;
    None
}
