//! Which op launched which kernel: CUPTI's activity records, matched to ops through external
//! correlation ids.
//!
//! Each op pushes its own external id while it runs. CUPTI then tags every driver call made
//! meanwhile on that thread with an `EXTERNAL_CORRELATION` record (external id -> the call's
//! correlation id), and each kernel record carries the correlation id of the call that launched
//! it. Records come in buffers, in no particular order: a kernel may arrive before the record
//! that names its op, and one op's kernels may be spread over several buffers. Kernels whose
//! call was made under no op (or under an id this run did not hand out) are kept apart as
//! unattributed. With ops nested, CUPTI tags a call with the innermost op's id: device time is
//! the op's own, not its children's.

use std::collections::HashMap;

use crate::context::kernel::KernelShape;

/// A kernel as CUPTI's `CONCURRENT_KERNEL` record describes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[doc(hidden)]
pub struct Kernel {
    /// The correlation id of the driver call that launched it.
    pub correlation: u32,
    /// Device timestamps, in ns on the CUPTI clock.
    pub start_ns: u64,
    pub end_ns: u64,
    pub device: u32,
    pub stream: u32,
    pub name: String,
    /// How it was launched, as the record says.
    pub shape: KernelShape,
    /// The driver (or runtime) call that launched it, once its record is matched.
    pub call: Option<ApiCall>,
}

/// A driver or runtime API call, as CUPTI's `DRIVER` and `RUNTIME` records describe it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[doc(hidden)]
pub struct ApiCall {
    /// CUPTI's callback id: which function (`cuLaunchKernel` is 307).
    pub cbid: u32,
    /// Host timestamps, in ns on the CUPTI clock.
    pub start_ns: u64,
    pub end_ns: u64,
    /// CUPTI's id of the calling thread.
    pub thread: u32,
}

impl Kernel {
    #[doc(hidden)]
    pub fn duration_ns(&self) -> u64 {
        self.end_ns.saturating_sub(self.start_ns)
    }

    /// Handed over while it ran (a forced flush without a sync): no end yet.
    fn is_incomplete(&self) -> bool {
        self.end_ns == 0 || self.end_ns < self.start_ns
    }
}

/// The activity records attribution needs.
#[cfg_attr(not(feature = "cupti"), allow(dead_code))]
#[derive(Debug, Clone, PartialEq, Eq)]
#[doc(hidden)]
pub enum Activity {
    /// `EXTERNAL_CORRELATION`: the driver call `correlation` was made under op id `external`.
    External { external: u64, correlation: u32 },
    /// `CONCURRENT_KERNEL`.
    Kernel(Kernel),
    /// `DRIVER` or `RUNTIME`: the API call `correlation`.
    Api { correlation: u32, call: ApiCall },
}

/// Kernels matched to the ops that launched them, by op id.
#[derive(Debug, Default)]
#[doc(hidden)]
pub struct Correlator {
    /// The op id each driver call was made under.
    external_of: HashMap<u32, u64>,
    /// The API calls made under an op, by correlation id, until their kernel is taken.
    calls: HashMap<u32, ApiCall>,
    /// Kernels whose call has not been matched to an op yet.
    waiting: HashMap<u32, Vec<Kernel>>,
    /// Kernels matched to an op, with its id, in the order they were matched.
    attributed: Vec<(u64, Kernel)>,
    /// API calls (driver or runtime) tagged with an op id, over the run.
    tagged: u64,
    /// Kernels left out because they came without an end.
    incomplete: u64,
}

impl Correlator {
    /// Takes one record, in any order relative to the others.
    #[cfg_attr(not(feature = "cupti"), allow(dead_code))]
    #[doc(hidden)]
    pub fn ingest(&mut self, activity: Activity) {
        match activity {
            Activity::External {
                external,
                correlation,
            } => {
                self.tagged += 1;
                self.external_of.insert(correlation, external);
                if let Some(kernels) = self.waiting.remove(&correlation) {
                    self.attributed
                        .extend(kernels.into_iter().map(|kernel| (external, kernel)));
                }
            }
            // CUPTI writes a call's `EXTERNAL_CORRELATION` record ahead of it: a call with
            // none was made under no op.
            Activity::Api { correlation, call } => {
                if self.external_of.contains_key(&correlation) {
                    self.calls.insert(correlation, call);
                }
            }
            Activity::Kernel(kernel) if kernel.is_incomplete() => self.incomplete += 1,
            Activity::Kernel(kernel) => match self.external_of.get(&kernel.correlation) {
                Some(&external) => self.attributed.push((external, kernel)),
                None => self
                    .waiting
                    .entry(kernel.correlation)
                    .or_default()
                    .push(kernel),
            },
        }
    }

