//! A child process under a timeout that turns a hang into a failure showing where every thread
//! of the child was.

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Far more than a run needs here (a few seconds), far less than a hang.
pub const TIMEOUT: Duration = Duration::from_secs(180);

/// What a child did.
pub struct Ran {
    pub status: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

#[allow(dead_code)] // not every test file reads losses
impl Ran {
    /// The losses printed for `backend`, as f32 bits.
    pub fn losses(&self, backend: &str) -> Vec<String> {
        let prefix = format!("losses {backend} ");
        let line = self
            .stdout
            .lines()
            .find_map(|line| line.strip_prefix(&prefix))
            .unwrap_or_else(|| {
                panic!(
                    "no losses for {backend} in the output:\n{}\n{}",
                    self.stdout, self.stderr
                )
            });
        line.split(' ').map(str::to_owned).collect()
    }
}

/// Where each thread of `child` is: gdb's backtraces where gdb is installed, else each thread's
/// name, state and kernel wait channel from /proc.
fn threads_of(child: &Child) -> String {
    let pid = child.id().to_string();
    if let Ok(out) = Command::new("gdb")
        .args(["-p", &pid, "-batch", "-ex", "thread apply all bt 20"])
        .output()
        && out.status.success()
    {
        return String::from_utf8_lossy(&out.stdout).into_owned();
    }
    let mut text = String::new();
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten();
    for task in tasks.flatten() {
        let read = |file: &str| std::fs::read_to_string(task.path().join(file)).unwrap_or_default();
        text.push_str(&format!(
            "{} {} wchan={}\n",
            read("comm").trim(),
            read("stat").split(' ').nth(2).unwrap_or("?"),
            read("wchan")
        ));
    }
    text
}

/// Runs `program` with `args`, failing with the threads' state if it outlasts `timeout`.
#[allow(dead_code)] // not every test file runs children from here
pub fn run_within(program: &str, args: &[&str], timeout: Duration) -> Ran {
    run_in(program, args, Path::new("."), timeout)
}

/// [`run_within`] in the folder `dir`.
pub fn run_in(program: &str, args: &[&str], dir: &Path, timeout: Duration) -> Ran {
    let mut child = Command::new(program)
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| panic!("{program} starts: {error}"));
    let pipe = |mut source: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = source.read_to_string(&mut text);
            text
        })
    };
    let stdout = pipe(Box::new(child.stdout.take().expect("piped stdout")));
    let stderr = pipe(Box::new(child.stderr.take().expect("piped stderr")));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("the child can be waited for") {
            break status;
        }
        if started.elapsed() > timeout {
            let threads = threads_of(&child);
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{program} {} hung for {} s; its threads:\n{threads}\nstdout:\n{}\nstderr:\n{}",
                args.join(" "),
                timeout.as_secs(),
                stdout.join().unwrap_or_default(),
                stderr.join().unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    Ran {
        status: status.code(),
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    }
}
