//! Tests of the path-element keys of `[link]`: `aqm` (a name or a `[link.aqm]` table),
//! `policer` and `shaper` (a rate or a table), `trace`, `rate` as a schedule, `loss_unit`,
//! `jitter`, `reorder` and `ack_aggregation`. For each: the values land in the right fields
//! of the `LinkSpec`'s path (a `cclab_path::LinkDesc`), which `desc()` hands on; defaults are
//! Linux's; every bad input is one line that names the key and says what would fix it;
//! sweeps expand to the right points and params; `--set` reaches every form; and
//! `to_toml_string` loads back to an equal scenario.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use cclab_path::{AqmDesc, CodelParams, FqCodelParams, LossUnit, PieParams, RateDesc, TokenBucket};
use cclab_scenario::*;
use serde_json::json;

const BASE: &str = r#"name = "t"
duration = "10s"
[link]
rate = "100mbit"
rtt = "20ms"
[[flows]]
cc = "cubic"
"#;

/// Line of the first `extra` line given to [`with_link`] (BASE's `[[flows]]` is after them).
const EXTRA_LINE: u32 = 6;

fn load(text: &str) -> ScenarioFile {
    ScenarioFile::from_str(text, "t.toml").unwrap_or_else(|e| panic!("{e}\n--- text ---\n{text}"))
}

fn points(f: &ScenarioFile) -> Vec<MatrixPoint> {
    f.expand().unwrap_or_else(|e| panic!("{e}"))
}

fn one_of(f: &ScenarioFile) -> Scenario {
    let pts = points(f);
    assert_eq!(pts.len(), 1, "expected one point");
    pts.into_iter().next().unwrap().scenario
}

fn one(text: &str) -> Scenario {
    one_of(&load(text))
}

/// BASE with `extra` lines added at the end of [link] (after rtt).
fn with_link(extra: &str) -> String {
    BASE.replace("rtt = \"20ms\"\n", &format!("rtt = \"20ms\"\n{extra}\n"))
}

/// BASE without its rate, with `extra` lines at the end of [link].
fn without_rate(extra: &str) -> String {
    with_link(extra).replace("rate = \"100mbit\"\n", "")
}

/// BASE with `extra` appended (new tables after `[[flows]]`).
fn with_tables(extra: &str) -> String {
    BASE.replace(
        "[[flows]]\ncc = \"cubic\"\n",
        &format!("[[flows]]\ncc = \"cubic\"\n{extra}\n"),
    )
}

/// The error of loading, overriding or expanding, checked to be one line.
fn one_line(e: ScenarioError) -> (ScenarioError, String) {
    let s = e.to_string();
    assert!(
        !s.contains('\n') && !s.contains('\r'),
        "not one line: {s:?}"
    );
    assert!(!s.trim().is_empty());
    (e, s)
}

/// Loads and expands `file`, expecting an error at either stage.
fn error_of_file(f: Result<ScenarioFile, ScenarioError>, what: &str) -> (ScenarioError, String) {
    match f {
        Err(e) => one_line(e),
        Ok(f) => match f.expand() {
            Err(e) => one_line(e),
            Ok(_) => panic!("expected an error for:\n{what}"),
        },
    }
}

fn error_of(text: &str) -> (ScenarioError, String) {
    error_of_file(ScenarioFile::from_str(text, "t.toml"), text)
}

/// The error names the file, `line`, the key, and says each of `needles`.
fn assert_error(text: &str, line: u32, key: &str, needles: &[&str]) -> ScenarioError {
    let (e, s) = error_of(text);
    assert!(
        s.starts_with(&format!("t.toml:{line}:")),
        "wrong file/line (want {line}) in: {s}\n--- text ---\n{text}"
    );
    assert!(s.contains(key), "key {key:?} missing in: {s}");
    for n in needles {
        assert!(s.contains(n), "{n:?} missing in: {s}");
    }
    e
}

/// Applies `sets` to `file` in order, then expands; the error of whichever stage fails.
fn set_error(file: &str, sets: &[&str]) -> (ScenarioError, String) {
    let mut f = load(file);
    for s in sets {
        if let Err(e) = f.apply_override(s) {
            return one_line(e);
        }
    }
    error_of_file(Ok(f), &format!("{file}\n--set {sets:?}"))
}

fn with_sets(text: &str, sets: &[&str]) -> ScenarioFile {
    let mut f = load(text);
    for s in sets {
        f.apply_override(s)
            .unwrap_or_else(|e| panic!("--set {s}: {e}"));
    }
    f
}

/// `to_toml_string` loads back to an equal scenario, writes the same text again, and its
/// resolved values are the same.
fn assert_round_trip(s: &Scenario) -> String {
    let text = s.to_toml_string();
    let again = ScenarioFile::from_str(&text, "again.toml")
        .unwrap_or_else(|e| panic!("{e}\n--- written ---\n{text}"));
    let pts = again
        .expand()
        .unwrap_or_else(|e| panic!("{e}\n--- written ---\n{text}"));
    assert_eq!(pts.len(), 1, "{text}");
    assert_eq!(&pts[0].scenario, s, "--- written ---\n{text}");
    assert_eq!(pts[0].scenario.to_toml_string(), text);
    assert_eq!(pts[0].scenario.resolved(), s.resolved());
    text
}

fn labels(pts: &[MatrixPoint]) -> Vec<String> {
    pts.iter().map(|p| p.label()).collect()
}

/// A folder of its own under the system's temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = std::env::temp_dir().join(format!(
            "cclab-path-keys-{}-{tag}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }

    /// Writes `text` to `name` (which may have folders) under this folder.
    fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.0.join(name);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(&p, text).unwrap();
        p
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A trace of 4 opportunities in 4 ms: 4 x 1500 bytes per 4 ms = 12 Mbit/s.
const TRACE: &str = "1\n2\n3\n4\n";
const TRACE_BPS: u64 = 12_000_000;

fn trace_of(link: &LinkSpec) -> &cclab_path::TraceDesc {
    match &link.path.rate_varies {
        Some(RateDesc::Trace(t)) => t,
        other => panic!("expected a trace, found {other:?}"),
    }
}

/// `path` relative to the current directory (`..` up to the root, then down), so that it
/// only resolves from there.
fn relative_to_cwd(path: &Path) -> String {
    let cwd = std::env::current_dir().unwrap();
    let ups = cwd.components().count() - 1;
    let down = path.strip_prefix("/").unwrap_or(path);
    let mut rel = PathBuf::new();
    for _ in 0..ups {
        rel.push("..");
    }
    rel.push(down);
    rel.display().to_string()
}

// ------------------------------------------------------------------------------------------
// aqm
// ------------------------------------------------------------------------------------------

#[test]
fn aqm_absent_is_droptail() {
    let s = one(BASE);
    assert_eq!(s.link.path.aqm, AqmDesc::default());
    assert_eq!(s.link.desc().aqm, AqmDesc::default());
    let r = s.resolved();
    assert_eq!(r["link.aqm"], json!("droptail"));
    assert!(!r.contains_key("link.aqm.target"));
    // Drop-tail is written as nothing at all.
    assert!(!s.to_toml_string().contains("aqm"));
}

#[test]
fn aqm_names_take_linux_defaults() {
    let codel = one(&with_link("aqm = \"codel\"")).link;
    assert_eq!(
        codel.path.aqm,
        AqmDesc::from(CodelParams {
            target_ns: 5_000_000,
            interval_ns: 100_000_000,
            ecn: true,
        })
    );
    let fq = one(&with_link("aqm = \"fq_codel\"")).link;
    assert_eq!(
        fq.path.aqm,
        AqmDesc::from(FqCodelParams {
            target_ns: 5_000_000,
            interval_ns: 100_000_000,
            ecn: true,
            flows: 1024,
            quantum: 1514,
            drop_batch: 64,
        })
    );
    let pie = one(&with_link("aqm = \"pie\"")).link;
    assert_eq!(
        pie.path.aqm,
        AqmDesc::from(PieParams {
            target_ns: 15_000_000,
            tupdate_ns: 15_000_000,
            alpha: 2,
            beta: 20,
            max_burst_ns: 150_000_000,
            ecn: true,
            bytemode: false,
            dq_rate_estimator: false,
        })
    );
    assert_eq!(
        one(&with_link("aqm = \"droptail\"")).link.path.aqm,
        AqmDesc::default()
    );
    // desc() carries it, and the table form with only `kind` is the same.
    for (name, link) in [("codel", &codel), ("fq_codel", &fq), ("pie", &pie)] {
        assert_eq!(link.desc().aqm, link.path.aqm);
        let table = one(&with_tables(&format!("[link.aqm]\nkind = \"{name}\"")));
        assert_eq!(table.link.path.aqm, link.path.aqm, "{name}");
        let inline = one(&with_link(&format!("aqm = {{ kind = \"{name}\" }}")));
        assert_eq!(inline.link.path.aqm, link.path.aqm, "{name}");
        assert_eq!(link.path.aqm.name(), name);
    }
    // The buffer stays the queue's limit.
    assert_eq!(codel.desc().buffer_bytes, 250_000);
}

