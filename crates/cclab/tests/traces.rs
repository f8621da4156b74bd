//! The shipped traces are what the project's own generator makes with the commands
//! scenarios/traces/README.md gives, and `cclab trace` says what is wrong in one line.

mod common;
use common::{cclab, tmpdir};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

#[test]
fn shipped_traces_are_made_by_the_documented_commands() {
    let readme = std::fs::read_to_string(format!("{ROOT}/scenarios/traces/README.md")).unwrap();
    let cmds: Vec<&str> = readme
        .split('`')
        .filter(|s| s.starts_with("cclab trace ") && s.contains("--out "))
        .collect();
    assert_eq!(cmds.len(), 3, "one command per shipped trace");
    let dir = tmpdir("traces");
    for cmd in cmds {
        let words: Vec<&str> = cmd.split_whitespace().skip(1).collect();
        let at = words.iter().position(|w| *w == "--out").unwrap();
        let shipped = format!("{ROOT}/{}", words[at + 1]);
        let fresh = dir.join("t.trace");
        let out = cclab()
            .args(&words[..at])
            .arg("--out")
            .arg(&fresh)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{cmd}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let (a, b) = (
            std::fs::read_to_string(&shipped).unwrap(),
            std::fs::read_to_string(&fresh).unwrap(),
        );
        assert!(a == b, "{shipped} differs from what `{cmd}` makes");
        // And it describes itself.
        let info = cclab()
            .args(["trace", "info", "--json"])
            .arg(&shipped)
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&info.stdout).unwrap();
        assert!(v["mean_bps"].as_f64().unwrap() > 1e6, "{v}");
    }
}

#[test]
fn bad_trace_parameters_are_one_line() {
    for (args, words) in [
        (
            vec![
                "step",
                "--high",
                "10mbit",
                "--low",
                "1mbit",
                "--high-for",
                "1s",
                "--low-for",
                "1s",
                "--length",
                "1s",
            ],
            "no time to go back up",
        ),
        (
            vec![
                "outage", "--rate", "10mbit", "--period", "1s", "--outage", "2s", "--length", "10s",
            ],
            "less than its period",
        ),
        (
            vec![
                "step",
                "--high",
                "10",
                "--low",
                "1mbit",
                "--high-for",
                "1s",
                "--low-for",
                "1s",
                "--length",
                "5s",
            ],
            "--high: a rate needs a unit",
        ),
        (
            vec![
                "outage", "--rate", "10mbit", "--period", "1500us", "--outage", "1ms", "--length",
                "3ms",
            ],
            "whole milliseconds",
        ),
    ] {
        let out = cclab().arg("trace").args(&args).output().unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(words), "{err}");
    }
    let out = cclab()
        .args(["trace", "info", "/nonexistent.trace"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read trace file"));
}
