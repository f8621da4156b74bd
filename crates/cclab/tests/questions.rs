//! docs/questions.md kept honest: every `cclab ...` line of its `sh` blocks runs (in a
//! scratch folder, with short runs), and each "Look for: `label`" line names text its
//! command's output contains. A documented flag, file or output label that disappears fails
//! here. The page's `toml` block is the file its last question runs (`mistakes.toml`), which
//! must fail with every mistake on its own line.

mod common;

use std::path::{Path, PathBuf};

/// The page's commands in order, each with the labels its output must contain.
struct Step {
    line: String,
    look_for: Vec<String>,
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Commands (lines starting `cclab ` in ```sh blocks), their "Look for" labels, and the
/// page's one ```toml block.
fn parse(page: &str) -> (Vec<Step>, String) {
    let mut steps: Vec<Step> = Vec::new();
    let mut toml = String::new();
    let mut block: Option<&str> = None;
    for line in page.lines() {
        if let Some(lang) = line.strip_prefix("```") {
            block = if block.is_some() { None } else { Some(lang) };
            continue;
        }
        match block {
            Some("sh") if line.starts_with("cclab ") => steps.push(Step {
                line: line.to_string(),
                look_for: Vec::new(),
            }),
            Some("toml") => {
                toml.push_str(line);
                toml.push('\n');
            }
            None => {
                if let Some(rest) = line.strip_prefix("Look for: `") {
                    let label = rest.trim_end().trim_end_matches('`').to_string();
                    let step = steps
                        .last_mut()
                        .expect("a Look for line before any command");
                    step.look_for.push(label);
                }
            }
            _ => {}
        }
    }
    (steps, toml)
}

/// Shell words: whitespace-separated, single quotes kept together (the page uses no other
/// quoting); a word with `*` is expanded against the files of its folder, as a shell would.
fn words(line: &str, cwd: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in line.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            c => {
                cur.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(cur);
    }
    out.into_iter().flat_map(|w| glob(&w, cwd)).collect()
}

fn glob(word: &str, cwd: &Path) -> Vec<String> {
    let Some((dir, pattern)) = word.rsplit_once('/').filter(|_| word.contains('*')) else {
        return vec![word.to_string()];
    };
    let (head, tail) = pattern.split_once('*').unwrap();
    let mut names: Vec<String> = std::fs::read_dir(cwd.join(dir))
        .unwrap_or_else(|e| panic!("{word}: {e}"))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(head) && n.ends_with(tail))
        .map(|n| format!("{dir}/{n}"))
        .collect();
    names.sort();
    assert!(!names.is_empty(), "{word} matches no file");
    names
}

#[test]
fn every_command_of_the_questions_page_runs_and_shows_what_it_says() {
    let root = repo_root();
    let page = std::fs::read_to_string(root.join("docs/questions.md")).unwrap();
    let (steps, toml) = parse(&page);
    let questions = page.lines().filter(|l| l.starts_with("## ")).count();
    assert_eq!(questions, 8, "eight questions");
    assert!(
        steps.iter().filter(|s| !s.look_for.is_empty()).count() >= questions,
        "a Look for label per question"
    );
    let cwd = common::tmpdir("questions");
    #[cfg(unix)]
    std::os::unix::fs::symlink(root.join("scenarios"), cwd.join("scenarios")).unwrap();
    std::fs::write(cwd.join("mistakes.toml"), &toml).unwrap();

    for step in &steps {
        let args = words(&step.line, &cwd);
        assert_eq!(args[0], "cclab");
        let mut cmd = common::cclab();
        cmd.current_dir(&cwd).args(&args[1..]);
        if args[1] == "run" || args[1] == "advise" {
            cmd.arg("--quiet");
        }
        // Short runs, long enough for the page's --from 10s to keep bins after it; the
        // seeds (10 Gbit/s runs among them) shorter still.
        if args[1] == "run" {
            let d = if step.line.contains("seeds/") {
                "2s"
            } else {
                "11s"
            };
            cmd.args(["--set", &format!("duration={d}")]);
        }
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let text = format!("{stdout}{stderr}");
        if args.iter().any(|a| a == "mistakes.toml") {
            assert_eq!(out.status.code(), Some(1), "{}: {text}", step.line);
            let errors = stderr
                .lines()
                .filter(|l| l.contains("mistakes.toml:"))
                .count();
            assert!(
                errors >= 5,
                "{}: all five mistakes at once: {stderr}",
                step.line
            );
        } else {
            assert!(out.status.success(), "{} failed: {stderr}", step.line);
        }
        for label in &step.look_for {
            assert!(
                text.contains(label.as_str()),
                "{}: docs/questions.md says to look for `{label}`, not in:\n{text}",
                step.line
            );
        }
    }
    let _ = std::fs::remove_dir_all(&cwd);
}
