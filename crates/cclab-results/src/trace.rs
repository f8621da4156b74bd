//! Packet traces for fidelity work: one format, written by one writer, for every backend.
//!
//! A trace has one line per data burst entering the path and one per ACK leaving the
//! receiver, where the kernel lab's element and the simulator's path both see them:
//!
//! ```text
//! # cclab packet trace 1: backend sim, scenario cal-tiny-buffer, seed 1
//! D t_us flow seq segs bytes [R]      a burst of `segs` segments from segment `seq` (R: a retransmission)
//! A t_us flow ack sack_left sack_right  an ACK up to segment `ack`, with its first SACK block (0 0: none)
//! ```
//!
//! Times are microseconds from the run's time zero; sequence numbers count segments of the
//! flow from its first byte (not TCP byte sequence numbers), so traces of the two backends
//! line up. A trace is switched on from the command line (`cclab run --trace DIR`), never by
//! the environment, and a trace that cannot be written is an error.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Writes one run's trace. Write errors are kept and reported by [`TraceWriter::finish`].
pub struct TraceWriter {
    path: PathBuf,
    w: BufWriter<File>,
    error: Option<io::Error>,
}

impl TraceWriter {
    /// Creates (or truncates) `path` and writes the header line.
    pub fn create(path: &Path, backend: &str, scenario: &str, seed: u64) -> io::Result<Self> {
        let f = File::create(path).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot write the trace {}: {e}", path.display()),
            )
        })?;
        let mut t = TraceWriter {
            path: path.to_path_buf(),
            w: BufWriter::new(f),
            error: None,
        };
        t.line(format_args!(
            "# cclab packet trace 1: backend {backend}, scenario {scenario}, seed {seed}"
        ));
        Ok(t)
    }

    fn line(&mut self, args: std::fmt::Arguments<'_>) {
        if self.error.is_none() {
            if let Err(e) = writeln!(self.w, "{args}") {
                self.error = Some(e);
            }
        }
    }

    /// A burst of `segs` segments starting at segment `seq`, `bytes` of payload in all,
    /// entering the path at `t_ns`.
    pub fn data(&mut self, t_ns: u64, flow: u32, seq: u64, segs: u32, bytes: u64, retrans: bool) {
        let r = if retrans { " R" } else { "" };
        self.line(format_args!(
            "D {} {flow} {seq} {segs} {bytes}{r}",
            t_ns / 1000
        ));
    }

    /// An ACK of everything below segment `ack`, with its first SACK block, leaving the
    /// receiver at `t_ns`.
    pub fn ack(&mut self, t_ns: u64, flow: u32, ack: u64, sack: Option<(u64, u64)>) {
        let (l, r) = sack.unwrap_or((0, 0));
        self.line(format_args!("A {} {flow} {ack} {l} {r}", t_ns / 1000));
    }

    /// Flushes the file; the first error the trace met, if any.
    pub fn finish(mut self) -> io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(io::Error::new(
                e.kind(),
                format!("writing the trace {}: {e}", self.path.display()),
            ));
        }
        self.w.flush().map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("writing the trace {}: {e}", self.path.display()),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_the_documented_lines_and_reports_failures() {
        let dir = std::env::temp_dir().join(format!("cclab-trace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("t.txt");
        let mut t = TraceWriter::create(&p, "sim", "x", 7).unwrap();
        t.data(1_500_000, 0, 10, 3, 4344, false);
        t.data(2_000_000, 1, 4, 1, 1448, true);
        t.ack(2_500_000, 0, 13, Some((15, 16)));
        t.ack(3_000_000, 0, 16, None);
        t.finish().unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "# cclab packet trace 1: backend sim, scenario x, seed 7"
        );
        assert_eq!(
            &lines[1..],
            [
                "D 1500 0 10 3 4344",
                "D 2000 1 4 1 1448 R",
                "A 2500 0 13 15 16",
                "A 3000 0 16 0 0"
            ]
        );
        std::fs::remove_dir_all(&dir).unwrap();
        let e = TraceWriter::create(Path::new("/nonexistent-dir/t.txt"), "sim", "x", 1)
            .err()
            .unwrap();
        assert!(
            e.to_string()
                .contains("cannot write the trace /nonexistent-dir/t.txt"),
            "{e}"
        );
    }
}
