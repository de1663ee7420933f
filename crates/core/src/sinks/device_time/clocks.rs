//! The source's clock (CUPTI's) put on the shared clock: both are read side by side when
//! recording starts and at every collection, and a timestamp between two readings is placed
//! by the line through them. One offset for a whole run would let the two clocks' rates part
//! it: `quanta`'s calibrated counter and the OS clock were measured up to 1.2 µs a second
//! apart on this project's VM, 4 ms over an hour, which puts kernels beside their ops.
//!
//! Only where an interval starts follows the line; how long it lasted is the source's own
//! count. The rates part by about a millionth, under a nanosecond on a millisecond kernel,
//! while the line's slope between readings a few milliseconds apart is only known to about
//! a thousandth: scaling durations by it would add error, and durations would no longer
//! match what Nsight Systems shows for the same kernel.

use std::time::Duration;

use super::Source;
use crate::context::clock;

/// The two clocks read side by side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Reading {
    /// The source's clock, in ns.
    source_ns: i128,
    /// The source's clock minus the shared clock, in ns.
    offset_ns: i128,
}

impl Reading {
    /// Of a few readings of the source's clock between two of the shared clock, the one read
    /// in the shortest window, against its middle (timestamps then land on the shared clock
    /// within a fraction of that window).
    pub(super) fn take(source: &dyn Source) -> Self {
        (0..8)
            .map(|_| {
                let before = clock::now().as_nanos() as i128;
                let source_ns = i128::from(source.timestamp_ns());
                let after = clock::now().as_nanos() as i128;
                let reading = Self {
                    source_ns,
                    offset_ns: source_ns - (before + after) / 2,
                };
                (after - before, reading)
            })
            .min_by_key(|(window, _)| *window)
            .map(|(_, reading)| reading)
            .expect("eight readings")
    }
}

/// The last two readings: a collection's records lie between them.
#[derive(Debug, Clone, Copy)]
pub(super) struct ClockMap {
    earlier: Reading,
    latest: Reading,
}

impl ClockMap {
    pub(super) fn new(reading: Reading) -> Self {
        Self {
            earlier: reading,
            latest: reading,
        }
    }

    /// A new reading, taken after the source handed over its records.
    pub(super) fn advance(&mut self, reading: Reading) {
        self.earlier = self.latest;
        self.latest = reading;
    }

    /// `ns` on the source's clock, on the shared clock: between the two readings on the line
    /// through them; before the earlier (a record held back a collection) or after the latest
    /// (a kernel's end still to come), at that reading's offset.
    pub(super) fn on_shared_clock(self, ns: u64) -> Duration {
        let ns = i128::from(ns);
        let (earlier, latest) = (self.earlier, self.latest);
        let offset = if ns >= latest.source_ns {
            latest.offset_ns
        } else if ns <= earlier.source_ns {
            earlier.offset_ns
        } else {
            let (along, span) = (ns - earlier.source_ns, latest.source_ns - earlier.source_ns);
            earlier.offset_ns + (latest.offset_ns - earlier.offset_ns) * along / span
        };
        Duration::from_nanos((ns - offset).clamp(0, i128::from(u64::MAX)) as u64)
    }

    /// The interval from `start_ns` to `end_ns` on the source's clock, on the shared clock:
    /// its start placed by [`Self::on_shared_clock`], its length the source's.
    pub(super) fn interval_on_shared_clock(
        self,
        start_ns: u64,
        end_ns: u64,
    ) -> (Duration, Duration) {
        let start = self.on_shared_clock(start_ns);
        (
            start,
            start + Duration::from_nanos(end_ns.saturating_sub(start_ns)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(source_ns: i128, shared_ns: i128) -> Reading {
        Reading {
            source_ns,
            offset_ns: source_ns - shared_ns,
        }
    }

    #[test]
    fn one_reading_is_one_offset() {
        let map = ClockMap::new(reading(5_000_000, 1_000));
        assert_eq!(map.on_shared_clock(5_000_000), Duration::from_nanos(1_000));
        assert_eq!(map.on_shared_clock(5_000_700), Duration::from_nanos(1_700));
        assert_eq!(map.on_shared_clock(4_999_500), Duration::from_nanos(500));
    }

    #[test]
    fn between_two_readings_a_timestamp_is_placed_on_the_line_through_them() {
        // The source's clock gains 1 µs over the 1 ms between the readings.
        let mut map = ClockMap::new(reading(5_000_000, 1_000));
        map.advance(reading(5_001_001, 2_000));
        assert_eq!(map.on_shared_clock(5_000_000), Duration::from_nanos(1_000));
        assert_eq!(map.on_shared_clock(5_000_500), Duration::from_nanos(1_500));
        assert_eq!(map.on_shared_clock(5_001_001), Duration::from_nanos(2_000));
        // Outside them, the nearer reading's offset.
        assert_eq!(map.on_shared_clock(4_999_000), Duration::from_nanos(0));
        assert_eq!(map.on_shared_clock(5_002_001), Duration::from_nanos(3_000));
        // A third reading: the first is let go.
        map.advance(reading(5_002_001, 3_000));
        assert_eq!(map.on_shared_clock(5_001_000), Duration::from_nanos(1_999));
        assert_eq!(map.on_shared_clock(5_001_501), Duration::from_nanos(2_500));
    }

    #[test]
    fn an_interval_starts_on_the_line_and_lasts_as_long_as_the_source_says() {
        let mut map = ClockMap::new(reading(5_000_000, 1_000));
        map.advance(reading(5_001_001, 2_000));
        let (start, end) = map.interval_on_shared_clock(5_000_500, 5_000_999);
        assert_eq!(start, Duration::from_nanos(1_500));
        assert_eq!(end - start, Duration::from_nanos(499));
        // An end before its start (a malformed record) is an empty interval.
        let (start, end) = map.interval_on_shared_clock(5_000_500, 5_000_000);
        assert_eq!(end, start);
    }

    #[test]
    fn a_source_clock_that_stood_still_keeps_each_readings_offset() {
        let mut map = ClockMap::new(reading(5_000_000, 1_000));
        map.advance(reading(5_000_000, 9_000));
        assert_eq!(map.on_shared_clock(4_999_000), Duration::from_nanos(0));
        assert_eq!(map.on_shared_clock(5_000_000), Duration::from_nanos(9_000));
        assert_eq!(map.on_shared_clock(5_000_010), Duration::from_nanos(9_010));
    }
}
