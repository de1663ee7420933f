//! Op ranges on a launch thread: which thread that is, its op ranges, and whether ops of
//! several threads keep their ranges to themselves there (each op sends a mark there while it
//! runs, as it sends its kernel launches, and the mark must land inside that op's own range).

use burn::tensor::backend::Backend;
use burn::tensor::{Tensor, TensorData};
use burn_profiled::LaunchThread;
use burn_profiled::probe::{Op, OpObserver};
use nvtx_recorder::{Event, Kind, Message};

/// The OS thread `launch` runs on, from the NVTX name it gives that thread.
pub fn device_thread(launch: &LaunchThread) -> u64 {
    nvtx_recorder::events()
        .into_iter()
        .find(|e| e.kind == Kind::NameThread && e.message.text() == Some(launch.thread_name()))
        .unwrap_or_else(|| panic!("{} was not named", launch.thread_name()))
        .tid
}

/// The `burn` domain's pushes (names) and pops (`pop`) in `events`.
pub fn op_ranges(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter(|e| matches!(e.kind, Kind::Push | Kind::Pop) && e.domain.as_deref() == Some("burn"))
        .map(|e| match (&e.kind, &e.message) {
            (Kind::Push, Message::Registered(name)) => name.clone(),
            _ => "pop".to_owned(),
        })
        .collect()
}

/// Stands for a kernel launch we can see: every op sends a mark through the launch thread's
/// blocking runner, into the queue its kernel launches go through.
pub struct Launching(pub LaunchThread);

impl OpObserver for Launching {
    fn op_started(&self, op: &'static Op) {
        let text = std::ffi::CString::new(format!("launch of {}", op.name())).unwrap();
        self.0.run(move || nvtx::mark_ascii(&text));
    }
    fn op_finished(&self, _op: &'static Op) {}
}

/// Walks the `burn` ranges and the marks of one thread's `events`: every range closed, none
/// closed that was not open, and every `launch of X` mark inside a range named `X`. Returns
/// what broke, and the number of marks checked.
pub fn launches_outside_their_ranges(events: &[Event]) -> (Vec<String>, usize) {
    let mut open: Vec<String> = Vec::new();
    let mut broken = Vec::new();
    let mut marks = 0;
    for event in events {
        match (&event.kind, &event.message) {
            (Kind::Push, Message::Registered(name)) if event.domain.as_deref() == Some("burn") => {
                open.push(name.clone());
            }
            (Kind::Pop, _) if event.domain.as_deref() == Some("burn") && open.pop().is_none() => {
                broken.push("a pop with no range open".to_owned());
            }
            (Kind::Mark, message) => {
                if let Some(op) = message.text().and_then(|t| t.strip_prefix("launch of ")) {
                    marks += 1;
                    if open.last().map(String::as_str) != Some(op) {
                        broken.push(format!("the launch of {op} inside {:?}", open.last()));
                    }
                }
            }
            _ => {}
        }
    }
    if !open.is_empty() {
        broken.push(format!("ranges left open: {open:?}"));
    }
    (broken, marks)
}

/// Thread `t`'s ops: an op of its own (`exp`, `log`, `sqrt`, `cos`), so that its launches in
/// another thread's range show.
pub fn thread_ops<B: Backend>(t: usize, device: &B::Device) -> TensorData {
    let x = Tensor::<B, 2>::from_floats([[1.0, 2.0], [3.0, 4.0]], device);
    let y = match t % 4 {
        0 => x.exp(),
        1 => x.log(),
        2 => x.sqrt(),
        _ => x.cos(),
    };
    (y * 2.0).into_data()
}

/// Runs `work(t)` `iterations` times on each of four threads at once; each thread's results.
pub fn on_four_threads<T: Send>(
    iterations: usize,
    work: impl Fn(usize) -> T + Sync,
) -> Vec<Vec<T>> {
    std::thread::scope(|scope| {
        let work = &work;
        let threads: Vec<_> = (0..4)
            .map(|t| scope.spawn(move || (0..iterations).map(|_| work(t)).collect()))
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    })
}
