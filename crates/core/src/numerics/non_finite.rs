//! [`NonFinite`]: the first op of a run whose output held a NaN or an Inf
//! (`[numerics] check_finite`).

use serde::{Deserialize, Serialize};

use super::Fingerprint;

/// The first op of a run whose output held a NaN or an Inf: in `run.json` as `non_finite`, and
/// on stderr as its [`Display`](std::fmt::Display).
///
/// When its inputs were all finite, it is the op that *made* the NaN, not one that carried it
/// on: every op before it in the run had finite outputs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NonFinite {
    /// The step (from 0, warm-up steps included).
    pub step: u64,
    /// The op, as the op tables name it.
    pub op: String,
    /// The innermost user range around it (`-` outside any), or the phase Burn's frames give
    /// (`backward`, `optimizer`) when call sites are on.
    pub phase: String,
    /// Where in the user's code it was called from, when call sites are on.
    pub call_site: Option<String>,
    /// The thread it ran on.
    pub thread: String,
    /// Whether every input was finite: `false` when a NaN or an Inf came in from outside the
    /// checked ops (the data, a parameter loaded with one, or an op before `[numerics] steps`).
    pub inputs_finite: bool,
    /// Its tensor inputs' fingerprints, in argument order.
    pub inputs: Vec<Fingerprint>,
    /// Its outputs' fingerprints.
    pub outputs: Vec<Fingerprint>,
    /// The op run again on a reference backend with the same inputs, where the edition could
    /// (Burn 0.21's `Profiled<B>` on another backend than NdArray).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerun: Option<Rerun>,
    /// Whether it is a value the program handed over (the loss, a tensor or a gradient the
    /// dumper read; `op` is its record's name, [`OpRecord::is_value`](super::OpRecord::is_value)),
    /// not an op's output: the op that made it was not checked (Burn 0.22 checks only values).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub value: bool,
}

/// The op call `[numerics] capture` named: its inputs kept (in `captured/`), and, where the
/// edition could, the op run again on a reference backend. In `run.json` as `captured`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapturedOp {
    /// Its step.
    pub step: u64,
    /// Its `seq` in `numerics.jsonl`.
    pub seq: u64,
    /// The op, as the op tables name it.
    pub op: String,
    /// Its phase.
    pub phase: String,
    /// Where in the user's code it was called from, when call sites are on.
    pub call_site: Option<String>,
    /// Its tensor inputs' fingerprints, in argument order.
    pub inputs: Vec<Fingerprint>,
    /// Its outputs' fingerprints.
    pub outputs: Vec<Fingerprint>,
    /// The op run again on a reference backend with the same inputs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerun: Option<Rerun>,
}

impl CapturedOp {
    /// How the re-run's outputs compare with the run's, within the default tolerance; `None`
    /// without a re-run or when it could not run.
    pub fn rerun_agreement(&self) -> Option<(super::Agreement, Vec<super::StatDiff>)> {
        let rerun = self.rerun.as_ref().filter(|rerun| rerun.error.is_none())?;
        let tolerance = super::Tolerance::default();
        Some(super::compare_outputs(
            &self.outputs,
            &rerun.outputs,
            tolerance,
        ))
    }
}

impl std::fmt::Display for CapturedOp {
    /// `step 0, seq 11: `float_add_scalar` in phase `forward`, called at `...`, inputs [8]
    /// kept in `captured/`; re-run on ndarray: ...`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "step {}, seq {}: `{}` in phase `{}`",
            self.step, self.seq, self.op, self.phase
        )?;
        if let Some(call_site) = &self.call_site {
            write!(f, ", called at `{call_site}`,")?;
        }
        let shapes: Vec<String> = (self.inputs.iter())
            .map(|input| format!("{:?}", input.shape))
            .collect();
        write!(f, " inputs {} kept in `captured/`", shapes.join(", "))?;
        let Some(rerun) = &self.rerun else {
            return Ok(());
        };
        match (self.rerun_agreement(), &rerun.error) {
            (Some((super::Agreement::Identical, _)), _) => write!(
                f,
                "; re-run on {}, its outputs are the same bit for bit",
                rerun.backend
            ),
            (Some((super::Agreement::WithinTolerance, _)), _) => write!(
                f,
                "; re-run on {}, its outputs agree within the default tolerance: the op computes \
                 what the reference does, the difference came from its inputs' order of \
                 operations or precision",
                rerun.backend
            ),
            (Some((_, differences)), _) => {
                let mut stats: Vec<&str> = differences.iter().map(|d| d.stat).collect();
                stats.dedup();
                write!(
                    f,
                    "; re-run on {}, its outputs differ ({}): the backend computes this op \
                     otherwise than the reference from the same inputs",
                    rerun.backend,
                    stats.join(", ")
                )
            }
            (None, error) => write!(
                f,
                "; could not be re-run on {}: {}",
                rerun.backend,
                error.as_deref().unwrap_or("unknown")
            ),
        }
    }
}

