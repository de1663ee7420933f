//! A stand-in for CubeCL's device thread with the same semantics: tasks run one at a time in
//! the order they were sent, the sender blocks until its task has run, and a task sent from
//! the device thread itself runs inline. Its queue sends a task into the same FIFO without
//! waiting.

use std::cell::Cell;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use burn::backend::NdArray;
use burn_profiled::LaunchThread;

type Job = Box<dyn FnOnce() + Send>;

thread_local! {
    static IS_DEVICE_THREAD: Cell<bool> = const { Cell::new(false) };
}

/// The stand-in device thread: its launch thread, its OS thread id, how many tasks were sent
/// to it from other threads, and how many were queued.
pub struct StandIn {
    pub launch: LaunchThread,
    pub tid: u64,
    pub sent: Arc<AtomicUsize>,
    pub queued: Arc<AtomicUsize>,
}

pub fn stand_in(name: &str) -> StandIn {
    let (jobs, queue) = mpsc::channel::<Job>();
    let (tid_sender, tid) = mpsc::channel();
    std::thread::spawn(move || {
        IS_DEVICE_THREAD.set(true);
        tid_sender.send(nvtx_recorder::current_tid()).unwrap();
        for job in queue {
            job();
        }
    });
    let jobs = Arc::new(Mutex::new(jobs));
    let queue_jobs = jobs.clone();
    let queued = Arc::new(AtomicUsize::new(0));
    let queued_counter = queued.clone();
    let sent = Arc::new(AtomicUsize::new(0));
    let counter = sent.clone();
    let launch =
        LaunchThread::new::<NdArray>(Default::default(), name, move |task| {
            if IS_DEVICE_THREAD.get() {
                task();
                return Ok(());
            }
            counter.fetch_add(1, Ordering::SeqCst);
            /// The task, sent across; it outlives the send because the sender waits below.
            struct Task(*mut (dyn FnMut() + Send + 'static));
            // SAFETY: the task is `Send`; the sender blocks until the device thread ran it.
            unsafe impl Send for Task {}
            // SAFETY: only the lifetime is erased, and the borrow outlives the task's run.
            let task = Task(unsafe {
                std::mem::transmute::<
                    *mut (dyn FnMut() + Send + '_),
                    *mut (dyn FnMut() + Send + 'static),
                >(task)
            });
            let (done, finished) = mpsc::channel();
            let job: Job = Box::new(move || {
                let task = task;
                // SAFETY: see `Task`.
                unsafe { (*task.0)() };
                let _ = done.send(());
            });
            jobs.lock()
                .unwrap()
                .send(job)
                .map_err(|_| "the device thread is gone".to_owned())?;
            finished
                .recv()
                .map_err(|_| "the device thread dropped the task".to_owned())
        })
        .with_queue(move |task| {
            if IS_DEVICE_THREAD.get() {
                task.run();
                return;
            }
            queued_counter.fetch_add(1, Ordering::SeqCst);
            let _ = queue_jobs
                .lock()
                .unwrap()
                .send(Box::new(move || task.run()));
        });
    StandIn {
        launch,
        tid: tid.recv().unwrap(),
        sent,
        queued,
    }
}
