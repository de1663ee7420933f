//! What the command-line tests share.
#![allow(dead_code)]

/// Runs `command` with its standard output already closed by the reader, as `| head -1` does
/// once it has its line: the command's first write meets a closed pipe.
pub fn output_into_a_closed_pipe(command: &mut std::process::Command) -> std::process::Output {
    let mut child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the command starts");
    drop(child.stdout.take());
    child.wait_with_output().expect("the command ends")
}