/// The first non-finite op, run again on a reference backend with the same inputs and
/// arguments: whether it makes the NaN there too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rerun {
    /// The backend it ran on (`ndarray`).
    pub backend: String,
    /// The fingerprints of its outputs there; none when it could not run (`error`).
    pub outputs: Vec<Fingerprint>,
    /// Why it could not run there, if it could not.
    pub error: Option<String>,
}

impl Rerun {
    /// What it says: the op makes the NaN on the reference backend too (its numerics: inputs
    /// out of its domain), or not (suspect the backend's kernel); `None` when it could not run.
    pub fn verdict(&self) -> Option<bool> {
        match &self.error {
            Some(_) => None,
            None => Some(!self.outputs.iter().all(Fingerprint::is_finite)),
        }
    }
}

impl std::fmt::Display for Rerun {
    /// `re-run on ndarray: finite there (...)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let backend = &self.backend;
        match (self.verdict(), &self.error) {
            (Some(true), _) => write!(
                f,
                "re-run on {backend} with the same inputs, it makes NaN or Inf there too: the \
                 op's numerics (inputs outside its domain), not the backend's"
            ),
            (Some(false), _) => write!(
                f,
                "re-run on {backend} with the same inputs, its outputs are finite there: suspect \
                 the backend's kernel (the inputs are kept in `non_finite/` to report it)"
            ),
            (None, error) => write!(
                f,
                "could not be re-run on {backend}: {}",
                error.as_deref().unwrap_or("unknown")
            ),
        }
    }
}

impl std::fmt::Display for NonFinite {
    /// `step 3: `float_log` in phase `forward`, called at `Model::forward (src/model.rs:12)`,
    /// made 2 NaN, 0 +Inf, 0 -Inf of 8 elements from finite inputs [2, 4]`, and where they
    /// came from when its inputs were not finite.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let counts = |prints: &[Fingerprint]| {
            prints
                .iter()
                .fold((0, 0, 0, 0), |(nan, pos, neg, all), print| {
                    (
                        nan + print.nan,
                        pos + print.pos_inf,
                        neg + print.neg_inf,
                        all + print.elements,
                    )
                })
        };
        let (nan, pos_inf, neg_inf, elements) = counts(&self.outputs);
        if self.value {
            return write!(
                f,
                "step {}: {} in phase `{}` held {nan} NaN, {pos_inf} +Inf, {neg_inf} -Inf of \
                 {elements} elements; the op that made it was not checked (on Burn 0.22 no op \
                 is: dump the step's tensors before it, or run the step on Burn 0.21's \
                 `Profiled<B>`, to find it)",
                self.step,
                value_name(&self.op),
                self.phase
            );
        }
        write!(
            f,
            "step {}: `{}` in phase `{}`",
            self.step, self.op, self.phase
        )?;
        if let Some(call_site) = &self.call_site {
            write!(f, ", called at `{call_site}`,")?;
        }
        write!(
            f,
            " made {nan} NaN, {pos_inf} +Inf, {neg_inf} -Inf of {elements} elements"
        )?;
        let shapes: Vec<String> = self
            .inputs
            .iter()
            .map(|input| format!("{:?}", input.shape))
            .collect();
        match self.inputs_finite {
            true if shapes.is_empty() => write!(f, " from no tensor input")?,
            true => write!(f, " from finite inputs {}", shapes.join(", "))?,
            false => {
                let (nan, pos_inf, neg_inf, _) = counts(&self.inputs);
                write!(
                    f,
                    " from inputs {} that already held {nan} NaN, {pos_inf} +Inf, {neg_inf} -Inf: \
                     they came from outside the checked ops (the data, a parameter, or an op \
                     before `[numerics] steps`)",
                    shapes.join(", ")
                )?
            }
        }
        let Some(rerun) = &self.rerun else {
            return Ok(());
        };
        let dtype = |prints: &[Fingerprint]| prints.first().map(|print| print.dtype.clone());
        match (dtype(&self.outputs), dtype(&rerun.outputs)) {
            (Some(here), Some(there)) if here != there && rerun.verdict() == Some(false) => write!(
                f,
                "; re-run on {} in {there} (here {here}) with the same inputs, its outputs are \
                 finite there: the op overflows or loses precision in {here}, or the backend's \
                 kernel is wrong (the inputs are kept in `non_finite/`)",
                rerun.backend
            ),
            _ => write!(f, "; {rerun}"),
        }
    }
}

