//! The function values `set_gradients` differentiates, for every edition: scalars, summed
//! into one before the one backward pass.

use super::DumpError;

/// The sum of `values`, each of one element (`shape` tells a value's dims, `add` adds two),
/// or an error that says which value was not a scalar, or that there was none.
///
/// ```
/// use burn_profiled_core::dump::function_values::summed;
///
/// let sum = summed(vec![[1.0], [2.5]], |_| vec![1], |a, b| [a[0] + b[0]]).unwrap();
/// assert_eq!(sum, [3.5]);
/// let error = summed(vec![[1.0, 2.0]], |_| vec![2], |a, _| a).unwrap_err();
/// assert!(error.to_string().contains("got shape [2]"));
/// ```
pub fn summed<T>(
    values: Vec<T>,
    shape: impl Fn(&T) -> Vec<usize>,
    add: impl Fn(T, T) -> T,
) -> Result<T, DumpError> {
    if let Some(dims) = values.iter().map(&shape).find(|dims| dims != &[1]) {
        return Err(DumpError::Gradients(format!(
            "`set_gradients` needs scalar function values (one element each); got shape {dims:?}"
        )));
    }
    values.into_iter().reduce(add).ok_or_else(|| {
        DumpError::Gradients("`set_gradients` needs at least one function value".to_owned())
    })
}
