//! What stays alive, by the op that made it: the makers an edition's probe gives host blocks
//! ([`maker`]: an op, its phase, call stack and input shapes) and, at a run's end, the blocks
//! made in one measured step and still alive at the end, per maker ([`kept_alive`]): the ops
//! the leak warning names.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};
use std::sync::{Mutex, PoisonError};

use rustc_hash::{FxHashMap, FxHasher};
use serde::Serialize;

use super::report::{phase_name_of, shapes_text};
use crate::call_sites;
use crate::context::live_allocations::LiveBlock;
use crate::context::op::Op;
use crate::shape::Shape;

/// The bytes an op's outputs keep alive over a run's steps, for the leak warning and
/// `run.json`'s `memory.kept_alive`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KeptAlive {
    /// The memory they are in: `host`, or a device.
    pub memory: String,
    /// The op that made them.
    pub op: String,
    /// Its phase (`-` outside any user range).
    pub phase: String,
    /// Its call site, with call sites on.
    pub call_site: Option<String>,
    /// Its input shapes, with statistics kept by shapes.
    pub input_shapes: Option<String>,
    /// What it made and is still alive, per step looked at.
    pub bytes_per_step: u64,
    /// In how many of the steps looked at it made some of it, when known.
    pub made_in_steps: Option<usize>,
    /// The steps looked at: the measured steps but the last (whose outputs may well be alive
    /// at the end), or the run's steps.
    pub of_steps: usize,
}

impl KeptAlive {
    /// `1.00 MiB/step by float_zeros at examples/train.rs:186 in `head` from [[256, 1024]]
    /// (in 6 of 6 steps)`.
    pub fn text(&self) -> String {
        let mut text = format!(
            "{}/step by {}",
            super::bytes_text(self.bytes_per_step),
            self.op
        );
        if let Some(site) = &self.call_site {
            text.push_str(&format!(" at {site}"));
        }
        if self.phase != "-" {
            text.push_str(&format!(" in `{}`", self.phase));
        }
        if let Some(shapes) = self.input_shapes.as_ref().filter(|shapes| *shapes != "[]") {
            text.push_str(&format!(" from {shapes}"));
        }
        if let Some(made) = self.made_in_steps {
            text.push_str(&format!(" (in {made} of {} steps)", self.of_steps));
        }
        text
    }
}

/// One maker: an op called in a phase from a stack with input shapes.
struct Maker {
    op: &'static Op,
    phase: u32,
    stack: u32,
    shapes: Option<Box<[Shape]>>,
}

/// The makers, id `n` at `n - 1`.
static MAKERS: Mutex<Vec<Maker>> = Mutex::new(Vec::new());

thread_local! {
    /// This thread's makers by the hash of their key.
    static IDS: RefCell<FxHashMap<u64, u32>> = RefCell::new(FxHashMap::default());
}

/// The maker id of `op` in `phase` from `stack` with input `shapes`, made on first use (ids
/// start at 1 and stay for the process).
#[doc(hidden)]
pub fn maker(op: &'static Op, phase: u32, stack: u32, shapes: Option<&[Shape]>) -> u32 {
    let mut hasher = FxHasher::default();
    (op as *const Op as usize, phase, stack, shapes).hash(&mut hasher);
    let hash = hasher.finish();
    let known = IDS.with_borrow(|ids| ids.get(&hash).copied());
    if let Some(id) = known {
        return id;
    }
    let id = {
        let mut makers = MAKERS.lock().unwrap_or_else(PoisonError::into_inner);
        let found = makers.iter().position(|maker| {
            (
                maker.op as *const Op,
                maker.phase,
                maker.stack,
                maker.shapes.as_deref(),
            ) == (op as *const Op, phase, stack, shapes)
        });
        match found {
            Some(at) => at as u32 + 1,
            None => {
                makers.push(Maker {
                    op,
                    phase,
                    stack,
                    shapes: shapes.map(Into::into),
                });
                makers.len() as u32
            }
        }
    };
    IDS.with_borrow_mut(|ids| ids.insert(hash, id));
    id
}

