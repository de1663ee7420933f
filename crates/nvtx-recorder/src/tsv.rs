//! TSV output.

use crate::event::{Event, Kind};
use crate::store;
use std::fmt::Write as _;
use std::io::{self, BufWriter, Write as _};
use std::path::Path;

/// The TSV header line (with its newline).
pub(crate) const HEADER: &str = "ts_ns\ttid\tkind\tdomain\tdepth\tmsg_type\tmessage\textra\n";

/// Escapes `\`, tab, newline and carriage return so a field stays on one line.
fn push_escaped(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
}

/// Appends one event as a TSV line (with its newline).
pub(crate) fn push_line(out: &mut String, e: &Event) {
    // Writing to a String cannot fail.
    let _ = write!(out, "{}\t{}\t{}\t", e.ts_ns, e.tid, e.kind);
    match &e.domain {
        Some(d) => push_escaped(out, d),
        None => out.push('-'),
    }
    let _ = write!(out, "\t{}\t{}\t", e.depth, e.message.type_name());
    push_escaped(out, e.message.text().unwrap_or(""));
    out.push('\t');
    let mut extra = Vec::new();
    if let Some(c) = e.category {
        extra.push(format!("cat={c}"));
    }
    if let Some(c) = e.color {
        extra.push(format!("color=#{c:08x}"));
    }
    if let Some(p) = e.payload {
        extra.push(format!("payload={p}"));
    }
    if let Some(id) = e.range_id {
        extra.push(format!("id={id}"));
    }
    if let Some(h) = e.handle {
        let key = if e.kind == Kind::NameThread {
            "os_tid"
        } else {
            "handle"
        };
        extra.push(format!("{key}={h}"));
    }
    out.push_str(&extra.join(" "));
    out.push('\n');
}

/// Formats `events` as TSV: a header line, then one line per event.
///
/// Columns: `ts_ns`, `tid`, `kind`, `domain` (`-` for the global API), `depth`,
/// `msg_type` (`none`/`ascii`/`unicode`/`registered`), `message` (with `\`, tab,
/// newline and CR escaped as `\\`, `\t`, `\n`, `\r`), and `extra`: space-separated
/// `cat=N`, `color=#aarrggbb`, `payload=TYPE:VALUE`, `id=N` (range id),
/// `handle=N` (domain/string handle) or `os_tid=N` (the thread a `name_thread` names).
pub fn to_tsv(events: &[Event]) -> String {
    let mut out = String::from(HEADER);
    for e in events {
        push_line(&mut out, e);
    }
    out
}

/// Writes every recorded event to `path` as TSV (see [`to_tsv`]). If the
/// `NVTX_RECORDER_LIMIT` buffer overflowed, a last line
/// `# dropped D of T events (NVTX_RECORDER_LIMIT=L)` says how many were lost.
pub fn write_tsv(path: impl AsRef<Path>) -> io::Result<()> {
    let (events, total) = store::snapshot();
    let mut w = BufWriter::new(std::fs::File::create(path)?);
    w.write_all(HEADER.as_bytes())?;
    let mut line = String::new();
    for e in &events {
        line.clear();
        push_line(&mut line, e);
        w.write_all(line.as_bytes())?;
    }
    let dropped = total.saturating_sub(events.len() as u64);
    if dropped > 0 {
        writeln!(
            w,
            "# dropped {dropped} of {total} events (NVTX_RECORDER_LIMIT={})",
            store::limit()
        )?;
    }
    w.flush()
}

/// The `atexit` handler: writes the TSV to `$NVTX_RECORDER_OUT` if it is set.
pub(crate) extern "C" fn dump_at_exit() {
    let _ = std::panic::catch_unwind(|| {
        let Some(path) = std::env::var_os("NVTX_RECORDER_OUT") else {
            return;
        };
        if let Err(err) = write_tsv(&path) {
            let _ = writeln!(
                io::stderr(),
                "nvtx-recorder: cannot write {}: {err}",
                Path::new(&path).display()
            );
        }
    });
}
