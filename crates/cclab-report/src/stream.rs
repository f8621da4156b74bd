//! A results directory written as its runs come, for sweeps too large to hold: each run is
//! written out (results.json, flows.csv, series/run-N.csv) when it arrives, in run order, and
//! kept on disk only; the Parquet tables are written at the end from a spool of the runs,
//! a part at a time. Memory stays that of one part (a few hundred runs), whatever the count.
//!
//! The files are those [`crate::export`] and [`crate::parquet`] write for the whole document
//! at once: results.json and flows.csv byte for byte, the Parquet tables with the same rows
//! (in several row groups). meta.json too ([`crate::load::meta_json`]). The report page is
//! the caller's (it reads the directory back).

use crate::columns::{self, Layout, TABLES};
use crate::export::FlowsCsv;
use crate::parquet::{file_name, TableWriter};
use cclab_results::{ResultsDoc, RunResult};
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Runs per Parquet row group.
const PART: usize = 256;

/// The spool of whole runs (time series included), removed at the end.
const SPOOL: &str = ".runs.jsonl";

/// A results directory being written.
pub struct DirWriter {
    dir: PathBuf,
    name: String,
    path: String,
    description: Option<String>,
    /// The document without its runs (scenario, backend, source).
    shell: ResultsDoc,
    json: BufWriter<File>,
    /// results.json after the runs' array.
    json_tail: String,
    csv: Option<(FlowsCsv, BufWriter<File>)>,
    spool: BufWriter<File>,
    layout: Layout,
    /// The first run of each distinct point, without its series (meta.json's points).
    points: Vec<RunResult>,
    runs: usize,
    /// Runs per Parquet row group ([`PART`]).
    part: usize,
    /// The directories [`DirWriter::create`] made (not there before).
    made: Vec<PathBuf>,
}

fn io_err(path: &Path, e: std::io::Error) -> String {
    format!("cannot write {}: {e}", path.display())
}

fn create(path: &Path) -> Result<BufWriter<File>, String> {
    File::create(path)
        .map(BufWriter::new)
        .map_err(|e| io_err(path, e))
}

/// A run as results.json holds it: pretty, without series, indented as an item of `runs`.
fn run_json(r: &RunResult) -> String {
    let mut r = r.clone();
    r.drop_series();
    let text = serde_json::to_string_pretty(&r).expect("a run serialises");
    let mut out = String::with_capacity(text.len() + 64);
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str("    ");
        out.push_str(line);
    }
    out
}

impl DirWriter {
    /// Start writing `shell`'s document (its runs to come by [`DirWriter::push`]) into `dir`
    /// (created if missing), described by the scenario's name, file and description.
    pub fn create(
        dir: &Path,
        name: &str,
        path: &str,
        description: Option<&str>,
        shell: &ResultsDoc,
    ) -> Result<DirWriter, String> {
        // The directories this writer makes, innermost last ([`DirWriter::abort`]).
        let made: Vec<PathBuf> = [dir.to_path_buf(), dir.join("series")]
            .into_iter()
            .filter(|d| !d.exists())
            .collect();
        std::fs::create_dir_all(dir.join("series"))
            .map_err(|e| format!("cannot create output directory {}: {e}", dir.display()))?;
        let mut shell = shell.clone();
        shell.runs.clear();
        let whole = serde_json::to_string_pretty(&shell).expect("results serialise");
        // Split at the runs' array: `"runs": [` and what comes after its `]`.
        let at = whole
            .find("\"runs\": []")
            .expect("a results document has runs")
            + "\"runs\": [".len();
        let mut json = create(&dir.join("results.json"))?;
        json.write_all(&whole.as_bytes()[..at])
            .map_err(|e| io_err(&dir.join("results.json"), e))?;
        let spool = create(&dir.join(SPOOL))?;
        Ok(DirWriter {
            dir: dir.to_path_buf(),
            name: name.to_string(),
            path: path.to_string(),
            description: description.map(str::to_string),
            json_tail: whole[at..].to_string(),
            shell,
            json,
            csv: None,
            spool,
            layout: Layout::default(),
            points: Vec::new(),
            runs: 0,
            part: PART,
            made,
        })
    }