    /// The kernels matched so far, with their op ids and, where its record came, the call
    /// that launched each; they are not returned again.
    #[doc(hidden)]
    pub fn take_attributed(&mut self) -> Vec<(u64, Kernel)> {
        self.attach_calls();
        std::mem::take(&mut self.attributed)
    }

    /// Gives each matched kernel the call that launched it, where its record came.
    fn attach_calls(&mut self) {
        for (_, kernel) in &mut self.attributed {
            if kernel.call.is_none() {
                kernel.call = self.calls.remove(&kernel.correlation);
            }
        }
    }

    /// Takes the kernels matched to op ids `known` does not know; those of known ops stay.
    #[doc(hidden)]
    pub fn take_unknown(&mut self, known: impl Fn(u64) -> bool) -> Vec<Kernel> {
        self.attributed
            .extract_if(.., |(id, _)| !known(*id))
            .map(|(_, kernel)| kernel)
            .collect()
    }

    /// API calls (driver or runtime) tagged with an op id so far.
    #[doc(hidden)]
    pub fn tagged_api_calls(&self) -> u64 {
        self.tagged
    }

    /// Kernels left out so far because they came without an end.
    #[doc(hidden)]
    pub fn incomplete_kernels(&self) -> u64 {
        self.incomplete
    }

    /// Forgets the driver calls of the ops `forgotten` says are gone, so what is kept stays
    /// bounded over a long run.
    #[doc(hidden)]
    pub fn forget_ops(&mut self, forgotten: impl Fn(u64) -> bool) {
        self.external_of.retain(|_, external| !forgotten(*external));
        let external_of = &self.external_of;
        self.calls
            .retain(|correlation, _| external_of.contains_key(correlation));
    }

