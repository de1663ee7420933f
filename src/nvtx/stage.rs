//! Stage markers without editing model code: a module wrapper that runs a sub-module's forward
//! inside a named range, and begin/end signposts for variants of a run.

use core::fmt;
use core::ops::Deref;

use burn::module::{
    AutodiffModule, Content, DisplaySettings, HasAutodiffModule, Module, ModuleDisplay,
    ModuleDisplayDefault, ModuleMapper, ModuleVisitor,
};
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{Device, Int, Tensor};

use burn_profiled_core::nvtx::{Label, mark_with, range_with};

/// A module with a single-input `forward`, so that [`Ranged`] can run it inside a range.
///
/// Implemented for Burn's `nn` modules and activations. For a module of your own, implement it
/// by calling your `forward`, or use [`Ranged::run`].
pub trait Forward<Input> {
    /// What `forward` returns.
    type Output;
    /// The module's forward pass.
    fn forward(&self, input: Input) -> Self::Output;
}

/// A sub-module whose `forward` runs inside an NVTX range named after it.
///
/// Change the field's type, not the code that calls it: `self.encoder.forward(x)` then runs in
/// the range `encoder`. The wrapper is transparent to Burn: its record is the inner module's
/// record (checkpoints load unchanged), parameters keep their paths, and `Deref` reaches every
/// other method of the inner module.
///
/// ```
/// use burn::backend::NdArray;
/// use burn::module::Module;
/// use burn::nn::{Linear, LinearConfig};
/// use burn::tensor::Tensor;
/// use burn_profiled::nvtx::Ranged;
///
/// #[derive(Module, Debug)]
/// struct Net<B: burn::tensor::backend::Backend> {
///     encoder: Ranged<Linear<B>>, // was: Linear<B>
/// }
///
/// let device = Default::default();
/// let net = Net::<NdArray> { encoder: Ranged::new("encoder", LinearConfig::new(4, 2).init(&device)) };
/// let y = net.encoder.forward(Tensor::<NdArray, 2>::ones([3, 4], &device));
/// assert_eq!(y.dims(), [3, 2]);
/// ```
#[derive(Clone, Debug)]
pub struct Ranged<M> {
    inner: M,
    label: Label,
}

impl<M> Ranged<M> {
    /// Wraps `inner`; its forward runs in a range named `label`.
    pub fn new(label: impl Into<Label>, inner: M) -> Self {
        Ranged {
            inner,
            label: label.into(),
        }
    }

    /// The range's label.
    pub fn label(&self) -> &Label {
        &self.label
    }

    /// The wrapped module.
    pub fn into_inner(self) -> M {
        self.inner
    }

    /// Runs `work` on the wrapped module inside the range, for forwards with several inputs or
    /// another name.
    pub fn run<T>(&self, work: impl FnOnce(&M) -> T) -> T {
        let _range = range_with(|| self.label.clone());
        work(&self.inner)
    }

    /// The wrapped module's forward, inside the range.
    pub fn forward<I>(&self, input: I) -> M::Output
    where
        M: Forward<I>,
    {
        self.run(|inner| inner.forward(input))
    }
}

impl<M> Deref for Ranged<M> {
    type Target = M;

    fn deref(&self) -> &M {
        &self.inner
    }
}

impl<B: Backend, M: Module<B>> Module<B> for Ranged<M> {
    type Record = M::Record;

    fn collect_devices(&self, devices: Vec<Device<B>>) -> Vec<Device<B>> {
        self.inner.collect_devices(devices)
    }

    fn fork(self, device: &Device<B>) -> Self {
        Ranged::new(self.label, self.inner.fork(device))
    }

    fn to_device(self, device: &Device<B>) -> Self {
        Ranged::new(self.label, self.inner.to_device(device))
    }

    fn visit<V: ModuleVisitor<B>>(&self, visitor: &mut V) {
        self.inner.visit(visitor)
    }

    fn map<Mapper: ModuleMapper<B>>(self, mapper: &mut Mapper) -> Self {
        Ranged::new(self.label, self.inner.map(mapper))
    }

    fn load_record(self, record: Self::Record) -> Self {
        Ranged::new(self.label, self.inner.load_record(record))
    }

    fn into_record(self) -> Self::Record {
        self.inner.into_record()
    }
}

impl<B: AutodiffBackend, M: AutodiffModule<B>> AutodiffModule<B> for Ranged<M> {
    type InnerModule = Ranged<M::InnerModule>;

    fn valid(&self) -> Self::InnerModule {
        Ranged::new(self.label.clone(), self.inner.valid())
    }

    fn from_inner(module: Self::InnerModule) -> Self {
        Ranged::new(module.label, M::from_inner(module.inner))
    }
}

impl<B: AutodiffBackend, M: HasAutodiffModule<B>> HasAutodiffModule<B> for Ranged<M> {
    type TrainModule = Ranged<M::TrainModule>;
}