    /// The next run, in run order.
    pub fn push(&mut self, r: &RunResult) -> Result<(), String> {
        self.runs += 1;
        let k = self.runs;
        let file = |n: &str| self.dir.join(n);
        let sep = if k == 1 { "\n" } else { ",\n" };
        self.json
            .write_all(format!("{sep}{}", run_json(r)).as_bytes())
            .map_err(|e| io_err(&file("results.json"), e))?;
        if self.csv.is_none() {
            let csv = FlowsCsv::new(&self.shell, Some(r));
            let mut w = create(&file("flows.csv"))?;
            w.write_all(csv.header().as_bytes())
                .map_err(|e| io_err(&file("flows.csv"), e))?;
            self.csv = Some((csv, w));
        }
        let (csv, w) = self.csv.as_mut().expect("opened above");
        let mut rows = String::new();
        csv.rows(&mut rows, k, r);
        w.write_all(rows.as_bytes())
            .map_err(|e| io_err(&file("flows.csv"), e))?;
        if let Some(s) = &r.series {
            let p = file(&format!("series/run-{k}.csv"));
            std::fs::write(&p, s.to_csv()).map_err(|e| io_err(&p, e))?;
        }
        if let Some(csv) = cclab_results::probe::probes_csv(&r.probes) {
            let p = file(&format!("series/run-{k}-probes.csv"));
            std::fs::write(&p, csv).map_err(|e| io_err(&p, e))?;
        }
        let line = serde_json::to_string(r).expect("a run serialises");
        writeln!(self.spool, "{line}").map_err(|e| io_err(&file(SPOOL), e))?;
        self.layout.observe(r);
        if !r.resolved.is_empty() && !self.points.iter().any(|p| p.params == r.params) {
            let mut p = r.clone();
            p.drop_series();
            self.points.push(p);
        }
        Ok(())
    }

    /// How many runs were pushed.
    pub fn runs(&self) -> usize {
        self.runs
    }

    /// Close results.json and flows.csv, write meta.json and the Parquet tables (from the
    /// spool, a part at a time), and remove the spool.
    pub fn finish(mut self) -> Result<(), String> {
        let file = |n: &str| self.dir.join(n);
        let close = if self.runs == 0 { "" } else { "\n  " };
        self.json
            .write_all(format!("{close}{}", self.json_tail).as_bytes())
            .and_then(|_| self.json.flush())
            .map_err(|e| io_err(&file("results.json"), e))?;
        match self.csv.as_mut() {
            Some((_, w)) => w.flush().map_err(|e| io_err(&file("flows.csv"), e))?,
            None => {
                let csv = FlowsCsv::new(&self.shell, None);
                std::fs::write(file("flows.csv"), csv.header())
                    .map_err(|e| io_err(&file("flows.csv"), e))?;
            }
        }
        let mut meta_doc = self.shell.clone();
        meta_doc.runs = std::mem::take(&mut self.points);
        let meta = crate::load::meta_json(
            &self.name,
            &self.path,
            self.description.as_deref(),
            &meta_doc,
        );
        std::fs::write(file("meta.json"), meta).map_err(|e| io_err(&file("meta.json"), e))?;
        self.spool.flush().map_err(|e| io_err(&file(SPOOL), e))?;
        self.write_tables()?;
        let _ = std::fs::remove_file(file(SPOOL));
        Ok(())
    }

    /// Give up: remove every file this writer created (results.json, flows.csv, the spool,
    /// series/run-N.csv), and the directories it made when that leaves them empty. For a
    /// matrix that failed part-way, so that no half directory is left behind.
    pub fn abort(self) {
        let DirWriter {
            dir,
            json,
            csv,
            spool,
            runs,
            made,
            ..
        } = self;
        drop((json, csv, spool));
        for f in ["results.json", "flows.csv", SPOOL] {
            let _ = std::fs::remove_file(dir.join(f));
        }
        for k in 1..=runs {
            let _ = std::fs::remove_file(dir.join(format!("series/run-{k}.csv")));
        }
        // Innermost first; remove_dir refuses a directory that is not empty.
        for d in made.iter().rev() {
            let _ = std::fs::remove_dir(d);
        }
    }