/// A value record's name for people: `the loss`, `the dumped tensor `step.h``, `the gradient
/// of `step.w``.
fn value_name(record: &str) -> String {
    use super::record::{DUMPED_PREFIX, GRADIENT_PREFIX};
    if let Some(path) = record.strip_prefix(DUMPED_PREFIX) {
        format!("the dumped tensor `{path}`")
    } else if let Some(path) = record.strip_prefix(GRADIENT_PREFIX) {
        format!("the gradient of `{path}`")
    } else {
        format!("the {record}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn non_finite(inputs: Vec<Fingerprint>, inputs_finite: bool) -> NonFinite {
        NonFinite {
            step: 3,
            op: "float_log".into(),
            phase: "forward".into(),
            call_site: Some("Model::forward (src/model.rs:12)".into()),
            thread: "main".into(),
            inputs_finite,
            inputs,
            outputs: vec![Fingerprint::of(
                &[f32::NAN, 0.5, f32::NEG_INFINITY, 1.0],
                &[2, 2],
            )],
            rerun: None,
            value: false,
        }
    }

    /// A value the program handed over is not an op: the message says so, and where to look.
    #[test]
    fn a_non_finite_value_says_its_maker_was_not_checked() {
        let mut found = non_finite(Vec::new(), true);
        found.value = true;
        found.op = "dump:step.logits".into();
        assert_eq!(
            found.to_string(),
            "step 3: the dumped tensor `step.logits` in phase `forward` held 1 NaN, 0 +Inf, 1 \
             -Inf of 4 elements; the op that made it was not checked (on Burn 0.22 no op is: \
             dump the step's tensors before it, or run the step on Burn 0.21's `Profiled<B>`, \
             to find it)"
        );
        found.op = "loss".into();
        assert!(found.to_string().starts_with("step 3: the loss in phase"));
        found.op = "grad:w".into();
        assert!(
            found
                .to_string()
                .starts_with("step 3: the gradient of `w` in")
        );
    }

    /// The re-run's verdict ends the message: the op's numerics, or the backend's.
    #[test]
    fn the_rerun_says_whose_nan_it_is() {
        let finite = vec![Fingerprint::of(&[-1.0f32, 1.5, 0.0, 2.0], &[2, 2])];
        let mut found = non_finite(finite, true);
        found.call_site = None;
        let rerun = |outputs: Vec<Fingerprint>, error: Option<&str>| Rerun {
            backend: "ndarray".into(),
            outputs,
            error: error.map(str::to_owned),
        };
        found.rerun = Some(rerun(found.outputs.clone(), None));
        assert!(
            found.to_string().ends_with(
                "[2, 2]; re-run on ndarray with the same inputs, it makes NaN or Inf there \
                 too: the op's numerics (inputs outside its domain), not the backend's"
            ),
            "{found}"
        );
        found.rerun = Some(rerun(vec![Fingerprint::of(&[1.0f32], &[1])], None));
        assert!(
            found
                .to_string()
                .contains("its outputs are finite there: suspect the backend's kernel")
        );
        found.rerun = Some(rerun(Vec::new(), Some("NdArray could not run it: no f16")));
        assert!(
            found
                .to_string()
                .ends_with("could not be re-run on ndarray: NdArray could not run it: no f16")
        );
    }

    /// The message names the op, its step, phase and call site, what it made, and from what.
    #[test]
    fn the_producer_is_named_with_its_step_phase_call_site_and_counts() {
        let finite = vec![Fingerprint::of(&[-1.0f32, 1.5, 0.0, 2.0], &[2, 2])];
        assert_eq!(
            non_finite(finite, true).to_string(),
            "step 3: `float_log` in phase `forward`, called at `Model::forward \
             (src/model.rs:12)`, made 1 NaN, 0 +Inf, 1 -Inf of 4 elements from finite inputs \
             [2, 2]"
        );
    }

    /// An op fed a NaN from the data is not its producer: the message says where to look.
    #[test]
    fn an_op_fed_a_nan_from_outside_says_so() {
        let poisoned = vec![Fingerprint::of(&[f32::NAN, 1.0], &[2])];
        let mut found = non_finite(poisoned, false);
        found.call_site = None;
        assert_eq!(
            found.to_string(),
            "step 3: `float_log` in phase `forward` made 1 NaN, 0 +Inf, 1 -Inf of 4 elements \
             from inputs [2] that already held 1 NaN, 0 +Inf, 0 -Inf: they came from outside \
             the checked ops (the data, a parameter, or an op before `[numerics] steps`)"
        );
    }
}