#[test]
fn aqm_name_spellings() {
    for (text, want) in [
        ("FQ_CODEL", "fq_codel"),
        ("fq-codel", "fq_codel"),
        ("fqcodel", "fq_codel"),
        (" CoDel ", "codel"),
        ("PIE", "pie"),
        ("fifo", "droptail"),
        ("bfifo", "droptail"),
        ("drop-tail", "droptail"),
        ("none", "droptail"),
    ] {
        let s = one(&with_link(&format!("aqm = \"{text}\"")));
        assert_eq!(s.link.path.aqm.name(), want, "{text}");
        let s = one(&with_tables(&format!("[link.aqm]\nkind = \"{text}\"")));
        assert_eq!(s.link.path.aqm.name(), want, "{text}");
    }
}

#[test]
fn aqm_table_sets_each_parameter() {
    let s = one(&with_tables(
        "[link.aqm]\nkind = \"codel\"\ntarget = \"2ms\"\ninterval = \"50ms\"\necn = false",
    ));
    assert_eq!(
        s.link.path.aqm,
        AqmDesc::from(CodelParams {
            target_ns: 2_000_000,
            interval_ns: 50_000_000,
            ecn: false,
        })
    );
    let r = s.resolved();
    assert_eq!(r["link.aqm"], json!("codel"));
    assert_eq!(r["link.aqm.target"], json!(0.002));
    assert_eq!(r["link.aqm.interval"], json!(0.05));
    assert_eq!(r["link.aqm.ecn"], json!(false));

    let s = one(&with_tables(
        "[link.aqm]\nkind = \"fq_codel\"\ntarget = \"1ms\"\ninterval = \"20ms\"\necn = false\n\
         flows = 16\nquantum = 300\ndrop_batch = 8",
    ));
    let want = AqmDesc::from(FqCodelParams {
        target_ns: 1_000_000,
        interval_ns: 20_000_000,
        ecn: false,
        flows: 16,
        quantum: 300,
        drop_batch: 8,
    });
    assert_eq!(s.link.path.aqm, want);
    assert_eq!(s.link.desc().aqm, want);
    let r = s.resolved();
    assert_eq!(
        (
            &r["link.aqm.flows"],
            &r["link.aqm.quantum"],
            &r["link.aqm.drop_batch"]
        ),
        (&json!(16), &json!(300), &json!(8))
    );

    let s = one(&with_link(
        "aqm = { kind = \"pie\", target = \"20ms\", tupdate = \"30ms\", alpha = 4, beta = 0, \
         max_burst = \"0s\", ecn = false, bytemode = true, dq_rate_estimator = true }",
    ));
    let want = AqmDesc::from(PieParams {
        target_ns: 20_000_000,
        tupdate_ns: 30_000_000,
        alpha: 4,
        beta: 0,
        max_burst_ns: 0,
        ecn: false,
        bytemode: true,
        dq_rate_estimator: true,
    });
    assert_eq!(s.link.path.aqm, want);
    assert_eq!(s.link.desc().aqm, want);
    let r = s.resolved();
    assert_eq!(r["link.aqm.tupdate"], json!(0.03));
    assert_eq!(r["link.aqm.max_burst"], json!(0.0));
    assert_eq!(r["link.aqm.alpha"], json!(4));
    assert_eq!(r["link.aqm.bytemode"], json!(true));
    assert_eq!(r["link.aqm.dq_rate_estimator"], json!(true));
    // Only the discipline's own parameters are resolved.
    assert!(!r.contains_key("link.aqm.interval"));
    assert!(!r.contains_key("link.aqm.flows"));
    // Parameters of a kind not given keep the kind's defaults.
    let s = one(&with_tables("[link.aqm]\nkind = \"pie\"\ntarget = \"5ms\""));
    let Some(p) = s.link.path.aqm.params::<PieParams>() else {
        panic!()
    };
    assert_eq!(
        (p.target_ns, p.tupdate_ns, p.alpha),
        (5_000_000, 15_000_000, 2)
    );
}

#[test]
fn aqm_every_discipline_lists_its_parameters() {
    // Every setting a discipline declares (cclab_path::AQMS is the truth) is accepted for it,
    // and every other discipline's is refused; a value of the declared kind for each.
    let keys: Vec<&cclab_path::Setting> = {
        let mut v: Vec<&cclab_path::Setting> = Vec::new();
        for s in cclab_path::AQMS.iter().flat_map(|a| a.settings) {
            if !v.iter().any(|x| x.name == s.name) {
                v.push(s);
            }
        }
        v
    };
    assert!(keys.len() >= 12, "{} settings", keys.len());
    for aqm in cclab_path::AQMS {
        for s in &keys {
            let v = match s.kind {
                cclab_path::SettingKind::Time { .. } => "\"3ms\"".to_string(),
                cclab_path::SettingKind::Int { min, .. } => min.to_string(),
                cclab_path::SettingKind::Bool => "true".to_string(),
            };
            let (kind, k) = (aqm.name, s.name);
            let text = with_tables(&format!("[link.aqm]\nkind = \"{kind}\"\n{k} = {v}"));
            let r = match ScenarioFile::from_str(&text, "t.toml") {
                Ok(f) => f.expand().map(|_| ()),
                Err(e) => Err(e),
            };
            let takes = aqm.settings.iter().any(|x| x.name == k);
            assert_eq!(r.is_ok(), takes, "{kind}.{k}: {r:?}");
        }
    }
    // The lists as docs/scenarios.md gives them.
    let names = |kind: &str| -> Vec<&str> {
        let a = cclab_path::Aqm::by_name(kind).expect("registered");
        a.settings.iter().map(|s| s.name).collect()
    };
    assert_eq!(names("codel"), ["target", "interval", "ecn"]);
    assert_eq!(names("droptail"), Vec::<&str>::new());
}

#[test]
fn aqm_errors_name_the_key_and_the_fix() {
    let line = EXTRA_LINE;
    // An unknown name lists the names.
    let e = assert_error(
        &with_link("aqm = \"red\""),
        line,
        "link.aqm = \"red\"",
        &[
            "unknown queue discipline \"red\"",
            "droptail, codel, fq_codel, pie",
        ],
    );
    assert_eq!(e.kind, ErrorKind::BadValue);
    assert_error(
        &with_tables("[link.aqm]\nkind = \"sfq\""),
        9,
        "link.aqm.kind",
        &["unknown queue discipline \"sfq\"", "fq_codel, pie"],
    );
    assert_error(
        &with_link("aqm = [\"codel\", \"cake\"]"),
        line,
        "link.aqm[1]",
        &["unknown queue discipline \"cake\"", "droptail, codel"],
    );
    // A parameter the discipline does not take says which take it.
    let e = assert_error(
        &with_tables("[link.aqm]\nkind = \"codel\"\nflows = 16"),
        10,
        "link.aqm.flows",
        &[
            "codel has no parameter flows",
            "codel takes: target, interval, ecn",
            "fq_codel takes it",
        ],
    );
    assert_eq!(e.kind, ErrorKind::Inconsistent);
    assert_error(
        &with_tables("[link.aqm]\nkind = \"fq_codel\"\ntupdate = \"5ms\""),
        10,
        "link.aqm.tupdate",
        &["fq_codel has no parameter tupdate", "pie takes it"],
    );
    assert_error(
        &with_tables("[link.aqm]\nkind = \"pie\"\ninterval = \"5ms\""),
        10,
        "link.aqm.interval",
        &["pie has no parameter interval", "codel"],
    );
    assert_error(
        &with_tables("[link.aqm]\nkind = \"droptail\"\ntarget = \"5ms\""),
        10,
        "link.aqm.target",
        &["droptail has no parameter target", "droptail takes: none"],
    );
    // The table needs its kind.
    let e = assert_error(
        &with_tables("[link.aqm]\ntarget = \"5ms\""),
        8,
        "link.aqm.kind",
        &["missing required key", "kind = \"codel\""],
    );
    assert_eq!(e.kind, ErrorKind::MissingKey);
    // Unknown keys of the table get a suggestion among its keys.
    assert_error(
        &with_tables("[link.aqm]\nkind = \"codel\"\ntargte = \"5ms\""),
        10,
        "link.aqm.targte",
        &["did you mean target?", "allowed here: kind, target"],
    );
    // Wrong types and values out of range.
    for (extra, key, needle) in [
        (
            "aqm = 5",
            "link.aqm",
            "a queue discipline (droptail, codel, fq_codel, pie) or a [link.aqm] table",
        ),
        ("aqm = true", "link.aqm", "or a [link.aqm] table"),
        (
            "aqm = { kind = 1 }",
            "link.aqm.kind",
            "expected a queue discipline",
        ),
        (
            "aqm = { kind = \"codel\", target = \"0ms\" }",
            "link.aqm.target",
            "must be positive",
        ),
        (
            "aqm = { kind = \"codel\", target = 5 }",
            "link.aqm.target",
            "needs a unit",
        ),
        (
            "aqm = { kind = \"codel\", target = \"-5ms\" }",
            "link.aqm.target",
            "negative",
        ),
        (
            "aqm = { kind = \"codel\", interval = \"soon\" }",
            "link.aqm.interval",
            "not a time",
        ),
        (
            "aqm = { kind = \"codel\", ecn = \"yes\" }",
            "link.aqm.ecn",
            "true or false",
        ),
        (
            "aqm = { kind = \"fq_codel\", flows = 0 }",
            "link.aqm.flows",
            "between 1 and 65536",
        ),
        (
            "aqm = { kind = \"fq_codel\", flows = 1.5 }",
            "link.aqm.flows",
            "whole number",
        ),
        (
            "aqm = { kind = \"fq_codel\", quantum = 100 }",
            "link.aqm.quantum",
            "between 256 and",
        ),
        (
            "aqm = { kind = \"fq_codel\", drop_batch = 2000 }",
            "link.aqm.drop_batch",
            "between 1 and 1024",
        ),
        (
            "aqm = { kind = \"pie\", alpha = 33 }",
            "link.aqm.alpha",
            "between 0 and 32",
        ),
        (
            "aqm = { kind = \"pie\", beta = -1 }",
            "link.aqm.beta",
            "between 0 and 32",
        ),
        (
            "aqm = { kind = \"pie\", tupdate = \"0s\" }",
            "link.aqm.tupdate",
            "positive",
        ),
        (
            "aqm = { kind = \"pie\", max_burst = \"-1ms\" }",
            "link.aqm.max_burst",
            "negative",
        ),
        ("aqm = []", "link.aqm", "empty list"),
        ("aqm = [[\"codel\"]]", "link.aqm[0]", "cannot be nested"),
        (
            "aqm = [{ kind = \"codel\" }]",
            "link.aqm[0]",
            "cannot be tables",
        ),
    ] {
        assert_error(&with_link(extra), line, key, &[needle]);
    }
}

