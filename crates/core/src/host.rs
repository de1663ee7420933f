//! The host side of a run: system-wide CPU usage, this process's resident memory, and a guard
//! that stops a run before heavy capture or dumping takes the host down.

use std::sync::{Mutex, PoisonError};

use sysinfo::{
    CpuRefreshKind, MemoryRefreshKind, Pid, ProcessRefreshKind, ProcessesToUpdate, RefreshKind,
    System,
};

/// System-wide CPU usage in percent (0 to 100, all CPUs averaged) since the previous sample,
/// like Python's `psutil.cpu_percent()`. The first sample covers the time since the meter was
/// made.
///
/// On Linux it reads `/proc/stat` at every sample, as psutil does (the kernel counts CPU time
/// in ticks, usually 10 ms). Elsewhere it asks `sysinfo`, which refreshes at most every
/// 200 ms: samples closer together repeat the previous value.
pub struct CpuMeter(Source);

enum Source {
    /// Busy and total CPU time in ticks at the previous sample, from `/proc/stat`.
    ProcStat(CpuTimes),
    /// Where `/proc/stat` cannot be read.
    Sysinfo(Box<System>),
}

/// Busy and total CPU time over all CPUs, in the kernel's ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct CpuTimes {
    busy: u64,
    total: u64,
}

impl CpuTimes {
    /// From `/proc/stat`'s first line: `cpu  user nice system idle iowait irq softirq steal
    /// guest guest_nice`. Busy is all but idle and iowait, as psutil counts it; guest time is
    /// already in user and nice.
    fn parse(stat: &str) -> Option<CpuTimes> {
        let fields: Vec<u64> = stat
            .lines()
            .next()?
            .strip_prefix("cpu ")?
            .split_whitespace()
            .map(|field| field.parse().ok())
            .collect::<Option<_>>()?;
        let total: u64 = fields.iter().take(8).sum();
        let idle = fields.get(3)? + fields.get(4).copied().unwrap_or(0);
        Some(CpuTimes {
            busy: total.saturating_sub(idle),
            total,
        })
    }

    fn read() -> Option<CpuTimes> {
        CpuTimes::parse(&std::fs::read_to_string("/proc/stat").ok()?)
    }

    /// Percent busy from `earlier` to `self`; 0 when no tick passed, as psutil answers.
    fn percent_since(self, earlier: CpuTimes) -> f64 {
        let total = self.total.saturating_sub(earlier.total);
        if total == 0 {
            return 0.0;
        }
        let busy = self.busy.saturating_sub(earlier.busy).min(total);
        100.0 * busy as f64 / total as f64
    }
}

impl CpuMeter {
    /// A meter whose first sample covers the time from now.
    pub fn new() -> Self {
        CpuMeter(match CpuTimes::read() {
            Some(times) => Source::ProcStat(times),
            None => {
                let mut system = System::new_with_specifics(
                    RefreshKind::nothing().with_cpu(CpuRefreshKind::nothing().with_cpu_usage()),
                );
                system.refresh_cpu_usage();
                Source::Sysinfo(Box::new(system))
            }
        })
    }

    /// Percent of all CPUs busy since the previous sample (0 if `/proc/stat` became
    /// unreadable).
    pub fn sample(&mut self) -> f64 {
        match &mut self.0 {
            Source::ProcStat(last) => CpuTimes::read().map_or(0.0, |now| {
                let percent = now.percent_since(*last);
                *last = now;
                percent
            }),
            Source::Sysinfo(system) => {
                system.refresh_cpu_usage();
                f64::from(system.global_cpu_usage()).clamp(0.0, 100.0)
            }
        }
    }
}

impl Default for CpuMeter {
    fn default() -> Self {
        Self::new()
    }
}

/// This process's resident set size (RSS) in bytes, or `None` where the OS does not tell.
///
/// On Linux it reads `/proc/self/statm` (a few microseconds: a session reads it at every
/// step's end); elsewhere it asks `sysinfo`.
pub fn rss_bytes() -> Option<u64> {
    match statm_rss_bytes() {
        Some(bytes) => Some(bytes),
        None => sysinfo_rss_bytes(),
    }
}

/// The resident size from `/proc/self/statm`: its second field, in pages.
fn statm_rss_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let page_size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(page_size)
        .ok()
        .filter(|size| *size > 0)
        .map(|size| pages * size)
}

fn sysinfo_rss_bytes() -> Option<u64> {
    static SYSTEM: Mutex<Option<System>> = Mutex::new(None);
    let pid = Pid::from_u32(std::process::id());
    let mut system = SYSTEM.lock().unwrap_or_else(PoisonError::into_inner);
    let system = system.get_or_insert_with(|| {
        System::new_with_specifics(RefreshKind::nothing().with_memory(MemoryRefreshKind::nothing()))
    });
    system.refresh_processes_specifics(
        ProcessesToUpdate::Some(&[pid]),
        false,
        ProcessRefreshKind::nothing().with_memory(),
    );
    system.process(pid).map(|process| process.memory())
}

