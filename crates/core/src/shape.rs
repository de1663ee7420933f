//! A tensor's shape as the op path records it: the dims, kept inline up to rank 5.

use std::fmt;

use smallvec::SmallVec;

/// The dims of one tensor argument of an op, for statistics by shapes and the timeline's
/// `Input Dims`.
///
/// ```
/// use burn_profiled_core::shape::Shape;
///
/// let shape = Shape::from([8, 3, 32, 32].as_slice());
/// assert_eq!(shape.as_slice(), [8, 3, 32, 32]);
/// assert_eq!(format!("{shape:?}"), "[8, 3, 32, 32]");
/// ```
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Shape(SmallVec<[usize; 5]>);

impl Shape {
    /// The dims, outermost first.
    pub fn as_slice(&self) -> &[usize] {
        &self.0
    }
}

impl From<&[usize]> for Shape {
    fn from(dims: &[usize]) -> Self {
        Shape(SmallVec::from_slice(dims))
    }
}

impl fmt::Debug for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_slice(), f)
    }
}