// ------------------------------------------------------------------------------------------
// policer and shaper
// ------------------------------------------------------------------------------------------

#[test]
fn buckets_absent_by_default() {
    let s = one(BASE);
    assert_eq!(
        (s.link.path.policer.clone(), s.link.path.shaper.clone()),
        (None, None)
    );
    let r = s.resolved();
    assert_eq!(r["link.policer"], json!(null));
    assert_eq!(r["link.shaper"], json!(null));
}

#[test]
fn bucket_rate_with_default_burst() {
    // 10 ms at 10 Mbit/s is 12.5 kB, under the 64 KiB floor.
    let s = one(&with_link("policer = \"10mbit\"\nshaper = \"20mbit\""));
    let want_p = TokenBucket {
        rate_bps: 10e6,
        burst_bytes: 65_536,
    };
    let want_s = TokenBucket {
        rate_bps: 20e6,
        burst_bytes: 65_536,
    };
    assert_eq!(s.link.path.policer, Some(want_p.clone()));
    assert_eq!(s.link.path.shaper, Some(want_s.clone()));
    let d = s.link.desc();
    assert_eq!((d.policer, d.shaper), (Some(want_p), Some(want_s)));
    // 10 ms at 1 Gbit/s is 1.25 MB, over the floor.
    let s = one(&with_link("policer = \"1gbit\""));
    assert_eq!(s.link.path.policer.as_ref().unwrap().burst_bytes, 1_250_000);
    // The floor and 10 ms meet at 52.4288 Mbit/s.
    let s = one(&with_link("shaper = \"60mbit\""));
    assert_eq!(s.link.path.shaper.as_ref().unwrap().burst_bytes, 75_000);
    let r = s.resolved();
    assert_eq!(r["link.shaper.rate"], json!(60_000_000));
    assert_eq!(r["link.shaper.burst"], json!(75_000));
    assert_eq!(r["link.policer"], json!(null));
    // A table without burst takes the same default.
    let s = one(&with_tables("[link.policer]\nrate = \"1gbit\""));
    assert_eq!(s.link.path.policer.as_ref().unwrap().burst_bytes, 1_250_000);
}

#[test]
fn bucket_table_sets_burst() {
    let s = one(&with_tables(
        "[link.policer]\nrate = \"10mbit\"\nburst = \"128kb\"\n[link.shaper]\nrate = \"5MB/s\"\nburst = 3000",
    ));
    assert_eq!(
        s.link.path.policer,
        Some(TokenBucket {
            rate_bps: 10e6,
            burst_bytes: 128_000
        })
    );
    assert_eq!(
        s.link.path.shaper,
        Some(TokenBucket {
            rate_bps: 40e6,
            burst_bytes: 3000
        })
    );
    assert_eq!(s.link.desc().shaper, s.link.path.shaper);
    let r = s.resolved();
    assert_eq!(r["link.policer.burst"], json!(128_000));
    assert_eq!(r["link.shaper.rate"], json!(40_000_000));
    // Inline tables, a burst of exactly one packet, and a small policer given bytes.
    let s = one(&with_link(
        "policer = { rate = \"64kbit\", burst = \"1500b\" }",
    ));
    assert_eq!(s.link.path.policer.as_ref().unwrap().burst_bytes, 1500);
}

#[test]
fn bucket_errors_name_the_key_and_the_fix() {
    // A burst smaller than a packet says the least that works.
    let e = assert_error(
        &with_tables("[link.policer]\nrate = \"10mbit\"\nburst = \"1kb\""),
        8,
        "link.policer.burst",
        &[
            "a burst of 1000 bytes cannot pass one packet of 1500 bytes",
            "use at least \"1500b\"",
        ],
    );
    assert_eq!(e.kind, ErrorKind::Inconsistent);
    // The packet is mss + 52 bytes.
    let text = with_link("mss = 9000\nshaper = { rate = \"1gbit\", burst = \"9kb\" }");
    assert_error(
        &text,
        line_of(&text, "shaper"),
        "link.shaper.burst",
        &["cannot pass one packet of 9052 bytes", "9052b"],
    );
    // A default burst always holds a jumbo packet.
    one(&with_link("mss = 9000\npolicer = \"1kbit\""));
    for (extra, key, needle) in [
        ("policer = \"fast\"", "link.policer", "not a rate"),
        (
            "policer = 10",
            "link.policer",
            "expected a rate like \"10mbit\"",
        ),
        ("policer = \"0mbit\"", "link.policer", "positive"),
        (
            "policer = true",
            "link.policer",
            "a rate like \"10mbit\", or a table with rate and burst",
        ),
        (
            "shaper = { burst = \"64kb\" }",
            "link.shaper.rate",
            "missing required key",
        ),
        (
            "shaper = { rate = \"10mbit\", burst = \"-1kb\" }",
            "link.shaper.burst",
            "negative",
        ),
        (
            "shaper = { rate = \"10mbit\", burst = -1 }",
            "link.shaper.burst",
            "negative",
        ),
        (
            "shaper = { rate = \"10mbit\", burst = \"64kbit\" }",
            "link.shaper.burst",
            "unknown size unit",
        ),
        (
            "shaper = { rate = \"10mbit\", brust = \"64kb\" }",
            "link.shaper.brust",
            "did you mean burst?",
        ),
        ("shaper = { rate = 10 }", "link.shaper.rate", "needs a unit"),
        ("shaper = []", "link.shaper", "empty list"),
    ] {
        assert_error(&with_link(extra), EXTRA_LINE, key, &[needle]);
    }
    // A zero burst is a burst, not a flow size.
    let (_, s) = error_of(&with_link("policer = { rate = \"10mbit\", burst = 0 }"));
    assert!(s.contains("link.policer.burst"), "{s}");
    assert!(!s.contains("bulk flow"), "{s}");
    // A bucket's rate is one rate: a schedule there is an error that says so.
    let (_, s) = error_of(&with_link(
        "policer = { rate = [{at = \"0s\", rate = \"1mbit\"}] }",
    ));
    assert!(s.contains("link.policer.rate"), "{s}");
    assert!(!s.contains("missing required key"), "{s}");
    assert!(s.contains("schedule"), "{s}");
}

/// 1-based line of the first line of `text` that starts with `prefix`.
fn line_of(text: &str, prefix: &str) -> u32 {
    text.lines().position(|l| l.starts_with(prefix)).unwrap() as u32 + 1
}