/// Stops a run cleanly when the process's resident memory passes a limit.
///
/// Heavy capture (long traces, many dumps) can eat the host's memory; check the guard once per
/// iteration and end the run with its message instead of letting the OS kill it.
///
/// ```
/// # use burn_profiled_core as burn_profiled;
/// use burn_profiled::host::MemoryGuard;
///
/// let guard = MemoryGuard::new(64 << 30); // 64 GiB
/// for _step in 0..3 {
///     if let Err(exceeded) = guard.check() {
///         eprintln!("{exceeded}");
///         break;
///     }
///     // ... one training step
/// }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryGuard {
    limit_bytes: u64,
}

/// The error of [`MemoryGuard::check`], and of a session's device memory limit
/// (`[memory] device_limit_mib`): the run passed its memory limit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", limit_text(self))]
pub struct MemoryLimitExceeded {
    /// What passed its limit: `host` (this process's resident memory) or a device (its
    /// reserved memory), as `Debug` prints it.
    pub memory: String,
    /// The memory measured, in MiB.
    pub used_mib: u64,
    /// The limit, in MiB.
    pub limit_mib: u64,
}

fn limit_text(exceeded: &MemoryLimitExceeded) -> String {
    let MemoryLimitExceeded {
        memory,
        used_mib,
        limit_mib,
    } = exceeded;
    match memory.as_str() {
        "host" => format!(
            "host memory limit reached: this process uses {used_mib} MiB of resident memory, \
             more than the limit of {limit_mib} MiB; stopping the run"
        ),
        device => format!(
            "device memory limit reached: {device} has {used_mib} MiB reserved, more than the \
             limit of {limit_mib} MiB; stopping the run"
        ),
    }
}

impl MemoryGuard {
    /// A guard for `limit_bytes` of resident memory.
    pub fn new(limit_bytes: u64) -> Self {
        MemoryGuard { limit_bytes }
    }

    /// The limit in bytes.
    pub fn limit_bytes(&self) -> u64 {
        self.limit_bytes
    }

    /// Measures the resident memory now; an error once it is above the limit.
    pub fn check(&self) -> Result<(), MemoryLimitExceeded> {
        self.check_rss(rss_bytes().unwrap_or(0))
    }

    /// [`check`](MemoryGuard::check) against a resident size measured elsewhere.
    pub fn check_rss(&self, rss_bytes: u64) -> Result<(), MemoryLimitExceeded> {
        if rss_bytes > self.limit_bytes {
            Err(MemoryLimitExceeded {
                memory: "host".to_owned(),
                used_mib: rss_bytes >> 20,
                limit_mib: self.limit_bytes >> 20,
            })
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_times_from_proc_stat_count_idle_and_iowait_as_not_busy() {
        let stat = "cpu  100 5 50 800 40 3 2 0 7 0\ncpu0 50 2 25 400 20 1 1 0 3 0\nintr 1\n";
        let times = CpuTimes::parse(stat).unwrap();
        assert_eq!(
            times,
            CpuTimes {
                busy: 160,
                total: 1000
            }
        );
        let later = CpuTimes {
            busy: 190,
            total: 1100,
        };
        assert_eq!(later.percent_since(times), 30.0);
        assert_eq!(times.percent_since(times), 0.0, "no tick passed");
        assert_eq!(CpuTimes::parse("intr 1\n"), None);
        assert_eq!(CpuTimes::parse("cpu  1 x 3 4\n"), None);
    }

    #[test]
    fn rss_covers_a_block_this_process_holds() {
        // Other tests of this binary allocate and free meanwhile: only a lower bound holds.
        let block = vec![1u8; 64 << 20];
        let rss = rss_bytes().expect("Linux tells the RSS");
        assert!(rss >= 64 << 20, "RSS {rss} while holding 64 MiB");
        drop(std::hint::black_box(block));
    }

    #[test]
    fn the_guard_trips_above_its_limit_with_a_message() {
        let guard = MemoryGuard::new(100 << 20);
        assert_eq!(guard.check_rss(100 << 20), Ok(()));
        let exceeded = guard.check_rss(150 << 20).unwrap_err();
        assert_eq!(
            exceeded.to_string(),
            "host memory limit reached: this process uses 150 MiB of resident memory, more than the limit of 100 MiB; stopping the run"
        );
        assert!(MemoryGuard::new(1).check().is_err());
        let device = MemoryLimitExceeded {
            memory: "Cuda(0)".to_owned(),
            used_mib: 20_480,
            limit_mib: 20_000,
        };
        assert_eq!(
            device.to_string(),
            "device memory limit reached: Cuda(0) has 20480 MiB reserved, more than the limit of 20000 MiB; stopping the run"
        );
    }
}
