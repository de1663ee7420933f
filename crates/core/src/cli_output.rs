//! Standard output for the command-line tools: a reader that closes it early (`| head`) ends
//! their output quietly, where `print!` would panic.

use std::io::{ErrorKind, Write};

/// Writes `text` to standard output. A closed pipe ends the output without a word; any other
/// failure is told on standard error.
pub fn print(text: &str) {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(error) if error.kind() != ErrorKind::BrokenPipe => {
            eprintln!("cannot write to standard output: {error}");
        }
        _ => {}
    }
}