    /// Ends a run: the kernels still unmatched, which no op launched, in device time order.
    /// Forgets the driver calls, once the matched kernels that stay have theirs.
    #[doc(hidden)]
    pub fn finish(&mut self) -> Vec<Kernel> {
        self.attach_calls();
        let mut unattributed: Vec<Kernel> = self.waiting.drain().flat_map(|(_, k)| k).collect();
        unattributed.sort_by_key(|kernel| (kernel.start_ns, kernel.correlation));
        self.external_of.clear();
        self.calls.clear();
        unattributed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(correlation: u32, start_ns: u64, end_ns: u64, stream: u32) -> Activity {
        Activity::Kernel(Kernel {
            correlation,
            start_ns,
            end_ns,
            device: 0,
            stream,
            name: format!("k{correlation}"),
            ..Kernel::default()
        })
    }

    fn call(correlation: u32, start_ns: u64) -> Activity {
        Activity::Api {
            correlation,
            call: ApiCall {
                cbid: 307,
                start_ns,
                end_ns: start_ns + 1,
                thread: 5,
            },
        }
    }

    fn external(external: u64, correlation: u32) -> Activity {
        Activity::External {
            external,
            correlation,
        }
    }

    fn matched(correlator: &mut Correlator) -> Vec<(u64, u32)> {
        correlator
            .take_attributed()
            .into_iter()
            .map(|(op, kernel)| (op, kernel.correlation))
            .collect()
    }

    #[test]
    fn kernels_match_their_op_whichever_record_comes_first() {
        let mut correlator = Correlator::default();
        // Op 1 launched calls 10 and 11; op 2 launched call 12, whose kernel came first.
        for record in [
            kernel(12, 50, 60, 7),
            external(1, 10),
            kernel(10, 0, 10, 7),
            external(1, 11),
            external(2, 12),
            kernel(11, 20, 25, 8),
        ] {
            correlator.ingest(record);
        }
        assert_eq!(matched(&mut correlator), [(1, 10), (2, 12), (1, 11)]);
        assert_eq!(matched(&mut correlator), [], "handed out once");
        assert_eq!(correlator.finish(), []);
    }

    #[test]
    fn one_ops_kernels_spread_over_two_buffers_all_match() {
        let mut correlator = Correlator::default();
        correlator.ingest(external(5, 1));
        correlator.ingest(kernel(1, 0, 3, 0));
        let first = matched(&mut correlator);
        correlator.ingest(kernel(1, 4, 9, 0));
        correlator.ingest(kernel(1, 10, 12, 1));
        let second = matched(&mut correlator);
        assert_eq!((first, second), (vec![(5, 1)], vec![(5, 1), (5, 1)]));
    }

    #[test]
    fn a_kernel_launched_under_no_op_stays_unattributed() {
        let mut correlator = Correlator::default();
        correlator.ingest(kernel(3, 30, 40, 0));
        correlator.ingest(external(1, 2));
        correlator.ingest(kernel(4, 10, 20, 0));
        assert_eq!(matched(&mut correlator), []);
        let unattributed: Vec<u32> = correlator
            .finish()
            .iter()
            .map(|kernel| kernel.correlation)
            .collect();
        assert_eq!(unattributed, [4, 3], "in device time order");
    }

    #[test]
    fn a_kernel_handed_over_before_it_ended_is_counted_apart() {
        let mut correlator = Correlator::default();
        correlator.ingest(external(1, 10));
        correlator.ingest(kernel(10, 5, 0, 0));
        correlator.ingest(kernel(11, 0, 0, 0));
        correlator.ingest(external(1, 12));
        correlator.ingest(kernel(12, 5, 9, 0));
        assert_eq!(matched(&mut correlator), [(1, 12)]);
        assert_eq!(
            (
                correlator.incomplete_kernels(),
                correlator.tagged_api_calls()
            ),
            (2, 2)
        );
        assert_eq!(correlator.finish(), []);
    }

    #[test]
    fn the_calls_of_forgotten_ops_are_forgotten_too() {
        let mut correlator = Correlator::default();
        correlator.ingest(external(1, 10));
        correlator.ingest(external(2, 11));
        correlator.forget_ops(|op| op == 1);
        correlator.ingest(kernel(10, 0, 5, 0));
        correlator.ingest(kernel(11, 5, 9, 0));
        assert_eq!(matched(&mut correlator), [(2, 11)]);
        let unattributed: Vec<u32> = correlator.finish().iter().map(|k| k.correlation).collect();
        assert_eq!(unattributed, [10]);
    }

    #[test]
    fn each_kernel_comes_with_the_call_that_launched_it_once_both_records_came() {
        let mut correlator = Correlator::default();
        // As CUPTI writes them: the kernel in the device buffer, handed over first; then the
        // tag and the call. A call made under no op (13) is not kept.
        for record in [
            kernel(10, 100, 110, 7),
            external(1, 10),
            call(10, 40),
            call(13, 60),
            external(1, 11),
            call(11, 50),
            kernel(11, 120, 130, 7),
        ] {
            correlator.ingest(record);
        }
        let calls: Vec<(u32, Option<u64>)> = correlator
            .take_attributed()
            .into_iter()
            .map(|(_, kernel)| (kernel.correlation, kernel.call.map(|c| c.start_ns)))
            .collect();
        assert_eq!(calls, [(10, Some(40)), (11, Some(50))]);
        assert!(correlator.calls.is_empty(), "{:?}", correlator.calls);
        // Matched before the run ended, taken after: the call stays with its kernel.
        for record in [external(1, 15), call(15, 80), kernel(15, 140, 150, 7)] {
            correlator.ingest(record);
        }
        assert_eq!(correlator.finish(), []);
        let (_, last) = correlator.take_attributed().pop().unwrap();
        assert_eq!(last.call.map(|c| c.start_ns), Some(80));
        correlator.ingest(external(2, 12));
        correlator.ingest(call(12, 70));
        correlator.forget_ops(|op| op == 2);
        assert!(correlator.calls.is_empty(), "{:?}", correlator.calls);
    }
}