// ------------------------------------------------------------------------------------------
// rate schedules
// ------------------------------------------------------------------------------------------

const SCHEDULE: &str =
    "rate = [{at = \"0s\", rate = \"100mbit\"}, {at = \"20s\", rate = \"20mbit\"}, {at = \"25s\", rate = \"200mbit\"}]";

#[test]
fn rate_schedule_is_one_value() {
    let text = with_link("").replace("rate = \"100mbit\"", SCHEDULE);
    let f = load(&text);
    assert!(f.sweep_keys().is_empty(), "{:?}", f.sweep_keys());
    assert_eq!(f.matrix_len(), 1);
    let s = one_of(&f);
    let steps = vec![(0, 100e6), (20_000_000_000, 20e6), (25_000_000_000, 200e6)];
    assert_eq!(
        s.link.path.rate_varies,
        Some(RateDesc::Schedule(steps.clone()))
    );
    assert_eq!(s.link.desc().rate_varies, Some(RateDesc::Schedule(steps)));
    // The nominal rate (buffers in bdp) is the highest.
    assert_eq!(s.link.path.rate_bps, 200_000_000.0);
    assert_eq!(s.link.bdp_bytes(), 500_000);
    assert_eq!(s.link.buffer_bytes(), 500_000);
    let r = s.resolved();
    assert_eq!(r["link.rate"], json!(200_000_000));
    assert_eq!(
        r["link.rate_schedule"],
        json!([
            {"at": 0.0, "rate": 100_000_000},
            {"at": 20.0, "rate": 20_000_000},
            {"at": 25.0, "rate": 200_000_000}
        ])
    );
    // One step is a schedule too; an integer 0 is a time; steps may be written as tables.
    let s =
        one(&with_link("").replace("rate = \"100mbit\"", "rate = [{at = 0, rate = \"5mbit\"}]"));
    assert_eq!(
        s.link.path.rate_varies,
        Some(RateDesc::Schedule(vec![(0, 5e6)]))
    );
    let text = BASE.replace("rate = \"100mbit\"\n", "")
        + "[[link.rate]]\nat = \"0s\"\nrate = \"1mbit\"\n[[link.rate]]\nat = \"1s\"\nrate = \"2mbit\"\n";
    let s = one(&text);
    assert_eq!(
        s.link.path.rate_varies,
        Some(RateDesc::Schedule(vec![(0, 1e6), (1_000_000_000, 2e6)]))
    );
}

#[test]
fn a_list_of_schedules_is_a_sweep() {
    let text = with_link("").replace(
        "rate = \"100mbit\"",
        "rate = [[{at = \"0s\", rate = \"10mbit\"}, {at = \"1s\", rate = \"5mbit\"}], \"50mbit\", [{at = \"0s\", rate = \"1mbit\"}]]",
    );
    let f = load(&text);
    assert_eq!(f.sweep_keys(), ["link.rate"]);
    let pts = points(&f);
    assert_eq!(pts.len(), 3);
    assert_eq!(
        pts[0].params["link.rate"],
        json!([{"at": 0.0, "rate": 10_000_000}, {"at": 1.0, "rate": 5_000_000}])
    );
    assert_eq!(pts[1].params["link.rate"], json!(50_000_000));
    assert_eq!(pts[0].scenario.link.path.rate_bps, 10_000_000.0);
    assert_eq!(pts[1].scenario.link.path.rate_varies, None);
    assert_eq!(
        pts[2].scenario.link.path.rate_varies,
        Some(RateDesc::Schedule(vec![(0, 1e6)]))
    );
    for p in &pts {
        assert_round_trip(&p.scenario);
    }
}

#[test]
fn schedule_errors_name_the_step_and_the_fix() {
    let bad = |sched: &str| with_link("").replace("rate = \"100mbit\"", &format!("rate = {sched}"));
    let cases = [
        (
            "[{at = \"1s\", rate = \"10mbit\"}]",
            &["the first step must be at \"0s\"", "e.g. rate = [{at = \"0s\""][..],
        ),
        (
            "[{at = \"0s\", rate = \"10mbit\"}, {at = \"0s\", rate = \"20mbit\"}]",
            &["step 1 is not later than step 0", "time order"][..],
        ),
        (
            "[{at = \"0s\", rate = \"10mbit\"}, {at = \"5s\", rate = \"20mbit\"}, {at = \"2s\", rate = \"1mbit\"}]",
            &["step 2 is not later than step 1"][..],
        ),
        (
            "[{at = \"0s\"}]",
            &["step 0 needs at and rate", "e.g. rate = [{at"][..],
        ),
        (
            "[{at = \"0s\", rate = \"1mbit\"}, {rate = \"10mbit\"}]",
            &["step 1 needs at and rate"][..],
        ),
        (
            "[{at = \"0s\", rate = \"1mbit\", loss = \"1%\"}]",
            &["step 0: unknown key loss", "a step has at and rate"][..],
        ),
        (
            "[{at = \"0s\", rate = \"1mbit\"}, {at = \"-1s\", rate = \"1mbit\"}]",
            &["step 1", "negative"][..],
        ),
        (
            "[{at = \"0s\", rate = \"1mbit\"}, {at = \"later\", rate = \"1mbit\"}]",
            &["step 1", "not a time"][..],
        ),
        (
            "[{at = \"0s\", rate = \"1mbit\"}, {at = 5, rate = \"1mbit\"}]",
            &["step 1", "needs a unit"][..],
        ),
        (
            "[{at = \"0s\", rate = \"0mbit\"}]",
            &["step 0", "positive"][..],
        ),
        (
            "[{at = \"0s\", rate = 100}]",
            &["step 0", "a rate is a string like \"100mbit\""][..],
        ),
        (
            "[{at = \"0s\", rate = \"fast\"}]",
            &["step 0", "not a rate"][..],
        ),
        (
            "[{at = \"0s\", rate = \"1mbit\"}, \"2mbit\"]",
            &["cannot be tables"][..],
        ),
        ("[]", &["empty list"][..]),
    ];
    for (sched, needles) in cases {
        let e = assert_error(&bad(sched), 4, "link.rate", needles);
        assert!(
            matches!(e.kind, ErrorKind::BadValue | ErrorKind::WrongType),
            "{e}"
        );
    }
    // A bad schedule in a sweep names its element.
    assert_error(
        &bad("[\"1mbit\", [{at = \"1s\", rate = \"10mbit\"}]]"),
        4,
        "link.rate[1]",
        &["the first step must be at \"0s\""],
    );
}

// ------------------------------------------------------------------------------------------
// trace
// ------------------------------------------------------------------------------------------

#[test]
fn trace_relative_to_the_scenario_folder() {
    let dir = TempDir::new("rel");
    dir.write("traces/step.trace", TRACE);
    let text = without_rate("trace = \"traces/step.trace\"\nbuffer = \"2bdp\"");
    let path = dir.write("x.toml", &text);
    let f = ScenarioFile::from_file(&path).unwrap_or_else(|e| panic!("{e}"));
    let s = one_of(&f);
    let t = trace_of(&s.link);
    assert_eq!(
        t.opportunities,
        vec![1_000_000, 2_000_000, 3_000_000, 4_000_000]
    );
    assert_eq!(t.period(), 4_000_000);
    // The nominal rate is the trace's mean; buffers in bdp use it.
    assert_eq!(s.link.path.rate_bps, TRACE_BPS as f64);
    assert_eq!(s.link.bdp_bytes(), 30_000);
    assert_eq!(s.link.buffer_bytes(), 60_000);
    assert_eq!(s.link.desc().rate_varies, s.link.path.rate_varies);
    assert_eq!(s.link.desc().rate_bps, TRACE_BPS as f64);
    let r = s.resolved();
    assert_eq!(r["link.rate"], json!(TRACE_BPS));
    assert!(
        r["link.trace"].as_str().unwrap().ends_with("step.trace"),
        "{}",
        r["link.trace"]
    );
    // Blank lines are ignored, repeated timestamps are several opportunities.
    dir.write("b.trace", "\n0\n5\n5\n\n10\n");
    let path = dir.write("b.toml", &without_rate("trace = \"b.trace\""));
    let s = one_of(&ScenarioFile::from_file(&path).unwrap());
    assert_eq!(
        trace_of(&s.link).opportunities,
        vec![0, 5_000_000, 5_000_000, 10_000_000]
    );
    assert_eq!(s.link.path.rate_bps, 4_800_000.0);
    // An absolute path is taken as it is.
    let abs = dir.0.join("traces/step.trace");
    let other = TempDir::new("abs");
    let path = other.write(
        "a.toml",
        &without_rate(&format!("trace = {:?}", abs.display().to_string())),
    );
    assert_eq!(
        trace_of(&one_of(&ScenarioFile::from_file(&path).unwrap()).link).opportunities,
        t.opportunities
    );
}

