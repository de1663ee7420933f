//! What the launch-thread tests share: a stand-in for CubeCL's device thread, and an observer
//! that records where each op ran. Each test binary uses part of it.
#![allow(dead_code)]

pub mod stand_in;

use std::sync::Mutex;

use burn_profiled::probe::{Op, OpObserver};

/// The ops started, with the OS thread each started on.
#[derive(Default)]
pub struct Started(pub Mutex<Vec<(&'static str, u64)>>);

impl OpObserver for Started {
    fn op_started(&self, op: &'static Op) {
        self.0
            .lock()
            .unwrap()
            .push((op.name(), nvtx_recorder::current_tid()));
    }
    fn op_finished(&self, _op: &'static Op) {}
}