    /// Every table, one part of the spool's runs at a time.
    fn write_tables(&self) -> Result<(), String> {
        let spool = self.dir.join(SPOOL);
        for name in TABLES {
            // The columns come from the layout alone: an empty part has them all.
            let empty =
                columns::table_in(&self.shell, name, 0, &self.layout).expect("a known table");
            let mut w = TableWriter::new(create(&self.dir.join(file_name(name)))?, &empty)?;
            let mut lines =
                BufReader::new(File::open(&spool).map_err(|e| io_err(&spool, e))?).lines();
            let mut first = 0;
            loop {
                let mut part = self.shell.clone();
                for line in lines.by_ref().take(self.part) {
                    let line = line.map_err(|e| io_err(&spool, e))?;
                    let r: RunResult = serde_json::from_str(&line).map_err(|e| {
                        format!("{}: a spooled run does not parse: {e}", spool.display())
                    })?;
                    part.runs.push(r);
                }
                if part.runs.is_empty() {
                    break;
                }
                let t = columns::table_in(&part, name, first, &self.layout).expect("a known table");
                if t.rows() > 0 {
                    w.write(&t)?;
                }
                first += part.runs.len();
            }
            if first == 0 {
                // No run: one empty row group, as the whole document's file has.
                w.write(&empty)?;
            }
            w.close()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_results::{FlowResult, FlowSeries, Source, TimeSeries};
    use parquet::file::reader::{FileReader, SerializedFileReader};

    fn doc(n: usize) -> ResultsDoc {
        let mut d = ResultsDoc {
            cclab: "test".into(),
            scenario: "s".into(),
            backend: "sim".into(),
            source: Some(Source {
                file: "s.toml".into(),
                sha256: "ab".into(),
                overrides: vec!["link.loss=1%".into()],
            }),
            ..Default::default()
        };
        for k in 0..n {
            let mut r = RunResult {
                seed: k as u64,
                duration_s: 1.0,
                ..Default::default()
            };
            // Point k / 2; the second point's loss is text, so the column is text.
            let loss = if k / 2 == 1 {
                serde_json::json!("1%")
            } else {
                serde_json::json!(k / 2)
            };
            r.params.insert("link.loss".into(), loss.clone());
            r.resolved.insert("link.loss".into(), loss);
            r.settings.insert("x".into(), serde_json::json!(k / 2));
            r.flows.push(FlowResult {
                cc: "bbr".into(),
                goodput_bps: 1e6 / (k + 1) as f64,
                ..Default::default()
            });
            if k % 3 != 0 {
                let mut s = TimeSeries {
                    interval_s: 0.1,
                    t_s: vec![0.1, 0.2],
                    link_queue_bytes: vec![1.0, 2.0],
                    ..Default::default()
                };
                s.flows.push(FlowSeries {
                    cc: "bbr".into(),
                    goodput_bps: vec![k as f64, 0.5],
                    ..Default::default()
                });
                if k == 5 {
                    s.queue_delay_ms
                        .insert("data.queue".into(), vec![0.25, 0.5]);
                }
                r.series = Some(s);
            }
            d.runs.push(r);
        }
        d
    }

    fn rows(path: &Path) -> Vec<String> {
        let r = SerializedFileReader::new(File::open(path).unwrap()).unwrap();
        r.get_row_iter(None)
            .unwrap()
            .map(|row| row.unwrap().to_string())
            .collect()
    }

    #[test]
    fn a_streamed_directory_holds_the_whole_documents_files() {
        for n in [0, 1, 7, 8] {
            let d = doc(n);
            let dir = std::env::temp_dir().join(format!("cclab-stream-{}-{n}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            let mut w = DirWriter::create(&dir, "s", "s.toml", Some("a test"), &d).unwrap();
            w.part = 2; // several row groups
            for r in &d.runs {
                w.push(r).unwrap();
            }
            assert_eq!(w.runs(), n);
            w.finish().unwrap();
            let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
            assert_eq!(read("results.json"), crate::export::json(&d), "{n} runs");
            assert_eq!(read("flows.csv"), crate::export::flows_csv(&d));
            assert_eq!(
                read("meta.json"),
                crate::load::meta_json("s", "s.toml", Some("a test"), &d)
            );
            for (k, r) in d.runs.iter().enumerate() {
                let p = dir.join(format!("series/run-{}.csv", k + 1));
                assert_eq!(
                    r.series.as_ref().map(|s| s.to_csv()),
                    std::fs::read_to_string(p).ok()
                );
            }
            for (file, bytes) in crate::parquet::files(&d).unwrap() {
                let whole = dir.join(format!("{file}.whole"));
                std::fs::write(&whole, bytes).unwrap();
                assert_eq!(rows(&dir.join(&file)), rows(&whole), "{file}, {n} runs");
            }
            assert!(!dir.join(SPOOL).exists(), "the spool is removed");
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }

    #[test]
    fn an_aborted_directory_leaves_only_what_was_there() {
        let d = doc(4);
        let base = std::env::temp_dir().join(format!("cclab-abort-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        // A directory of the caller's own: only the writer's files go, series/ too.
        std::fs::create_dir_all(&base).unwrap();
        std::fs::write(base.join("notes.txt"), "mine").unwrap();
        let mut w = DirWriter::create(&base, "s", "s.toml", None, &d).unwrap();
        for r in &d.runs {
            w.push(r).unwrap();
        }
        w.abort();
        let left: Vec<_> = std::fs::read_dir(&base)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(left, ["notes.txt"]);
        // A directory it created: gone.
        let fresh = base.join("sub");
        let mut w = DirWriter::create(&fresh, "s", "s.toml", None, &d).unwrap();
        w.push(&d.runs[1]).unwrap();
        w.abort();
        assert!(!fresh.exists());
        std::fs::remove_dir_all(&base).unwrap();
    }
}