#[test]
fn trace_errors_name_the_key_and_the_fix() {
    let dir = TempDir::new("err");
    // A missing file: where it looked, and what paths are relative to.
    let path = dir.write("x.toml", &without_rate("trace = \"nope.trace\""));
    let (e, s) = error_of_file(ScenarioFile::from_file(&path), "missing trace");
    assert_eq!(e.kind, ErrorKind::BadValue);
    assert!(s.starts_with(&format!("{}:5:", path.display())), "{s}");
    assert!(s.contains("link.trace = \"nope.trace\""), "{s}");
    assert!(s.contains("cannot read trace file"), "{s}");
    assert!(
        s.contains(&dir.0.join("nope.trace").display().to_string()),
        "{s}"
    );
    assert!(s.contains("relative to its folder"), "{s}");
    // A malformed trace names the file and the line.
    for (body, needles) in [
        (
            "1\n2\nthree\n4\n",
            &["line 3", "whole number of milliseconds", "\"three\""][..],
        ),
        ("1\n2.5\n", &["line 2", "\"2.5\""][..]),
        ("1\n-2\n", &["line 2"][..]),
        ("5\n3\n", &["line 2", "must not decrease"][..]),
        ("", &["no timestamps"][..]),
        ("\n\n", &["no timestamps"][..]),
        ("0\n0\n", &["more than 0 ms"][..]),
        ("99999999999999999999\n", &["line 1"][..]),
    ] {
        dir.write("bad.trace", body);
        let path = dir.write("bad.toml", &without_rate("trace = \"bad.trace\""));
        let (_, s) = error_of_file(ScenarioFile::from_file(&path), body);
        assert!(s.contains("link.trace"), "{s}");
        assert!(s.contains("bad.trace"), "{s}");
        for n in needles {
            assert!(s.contains(n), "{body:?}: {n:?} missing in: {s}");
        }
    }
    // Trace and rate both in the file.
    dir.write("ok.trace", TRACE);
    let path = dir.write("both.toml", &with_link("trace = \"ok.trace\""));
    let (e, s) = error_of_file(ScenarioFile::from_file(&path), "both");
    assert_eq!(e.kind, ErrorKind::Inconsistent);
    assert!(s.contains("link.trace"), "{s}");
    assert!(s.contains("link.trace and link.rate both give"), "{s}");
    assert!(s.contains("keep one"), "{s}");
    // ...also when the rate is a schedule or a sweep.
    let path = dir.write(
        "both2.toml",
        &with_link("trace = \"ok.trace\"").replace("\"100mbit\"", "[\"1mbit\", \"2mbit\"]"),
    );
    let (_, s) = error_of_file(ScenarioFile::from_file(&path), "both2");
    assert!(s.contains("both give"), "{s}");
    // Neither: the rate is missing, and the message says a trace would do.
    assert_error(
        &without_rate(""),
        3,
        "link.rate",
        &["missing required key", "rate = \"100mbit\""],
    );
    for (extra, needle) in [
        ("trace = \"\"", "empty path"),
        ("trace = \"  \"", "empty path"),
        ("trace = 5", "the path of a Mahimahi trace file"),
        ("trace = []", "empty list"),
    ] {
        assert_error(&without_rate(extra), 5, "link.trace", &[needle]);
    }
}

#[test]
fn trace_with_set_is_relative_to_the_current_directory() {
    let dir = TempDir::new("set");
    let trace = dir.write("t/x.trace", TRACE);
    // The scenario file in a folder of its own, beside a trace of the same relative name.
    let sdir = TempDir::new("set-sc");
    let scenario = sdir.write("s.toml", &with_link("loss = \"1%\""));
    sdir.write("t/x.trace", "1\n");
    let rel = relative_to_cwd(&trace);
    assert!(!Path::new(&rel).is_absolute());
    let mut f = ScenarioFile::from_file(&scenario).unwrap();
    f.apply_override(&format!("link.trace={rel}")).unwrap();
    let s = one_of(&f);
    // The file's rate is replaced by the trace's.
    assert_eq!(trace_of(&s.link).opportunities.len(), 4);
    assert_eq!(s.link.path.rate_bps, TRACE_BPS as f64);
    // Named by its absolute path, so the written scenario loads from anywhere.
    assert_eq!(
        Path::new(&trace_of(&s.link).name),
        std::fs::canonicalize(&trace).unwrap()
    );
    assert_eq!(s.link.path.loss, 0.01);
    assert_round_trip(&s);
    // A path relative to the scenario's folder is not what --set means.
    let mut f = ScenarioFile::from_file(&scenario).unwrap();
    let e = match f.apply_override("link.trace=t/x.trace") {
        Err(e) => e,
        Ok(()) => f.expand().unwrap_err(),
    };
    let (_, s) = one_line(e);
    assert!(s.contains("--set link.trace=t/x.trace"), "{s}");
    assert!(s.contains("cannot read trace file t/x.trace"), "{s}");
    assert!(s.contains("current directory"), "{s}");
    assert!(!s.contains("relative to its folder"), "{s}");
    // A quoted value is the same path; a --set trace also replaces a swept or scheduled rate.
    let swept = sdir.write(
        "swept.toml",
        &with_link("").replace("\"100mbit\"", "[\"1mbit\", \"2mbit\"]"),
    );
    let mut f = ScenarioFile::from_file(&swept).unwrap();
    f.apply_override(&format!("link.trace=\"{rel}\"")).unwrap();
    assert!(f.sweep_keys().is_empty(), "{:?}", f.sweep_keys());
    assert_eq!(one_of(&f).link.path.rate_bps, TRACE_BPS as f64);
    let sched = sdir.write(
        "sched.toml",
        &with_link("").replace("rate = \"100mbit\"", SCHEDULE),
    );
    let mut f = ScenarioFile::from_file(&sched).unwrap();
    f.apply_override(&format!("link.trace={rel}")).unwrap();
    assert!(matches!(
        one_of(&f).link.path.rate_varies,
        Some(RateDesc::Trace(_))
    ));
}

#[test]
fn set_rate_replaces_the_file_s_trace() {
    let dir = TempDir::new("set-rate");
    dir.write("x.trace", TRACE);
    let path = dir.write("s.toml", &without_rate("trace = \"x.trace\""));
    let mut f = ScenarioFile::from_file(&path).unwrap();
    f.apply_override("link.rate=50mbit").unwrap();
    let s = one_of(&f);
    assert_eq!(
        s.link.path.rate_bps, 50_000_000.0,
        "a --set rate was ignored"
    );
    assert_eq!(s.link.path.rate_varies, None);
    let mut f = ScenarioFile::from_file(&path).unwrap();
    f.apply_override("link.rate=[{at=\"0s\",rate=\"100mbit\"},{at=\"5s\",rate=\"20mbit\"}]")
        .unwrap();
    assert_eq!(
        one_of(&f).link.path.rate_varies,
        Some(RateDesc::Schedule(vec![(0, 100e6), (5_000_000_000, 20e6)]))
    );
}

#[test]
fn trace_sweep() {
    let dir = TempDir::new("sweep");
    dir.write("a.trace", TRACE);
    dir.write("b.trace", "2\n4\n");
    let path = dir.write(
        "s.toml",
        &without_rate("trace = [\"a.trace\", \"b.trace\"]\naqm = [\"codel\", \"pie\"]"),
    );
    let f = ScenarioFile::from_file(&path).unwrap();
    assert_eq!(f.sweep_keys(), ["link.trace", "link.aqm"]);
    let pts = points(&f);
    assert_eq!(
        labels(&pts),
        [
            "link.trace=a.trace,link.aqm=codel",
            "link.trace=a.trace,link.aqm=pie",
            "link.trace=b.trace,link.aqm=codel",
            "link.trace=b.trace,link.aqm=pie"
        ]
    );
    assert_eq!(pts[0].scenario.link.path.rate_bps, TRACE_BPS as f64);
    assert_eq!(pts[3].scenario.link.path.rate_bps, 6_000_000.0);
    for p in &pts {
        assert_round_trip(&p.scenario);
    }
}

