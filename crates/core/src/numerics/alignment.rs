//! [`Alignment`]: which records of two runs made the same tensors, and each pair's [`Region`].

/// Which records of two runs are the same op call, by index into each side's records.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Alignment {
    /// `(reference, current)` index pairs of records that made the same tensor, in the
    /// reference's order.
    pub pairs: Vec<(usize, usize)>,
    /// Each pair's region, in the order of [`pairs`](Self::pairs) (empty where the runs were
    /// aligned by their op sequences).
    pub regions: Vec<Region>,
    /// Records of the reference no record of the current run was aligned with and that are
    /// in no pair's region (removed ops).
    pub only_reference: Vec<usize>,
    /// Records of the current run no reference record was aligned with and that are in no
    /// pair's region (inserted ops).
    pub only_current: Vec<usize>,
    /// Records of the reference that repeat another record of their step on the same inputs,
    /// and whose outputs no op read (autotune's trial runs): left out of the pairing.
    pub repeats_reference: Vec<usize>,
    /// The same, of the current run.
    pub repeats_current: Vec<usize>,
    /// Steps only the reference has.
    pub steps_only_reference: Vec<u64>,
    /// Steps only the current run has.
    pub steps_only_current: Vec<u64>,
}

/// The records of one pair's region: those not paired that its output was made from, back to
/// the paired tensors it read (by index into each side's records). Two runs that compute a
/// tensor with other ops (`linear` against `matmul, reshape, add`) pair the ops that made it,
/// and the ops before them inside the region.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Region {
    /// The reference's records inside it, in order.
    pub reference: Vec<usize>,
    /// The current run's records inside it, in order.
    pub current: Vec<usize>,
}

impl Alignment {
    /// How many of each side's records are paired, inside a pair's region, or repeats:
    /// `[reference, current]`.
    pub fn covered(&self) -> [usize; 2] {
        let inside = |side: fn(&Region) -> usize| self.regions.iter().map(side).sum::<usize>();
        [
            self.pairs.len()
                + inside(|region| region.reference.len())
                + self.repeats_reference.len(),
            self.pairs.len() + inside(|region| region.current.len()) + self.repeats_current.len(),
        ]
    }
}