/// What the `blocks` of `memory` still alive at a run's end keep, by maker, most first: those
/// made in the `measured` steps but the last (of `steps_done` steps), per step, by the makers
/// that made them in at least two of those steps and half of them (what a loop keeps, not a
/// cache filled once).
pub fn kept_alive(
    memory: &str,
    blocks: &[LiveBlock],
    measured: &[usize],
    steps_done: usize,
) -> Vec<KeptAlive> {
    let looked_at: BTreeSet<usize> = (measured.iter().copied())
        .filter(|step| step + 1 < steps_done)
        .collect();
    if looked_at.is_empty() {
        return Vec::new();
    }
    let mut by_maker: FxHashMap<u32, (u64, BTreeSet<u32>)> = FxHashMap::default();
    for block in blocks {
        if looked_at.contains(&(block.step as usize)) {
            let (bytes, steps) = by_maker.entry(block.maker).or_default();
            *bytes += block.bytes;
            steps.insert(block.step);
        }
    }
    let of_steps = looked_at.len();
    let makers = MAKERS.lock().unwrap_or_else(PoisonError::into_inner);
    let mut kept: Vec<KeptAlive> = (by_maker.into_iter())
        .filter(|(_, (_, steps))| steps.len() >= 2 && steps.len() * 2 >= of_steps)
        .filter_map(|(maker, (bytes, steps))| {
            let maker = makers.get(maker.checked_sub(1)? as usize)?;
            Some(KeptAlive {
                memory: memory.to_owned(),
                op: maker.op.name().to_owned(),
                phase: phase_name_of(maker.phase, maker.stack),
                call_site: call_sites::call_site(maker.stack).map(|site| site.to_string()),
                input_shapes: maker.shapes.as_deref().map(shapes_text),
                bytes_per_step: bytes / of_steps as u64,
                made_in_steps: Some(steps.len()),
                of_steps,
            })
        })
        .collect();
    kept.sort_by(|a, b| {
        (b.bytes_per_step.cmp(&a.bytes_per_step)).then_with(|| a.text().cmp(&b.text()))
    });
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    static ZEROS: Op = Op::new("float_zeros\0");
    static MATMUL: Op = Op::new("float_matmul\0");

    fn block(maker: u32, step: u32, bytes: u64) -> LiveBlock {
        LiveBlock { maker, step, bytes }
    }

    #[test]
    fn a_maker_is_the_same_for_the_same_op_phase_stack_and_shapes() {
        let shapes = [Shape::from([2usize, 3].as_slice())];
        let zeros = maker(&ZEROS, 0, 0, None);
        assert_eq!(maker(&ZEROS, 0, 0, None), zeros);
        assert_ne!(maker(&MATMUL, 0, 0, None), zeros);
        let with_shapes = maker(&ZEROS, 0, 0, Some(&shapes));
        assert_ne!(with_shapes, zeros);
        // Another thread finds the same maker.
        let there = std::thread::spawn(move || maker(&ZEROS, 0, 0, None)).join();
        assert_eq!(there.ok(), Some(zeros));
    }

    #[test]
    fn what_a_loop_keeps_each_step_is_named_per_step_and_a_cache_filled_once_is_not() {
        let zeros = maker(&ZEROS, 0, 0, None);
        let matmul = maker(&MATMUL, 0, 0, None);
        // Measured steps 2 to 9 of 10: 2 to 8 are looked at (the last step's outputs are
        // alive at the end in any loop).
        let measured: Vec<usize> = (2..10).collect();
        let mut blocks: Vec<LiveBlock> = (0..10).map(|step| block(zeros, step, 4096)).collect();
        // Made once, in step 3, and kept: a cache.
        blocks.push(block(matmul, 3, 1 << 20));
        let kept = kept_alive("host", &blocks, &measured, 10);
        assert_eq!(kept.len(), 1, "{kept:?}");
        assert_eq!(
            kept[0],
            KeptAlive {
                memory: "host".to_owned(),
                op: "float_zeros".to_owned(),
                phase: "-".to_owned(),
                call_site: None,
                input_shapes: None,
                bytes_per_step: 4096,
                made_in_steps: Some(7),
                of_steps: 7,
            }
        );
        assert_eq!(
            kept[0].text(),
            "4.00 KiB/step by float_zeros (in 7 of 7 steps)"
        );
    }

    #[test]
    fn a_run_too_short_to_tell_names_nothing() {
        let zeros = maker(&ZEROS, 0, 0, None);
        let blocks = [block(zeros, 0, 4096)];
        assert_eq!(kept_alive("host", &blocks, &[0], 1), Vec::new());
    }
}