#[test]
fn trace_is_read_once_per_expand() {
    // Traces run to tens of thousands of lines: every point of a sweep shares one copy.
    let dir = TempDir::new("once");
    let body: String = (1..=20_000).map(|i| format!("{}\n", i / 2)).collect();
    dir.write("long.trace", &body);
    let path = dir.write("s.toml", &without_rate("trace = \"long.trace\""));
    let mut f = ScenarioFile::from_file(&path).unwrap();
    f.apply_override("seed=[1, 2, 3, 4, 5, 6, 7, 8]").unwrap();
    f.apply_override("link.aqm=[codel, pie]").unwrap();
    let pts = points(&f);
    assert_eq!(pts.len(), 16);
    let first = match &pts[0].scenario.link.path.rate_varies {
        Some(RateDesc::Trace(t)) => t.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(first.opportunities.len(), 20_000);
    for p in &pts {
        match &p.scenario.link.path.rate_varies {
            Some(RateDesc::Trace(t)) => assert!(std::sync::Arc::ptr_eq(t, &first)),
            other => panic!("{other:?}"),
        }
    }
}

// ------------------------------------------------------------------------------------------
// loss_unit, jitter, reorder, ack_aggregation
// ------------------------------------------------------------------------------------------

#[test]
fn loss_unit() {
    assert_eq!(one(BASE).link.path.loss_unit, LossUnit::Segment);
    assert_eq!(one(BASE).resolved()["link.loss_unit"], json!("segment"));
    for (text, want) in [
        ("segment", LossUnit::Segment),
        ("gso", LossUnit::Gso),
        ("GSO", LossUnit::Gso),
        (" Segment ", LossUnit::Segment),
    ] {
        let s = one(&with_link(&format!("loss_unit = \"{text}\"")));
        assert_eq!(s.link.path.loss_unit, want, "{text}");
        assert_eq!(s.link.desc().loss_unit, want, "{text}");
    }
    assert_eq!(
        one(&with_link("loss_unit = \"gso\"")).resolved()["link.loss_unit"],
        json!("gso")
    );
    let f = load(&with_link(
        "loss = \"1%\"\nloss_unit = [\"segment\", \"gso\"]",
    ));
    assert_eq!(
        labels(&points(&f)),
        ["link.loss_unit=segment", "link.loss_unit=gso"]
    );
    for (extra, needles) in [
        (
            "loss_unit = \"packet\"",
            &["unknown loss unit \"packet\"", "segment:", "gso:"][..],
        ),
        ("loss_unit = 1", &["\"segment\" or \"gso\""][..]),
        ("loss_unit = true", &["\"segment\" or \"gso\""][..]),
        ("loss_unit = []", &["empty list"][..]),
    ] {
        assert_error(&with_link(extra), EXTRA_LINE, "link.loss_unit", needles);
    }
}

#[test]
fn jitter_reorder_ack_aggregation() {
    let s = one(BASE);
    assert_eq!(
        (
            s.link.path.jitter_ns,
            s.link.path.reorder,
            s.link.path.ack_aggregation_ns
        ),
        (0, false, 0)
    );
    let r = s.resolved();
    assert_eq!(
        (
            &r["link.jitter"],
            &r["link.reorder"],
            &r["link.ack_aggregation"]
        ),
        (&json!(0.0), &json!(false), &json!(0.0))
    );
    let s = one(&with_link(
        "jitter = \"2ms\"\nreorder = true\nack_aggregation = \"500us\"",
    ));
    assert_eq!(
        (
            s.link.path.jitter_ns,
            s.link.path.reorder,
            s.link.path.ack_aggregation_ns
        ),
        (2_000_000, true, 500_000)
    );
    let d = s.link.desc();
    assert_eq!(
        (d.jitter_ns, d.reorder, d.ack_aggregation_ns),
        (2_000_000, true, 500_000)
    );
    let r = s.resolved();
    assert_eq!(r["link.jitter"], json!(0.002));
    assert_eq!(r["link.reorder"], json!(true));
    assert_eq!(r["link.ack_aggregation"], json!(0.0005));
    // Zero is "off", written bare or with a unit.
    let s = one(&with_link("jitter = 0\nack_aggregation = \"0s\""));
    assert_eq!(
        (s.link.path.jitter_ns, s.link.path.ack_aggregation_ns),
        (0, 0)
    );
    for key in ["jitter", "ack_aggregation"] {
        for (v, needle) in [
            ("\"-1ms\"", "must not be negative"),
            ("\"soon\"", "not a time"),
            ("\"5min\"", "unknown time unit"),
            ("5", "needs a unit"),
            ("-5", "needs a unit"),
            ("1.5", "needs a unit"),
            ("true", "expected a time string"),
            ("\"1e30s\"", "too large"),
        ] {
            assert_error(
                &with_link(&format!("{key} = {v}")),
                EXTRA_LINE,
                &format!("link.{key}"),
                &[needle],
            );
        }
    }
    assert_error(
        &with_link("reorder = \"yes\""),
        EXTRA_LINE,
        "link.reorder",
        &["expected true or false"],
    );
    assert_error(
        &with_link("reorder = 1"),
        EXTRA_LINE,
        "link.reorder",
        &["expected true or false"],
    );
    let f = load(&with_link(
        "jitter = [\"0s\", \"1ms\"]\nreorder = [false, true]",
    ));
    assert_eq!(
        labels(&points(&f)),
        [
            "link.jitter=0.0,link.reorder=false",
            "link.jitter=0.0,link.reorder=true",
            "link.jitter=0.001,link.reorder=false",
            "link.jitter=0.001,link.reorder=true"
        ]
    );
}

// ------------------------------------------------------------------------------------------
// Sweeps
// ------------------------------------------------------------------------------------------

#[test]
fn aqm_name_sweep() {
    let f = load(&with_link(
        "aqm = [\"droptail\", \"codel\", \"FQ-CoDel\", \"pie\"]",
    ));
    assert_eq!(f.sweep_keys(), ["link.aqm"]);
    let pts = points(&f);
    assert_eq!(
        labels(&pts),
        [
            "link.aqm=droptail",
            "link.aqm=codel",
            "link.aqm=fq_codel",
            "link.aqm=pie"
        ]
    );
    assert_eq!(
        pts[2].scenario.link.path.aqm,
        AqmDesc::from(FqCodelParams::default())
    );
    for p in &pts {
        // The params value is the resolved one.
        assert_eq!(p.resolved()["link.aqm"], p.params["link.aqm"]);
        assert_round_trip(&p.scenario);
    }
}

#[test]
fn aqm_kind_sweep_applies_parameters_to_the_kinds_that_take_them() {
    let f = load(&with_tables(
        "[link.aqm]\nkind = [\"codel\", \"fq_codel\", \"pie\"]\ntarget = [\"5ms\", \"10ms\"]\n\
         interval = [\"50ms\", \"100ms\"]\nflows = [64, 1024]\ntupdate = \"30ms\"",
    ));
    assert_eq!(
        f.sweep_keys(),
        [
            "link.aqm.kind",
            "link.aqm.target",
            "link.aqm.interval",
            "link.aqm.flows"
        ]
    );
    let pts = points(&f);
    let ls = labels(&pts);
    // codel: target x interval; fq_codel: target x interval x flows; pie: target.
    assert_eq!(pts.len(), 4 + 8 + 2, "{ls:#?}");
    assert_eq!(
        ls[0],
        "link.aqm.kind=codel,link.aqm.target=0.005,link.aqm.interval=0.05"
    );
    assert_eq!(
        ls[4],
        "link.aqm.kind=fq_codel,link.aqm.target=0.005,link.aqm.interval=0.05,link.aqm.flows=64"
    );
    assert_eq!(ls[12], "link.aqm.kind=pie,link.aqm.target=0.005");
    assert_eq!(ls[13], "link.aqm.kind=pie,link.aqm.target=0.01");
    let Some(p) = pts[13].scenario.link.path.aqm.params::<PieParams>() else {
        panic!("{:?}", pts[13].scenario.link.path.aqm)
    };
    assert_eq!((p.target_ns, p.tupdate_ns), (10_000_000, 30_000_000));
    let Some(q) = pts[11].scenario.link.path.aqm.params::<FqCodelParams>() else {
        panic!()
    };
    assert_eq!(
        (q.target_ns, q.interval_ns, q.flows),
        (10_000_000, 100_000_000, 1024)
    );
    for p in &pts {
        // Every swept parameter is one the point's kind takes, with the resolved value.
        let r = p.resolved();
        for (k, v) in &p.params {
            let rk = if k == "link.aqm.kind" { "link.aqm" } else { k };
            assert_eq!(&r[rk], v, "{k} in {}", p.label());
        }
        assert_round_trip(&p.scenario);
    }
    // Points are numbered in order, without gaps.
    assert!(pts.iter().enumerate().all(|(i, p)| p.index == i));
}

#[test]
fn aqm_kind_sweep_rejects_a_parameter_no_kind_takes() {
    assert_error(
        &with_tables("[link.aqm]\nkind = [\"codel\", \"fq_codel\"]\ntupdate = \"5ms\""),
        10,
        "link.aqm.tupdate",
        &[
            "none of the swept kinds (codel, fq_codel) has a parameter tupdate",
            "pie takes it",
        ],
    );
    // Through an override too, which is refused and leaves the file as it was.
    let mut f = load(&with_link("aqm = [\"codel\", \"fq_codel\"]"));
    let e = f.apply_override("link.aqm.alpha=3").unwrap_err();
    let (_, s) = one_line(e);
    assert!(
        s.starts_with("t.toml: --set link.aqm.alpha=3: link.aqm.alpha"),
        "{s}"
    );
    assert!(s.contains("pie takes it"), "{s}");
    assert_eq!(points(&f).len(), 2);
    // A parameter of one of the swept kinds is fine, also through an override.
    f.apply_override("link.aqm.flows=[16, 32]").unwrap();
    assert_eq!(points(&f).len(), 3);
}

#[test]
fn bucket_sweeps() {
    let f = load(&with_link("policer = [\"10mbit\", \"1gbit\"]"));
    assert_eq!(f.sweep_keys(), ["link.policer"]);
    let pts = points(&f);
    assert_eq!(
        labels(&pts),
        ["link.policer=10000000", "link.policer=1000000000"]
    );
    assert_eq!(
        pts[1]
            .scenario
            .link
            .path
            .policer
            .as_ref()
            .unwrap()
            .burst_bytes,
        1_250_000
    );
    let f = load(&with_tables(
        "[link.shaper]\nrate = [\"10mbit\", \"20mbit\"]\nburst = [\"2kb\", \"1mb\"]",
    ));
    assert_eq!(f.sweep_keys(), ["link.shaper.rate", "link.shaper.burst"]);
    let pts = points(&f);
    assert_eq!(
        labels(&pts)[1],
        "link.shaper.rate=10000000,link.shaper.burst=1000000"
    );
    for p in &pts {
        let r = p.resolved();
        for (k, v) in &p.params {
            assert_eq!(&r[k], v, "{k}");
        }
        assert_round_trip(&p.scenario);
    }
    // A burst too small at one point says which point.
    let (e, s) = error_of(&with_tables(
        "[link.policer]\nrate = \"10mbit\"\nburst = [\"64kb\", \"1kb\"]",
    ));
    assert_eq!(e.kind, ErrorKind::Inconsistent);
    assert!(s.contains("matrix point 2 of 2"), "{s}");
    assert!(s.contains("link.policer.burst=1000"), "{s}");
}

#[test]
fn sweeps_of_every_new_key_multiply() {
    let f = load(&with_link(
        "loss = \"1%\"\nloss_unit = [\"segment\", \"gso\"]\njitter = [\"0s\", \"1ms\"]\n\
         reorder = [false, true]\nack_aggregation = [\"0s\", \"2ms\"]\naqm = [\"codel\", \"pie\"]\n\
         policer = [\"10mbit\", \"20mbit\"]\nshaper = [\"30mbit\", \"40mbit\"]",
    ));
    assert_eq!(f.matrix_len(), 128);
    let pts = points(&f);
    assert_eq!(pts.len(), 128);
    let last = &pts[127].scenario.link;
    assert_eq!(last.path.loss_unit, LossUnit::Gso);
    assert_eq!(
        (
            last.path.jitter_ns,
            last.path.reorder,
            last.path.ack_aggregation_ns
        ),
        (1_000_000, true, 2_000_000)
    );
    assert_eq!(last.path.aqm.name(), "pie");
    assert_eq!(last.path.shaper.as_ref().unwrap().rate_bps, 40e6);
}

// ------------------------------------------------------------------------------------------
// --set
// ------------------------------------------------------------------------------------------

#[test]
fn set_aqm_every_form() {
    // A name where there was none.
    let s = one_of(&with_sets(BASE, &["link.aqm=fq_codel"]));
    assert_eq!(s.link.path.aqm, AqmDesc::from(FqCodelParams::default()));
    // A bare name becomes the table's kind, so a parameter can be set beside it.
    let f = with_sets(&with_link("aqm = \"codel\""), &["link.aqm.target=10ms"]);
    let Some(p) = one_of(&f).link.path.aqm.params::<CodelParams>() else {
        panic!()
    };
    assert_eq!((p.target_ns, p.interval_ns), (10_000_000, 100_000_000));
    // In either order.
    let f = with_sets(
        BASE,
        &["link.aqm=pie", "link.aqm.alpha=5", "link.aqm.kind=pie"],
    );
    let Some(p) = one_of(&f).link.path.aqm.params::<PieParams>() else {
        panic!()
    };
    assert_eq!(p.alpha, 5);
    // Into a file's table; a list sweeps; the kind can change.
    let table = with_tables("[link.aqm]\nkind = \"fq_codel\"\nflows = 16");
    let f = with_sets(&table, &["link.aqm.quantum=[300, 1514]"]);
    assert_eq!(f.sweep_keys(), ["link.aqm.quantum"]);
    assert_eq!(
        labels(&points(&f)),
        ["link.aqm.quantum=300", "link.aqm.quantum=1514"]
    );
    let f = with_sets(
        &with_link("aqm = \"codel\""),
        &["link.aqm=[codel, fq_codel]"],
    );
    assert_eq!(labels(&points(&f)), ["link.aqm=codel", "link.aqm=fq_codel"]);
    let f = with_sets(
        &with_link("aqm = [\"codel\", \"pie\"]"),
        &["link.aqm.target=[1ms, 2ms]"],
    );
    assert_eq!(f.sweep_keys(), ["link.aqm.kind", "link.aqm.target"]);
    assert_eq!(points(&f).len(), 4);
    // A whole inline table replaces the file's.
    let f = with_sets(&table, &["link.aqm={kind=\"codel\", ecn=false}"]);
    assert_eq!(
        one_of(&f).link.path.aqm,
        AqmDesc::from(CodelParams {
            ecn: false,
            ..Default::default()
        })
    );
    // And back to drop-tail.
    assert_eq!(
        one_of(&with_sets(&table, &["link.aqm=droptail"]))
            .link
            .path
            .aqm,
        AqmDesc::default()
    );
}

#[test]
fn set_aqm_errors() {
    let cases: &[(&str, &[&str], &[&str])] = &[
        (
            BASE,
            &["link.aqm=red"],
            &["unknown queue discipline \"red\"", "fq_codel"],
        ),
        (
            BASE,
            &["link.aqm.target=10ms"],
            &["link.aqm.kind", "missing required key", "kind = \"codel\""],
        ),
        (BASE, &["link.aqm.tagret=10ms"], &["did you mean target?"]),
        (BASE, &["link.aqm.kind=[]"], &["empty list"]),
        (
            "",
            &["link.aqm=pie", "link.aqm.interval=5ms"],
            &[
                "link.aqm.interval",
                "pie has no parameter interval",
                "codel",
            ],
        ),
        (
            "",
            &["link.aqm=codel", "link.aqm.flows=0"],
            &["between 1 and 65536"],
        ),
        (
            "",
            &["link.aqm=codel", "link.aqm.target=5"],
            &["needs a unit"],
        ),
    ];
    for (file, sets, needles) in cases {
        let file = if file.is_empty() { BASE } else { file };
        let (_, s) = set_error(file, sets);
        assert!(s.starts_with("t.toml"), "{s}");
        for n in *needles {
            assert!(s.contains(n), "{sets:?}: {n:?} missing in: {s}");
        }
    }
    // A rejected override leaves the file as it was.
    let mut f = load(&with_link("aqm = \"codel\""));
    let before = one_of(&f);
    f.apply_override("link.aqm.target=-1ms").unwrap_err();
    f.apply_override("link.aqm.kind=wfq").unwrap_err();
    assert_eq!(one_of(&f), before);
}

#[test]
fn set_bucket_every_form() {
    let s = one_of(&with_sets(BASE, &["link.policer=10mbit"]));
    assert_eq!(
        s.link.path.policer,
        Some(TokenBucket {
            rate_bps: 10e6,
            burst_bytes: 65_536
        })
    );
    // A bare rate becomes the table's rate.
    let f = with_sets(
        &with_link("policer = \"10mbit\""),
        &["link.policer.burst=128kb"],
    );
    assert_eq!(
        one_of(&f).link.path.policer,
        Some(TokenBucket {
            rate_bps: 10e6,
            burst_bytes: 128_000
        })
    );
    // A table made by its keys, rate first.
    let f = with_sets(BASE, &["link.shaper.rate=20mbit", "link.shaper.burst=3000"]);
    assert_eq!(
        one_of(&f).link.path.shaper,
        Some(TokenBucket {
            rate_bps: 20e6,
            burst_bytes: 3000
        })
    );
    let f = with_sets(
        BASE,
        &[
            "link.shaper=20mbit",
            "link.shaper.burst=3000",
            "link.shaper.rate=[20mbit, 40mbit]",
        ],
    );
    assert_eq!(f.sweep_keys(), ["link.shaper.rate"]);
    let pts = points(&f);
    assert_eq!(
        pts[1].scenario.link.path.shaper.as_ref().unwrap().rate_bps,
        40e6
    );
    assert_eq!(
        pts[1]
            .scenario
            .link
            .path
            .shaper
            .as_ref()
            .unwrap()
            .burst_bytes,
        3000
    );
    let f = with_sets(BASE, &["link.policer={rate=\"5mbit\", burst=\"10kb\"}"]);
    assert_eq!(one_of(&f).link.path.policer.unwrap().burst_bytes, 10_000);
    // Errors.
    let (_, s) = set_error(BASE, &["link.policer.burst=128kb"]);
    assert!(
        s.contains("link.policer.rate") && s.contains("missing required key"),
        "{s}"
    );
    let (_, s) = set_error(
        &with_link("policer = \"10mbit\""),
        &["link.policer.burst=1kb"],
    );
    assert!(s.contains("cannot pass one packet of 1500 bytes"), "{s}");
    let (_, s) = set_error(BASE, &["link.shaper=fast"]);
    assert!(
        s.contains("--set link.shaper=fast") && s.contains("not a rate"),
        "{s}"
    );
    let (_, s) = set_error(BASE, &["link.policer.brust=1kb"]);
    assert!(s.contains("did you mean burst?"), "{s}");
}

#[test]
fn set_new_scalar_keys() {
    let f = with_sets(
        BASE,
        &[
            "link.loss_unit=gso",
            "link.jitter=1ms",
            "link.reorder=true",
            "link.ack_aggregation=[1ms, 4ms]",
        ],
    );
    assert_eq!(f.sweep_keys(), ["link.ack_aggregation"]);
    let pts = points(&f);
    let l = &pts[1].scenario.link;
    assert_eq!(
        (
            l.path.loss_unit,
            l.path.jitter_ns,
            l.path.reorder,
            l.path.ack_aggregation_ns
        ),
        (LossUnit::Gso, 1_000_000, true, 4_000_000)
    );
    for (spec, needle) in [
        ("link.loss_unit=packet", "unknown loss unit"),
        ("link.jitter=-1ms", "negative"),
        ("link.jitter=1", "needs a unit"),
        ("link.ack_aggregation=soon", "not a time"),
        ("link.reorder=yes", "true or false"),
        ("link.trace=", "empty value"),
    ] {
        let (_, s) = set_error(BASE, &[spec]);
        assert!(s.starts_with(&format!("t.toml: --set {spec}")), "{s}");
        assert!(s.contains(needle), "{spec}: {s}");
    }
}

#[test]
fn set_rate_schedule() {
    let f = with_sets(
        BASE,
        &["link.rate=[{at=\"0s\",rate=\"100mbit\"},{at=\"5s\",rate=\"20mbit\"}]"],
    );
    assert!(f.sweep_keys().is_empty());
    let s = one_of(&f);
    assert_eq!(
        s.link.path.rate_varies,
        Some(RateDesc::Schedule(vec![(0, 100e6), (5_000_000_000, 20e6)]))
    );
    assert_eq!(s.link.path.rate_bps, 100_000_000.0);
    // A list of schedules sweeps.
    let f = with_sets(
        BASE,
        &["link.rate=[[{at=\"0s\",rate=\"1mbit\"}], [{at=\"0s\",rate=\"2mbit\"},{at=\"1s\",rate=\"3mbit\"}]]"],
    );
    assert_eq!(f.sweep_keys(), ["link.rate"]);
    assert_eq!(points(&f).len(), 2);
    // And back to a fixed rate.
    let f = with_sets(
        &with_link("").replace("rate = \"100mbit\"", SCHEDULE),
        &["link.rate=10mbit"],
    );
    assert_eq!(one_of(&f).link.path.rate_varies, None);
    for (spec, needle) in [
        (
            "link.rate=[{at=\"1s\",rate=\"1mbit\"}]",
            "the first step must be at \"0s\"",
        ),
        ("link.rate=[{at=\"0s\"}]", "needs at and rate"),
        (
            "link.rate=[{at=\"0s\",rate=\"1mbit\",x=1}]",
            "unknown key x",
        ),
        (
            "link.rate=[{at=\"0s\",rate=\"1mbit\"},{at=\"0s\",rate=\"2mbit\"}]",
            "not later than",
        ),
        ("link.rate=[{at=\"0s\",rate=\"1mbit\"", "not valid TOML"),
    ] {
        let (_, s) = set_error(BASE, &[spec]);
        assert!(s.starts_with("t.toml: --set link.rate="), "{s}");
        assert!(s.contains(needle), "{spec}: {s}");
    }
}

// ------------------------------------------------------------------------------------------
// Round trip
// ------------------------------------------------------------------------------------------

#[test]
fn every_new_key_round_trips() {
    let dir = TempDir::new("rt");
    dir.write("traces/x.trace", TRACE);
    let text = r#"name = "everything"
duration = "30s"
[link]
trace = "traces/x.trace"
rtt = "40ms"
buffer = "3bdp"
loss = "0.5%"
loss_unit = "gso"
jitter = "1500us"
reorder = true
ack_aggregation = "4ms"
[link.aqm]
kind = "pie"
target = "20ms"
tupdate = "30ms"
alpha = 3
beta = 25
max_burst = "100ms"
ecn = false
bytemode = true
dq_rate_estimator = true
[link.policer]
rate = "10mbit"
burst = "100kb"
[link.shaper]
rate = "20mbit"
[[flows]]
cc = "bbr"
"#;
    let path = dir.write("every.toml", text);
    let s = one_of(&ScenarioFile::from_file(&path).unwrap_or_else(|e| panic!("{e}")));
    let l = &s.link;
    assert_eq!(l.path.rate_bps, TRACE_BPS as f64);
    assert_eq!(l.path.loss_unit, LossUnit::Gso);
    assert_eq!(
        (l.path.jitter_ns, l.path.reorder, l.path.ack_aggregation_ns),
        (1_500_000, true, 4_000_000)
    );
    assert_eq!(
        l.path.aqm,
        AqmDesc::from(PieParams {
            target_ns: 20_000_000,
            tupdate_ns: 30_000_000,
            alpha: 3,
            beta: 25,
            max_burst_ns: 100_000_000,
            ecn: false,
            bytemode: true,
            dq_rate_estimator: true,
        })
    );
    assert_eq!(l.path.policer.as_ref().unwrap().burst_bytes, 100_000);
    assert_eq!(l.path.shaper.as_ref().unwrap().burst_bytes, 65_536);
    // desc() is the LinkSpec's path with the buffer resolved.
    let d = l.desc();
    assert_eq!(d.buffer_bytes, l.buffer_bytes());
    assert_eq!(
        d,
        cclab_path::LinkDesc {
            buffer_bytes: l.buffer_bytes(),
            ..l.path.clone()
        }
    );
    let written = assert_round_trip(&s);
    assert!(written.contains("trace = "), "{written}");
    assert!(!written.contains("\nrate = \"12mbit\""), "{written}");
    // The written text also loads as a file saved somewhere else (next to results).
    let elsewhere = TempDir::new("rt-elsewhere");
    let saved = elsewhere.write("results/run/scenario.toml", &written);
    assert_eq!(
        one_of(&ScenarioFile::from_file(&saved).unwrap_or_else(|e| panic!("{e}"))),
        s
    );

    // A schedule with FQ-CoDel and a policer given as a bare rate.
    let text = with_link(
        "aqm = { kind = \"fq_codel\", flows = 32, quantum = 3028, drop_batch = 4, target = \"1ms\", interval = \"10ms\", ecn = false }\npolicer = \"1gbit\"\nshaper = { rate = \"50mbit\", burst = 1500 }",
    )
    .replace("rate = \"100mbit\"", SCHEDULE);
    let s = one(&text);
    let written = assert_round_trip(&s);
    assert!(written.contains("at = \"20s\""), "{written}");
    // CoDel with its defaults written out.
    assert_round_trip(&one(&with_link("aqm = \"codel\"")));
    // A huge burst is still a size when written.
    let s = one(&with_tables(
        "[link.policer]\nrate = \"10mbit\"\nburst = \"18446744073709551615b\"",
    ));
    assert_eq!(s.link.path.policer.as_ref().unwrap().burst_bytes, u64::MAX);
    assert_round_trip(&s);
}

#[test]
fn to_toml_string_keeps_a_plain_link_plain() {
    // None of the new keys is written when none is set, so old readers still read it.
    let text = one(BASE).to_toml_string();
    for key in [
        "aqm",
        "policer",
        "shaper",
        "trace",
        "loss_unit",
        "jitter = ",
        "reorder",
        "ack_aggregation",
    ] {
        let link = text
            .split("[link]")
            .nth(1)
            .unwrap()
            .split("\n[")
            .next()
            .unwrap();
        assert!(!link.contains(key), "{key} in:\n{text}");
    }
}
