//! Standard output for the command-line tools: a reader that closes it early (`| head`) ends
//! their output quietly, where `print!` would panic; any other failure to write (a full disk,
//! `>/dev/full`) is an error the tool exits 2 on, so that a lost report never passes for a
//! good one.

use std::io::{ErrorKind, Write};
use std::process::ExitCode;

/// Writes `text` to standard output. A closed pipe ends the output without a word (`Ok`);
/// any other failure is returned.
pub fn print(text: &str) -> std::io::Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(error) if error.kind() != ErrorKind::BrokenPipe => Err(error),
        _ => Ok(()),
    }
}

/// [`print`] for a tool named `tool`: on a failure other than a closed pipe, says so on
/// standard error and gives the exit status 2 to end with.
pub fn print_or_exit(tool: &str, text: &str) -> Result<(), ExitCode> {
    print(text).map_err(|error| {
        eprintln!("{tool}: cannot write to standard output: {error}");
        ExitCode::from(2)
    })
}