impl<M: ModuleDisplayDefault> ModuleDisplayDefault for Ranged<M> {
    fn content(&self, content: Content) -> Option<Content> {
        self.inner.content(content)
    }

    fn num_params(&self) -> usize {
        self.inner.num_params()
    }
}

impl<M: ModuleDisplay> ModuleDisplay for Ranged<M> {
    fn format(&self, passed_settings: DisplaySettings) -> String {
        self.inner.format(passed_settings)
    }

    fn custom_settings(&self) -> Option<DisplaySettings> {
        self.inner.custom_settings()
    }

    fn custom_content(&self, content: Content) -> Option<Content> {
        self.inner.custom_content(content)
    }
}

impl<M: fmt::Display> fmt::Display for Ranged<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.fmt(f)
    }
}

/// `Forward` for modules generic over the backend whose forward takes a tensor of any rank.
macro_rules! forward_any_rank {
    ($($module:ty),* $(,)?) => {$(
        impl<B: Backend, const D: usize> Forward<Tensor<B, D>> for $module {
            type Output = Tensor<B, D>;
            fn forward(&self, input: Tensor<B, D>) -> Tensor<B, D> {
                <$module>::forward(self, input)
            }
        }
    )*};
}

/// `Forward` for modules whose forward maps one fixed input type to one output type.
macro_rules! forward_fixed {
    ($($module:ty: $input:ty => $output:ty),* $(,)?) => {$(
        impl<B: Backend> Forward<$input> for $module {
            type Output = $output;
            fn forward(&self, input: $input) -> $output {
                <$module>::forward(self, input)
            }
        }
    )*};
}

use burn::nn::{
    self,
    attention::{MhaInput, MhaOutput, MultiHeadAttention},
    conv, pool,
    transformer::{PositionWiseFeedForward, TransformerEncoder, TransformerEncoderInput},
};

forward_any_rank!(
    nn::Linear<B>,
    nn::BatchNorm<B>,
    nn::LayerNorm<B>,
    nn::GroupNorm<B>,
    nn::RmsNorm<B>,
    nn::InstanceNorm<B>,
    PositionWiseFeedForward<B>,
    nn::PRelu<B>,
    nn::SwiGlu<B>,
    nn::Dropout,
    nn::Relu,
    nn::Gelu,
    nn::Sigmoid,
    nn::Tanh,
    nn::LeakyRelu,
    nn::Elu,
    nn::Selu,
    nn::Celu,
    nn::Softplus,
    nn::Softsign,
    nn::HardSigmoid,
);

forward_fixed!(
    conv::Conv1d<B>: Tensor<B, 3> => Tensor<B, 3>,
    conv::Conv2d<B>: Tensor<B, 4> => Tensor<B, 4>,
    conv::Conv3d<B>: Tensor<B, 5> => Tensor<B, 5>,
    conv::ConvTranspose1d<B>: Tensor<B, 3> => Tensor<B, 3>,
    conv::ConvTranspose2d<B>: Tensor<B, 4> => Tensor<B, 4>,
    conv::ConvTranspose3d<B>: Tensor<B, 5> => Tensor<B, 5>,
    nn::Embedding<B>: Tensor<B, 2, Int> => Tensor<B, 3>,
    MultiHeadAttention<B>: MhaInput<B> => MhaOutput<B>,
    TransformerEncoder<B>: TransformerEncoderInput<B> => Tensor<B, 3>,
    pool::MaxPool1d: Tensor<B, 3> => Tensor<B, 3>,
    pool::MaxPool2d: Tensor<B, 4> => Tensor<B, 4>,
    pool::AvgPool1d: Tensor<B, 3> => Tensor<B, 3>,
    pool::AvgPool2d: Tensor<B, 4> => Tensor<B, 4>,
    pool::AdaptiveAvgPool1d: Tensor<B, 3> => Tensor<B, 3>,
    pool::AdaptiveAvgPool2d: Tensor<B, 4> => Tensor<B, 4>,
);

/// Marks the start of a variant of a run now and its end (`{name}_end`) when dropped, so the
/// variants of one run (say `image` and `lidar` inputs) can be told apart on the timeline.
///
/// ```
/// use burn_profiled::nvtx;
///
/// {
///     let _image = nvtx::signpost("image"); // mark `image`
///     // ... the image variant
/// } // mark `image_end`
/// ```
pub fn signpost(name: &str) -> Signpost {
    mark_with(|| name);
    Signpost {
        name: burn_profiled_core::nvtx::is_enabled().then(|| name.to_owned()),
    }
}

/// The open signpost of [`signpost`]; marks `{name}_end` when dropped.
#[must_use = "the end mark is placed when this guard is dropped"]
#[derive(Debug)]
pub struct Signpost {
    name: Option<String>,
}

impl Drop for Signpost {
    fn drop(&mut self) {
        if let Some(name) = &self.name {
            mark_with(|| format!("{name}_end"));
        }
    }
}
