//! docs/architecture.md's recipes name real files and names: every `` `path` (`name`) `` pair
//! in it is a file of the repository that contains that name, and every other path it names
//! exists (a path with `NAME` in it is a template and is skipped).

use std::path::Path;

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The backticked spans of `line`, in order.
fn code_spans(line: &str) -> Vec<&str> {
    line.split('`').skip(1).step_by(2).collect()
}

fn is_path(s: &str) -> bool {
    !s.contains(' ')
        && ["crates/", "docs/", "tools/", "bpf/"]
            .iter()
            .any(|p| s.starts_with(p))
}

#[test]
fn the_recipes_name_files_and_names_that_exist() {
    let doc = std::fs::read_to_string(root().join("docs/architecture.md")).expect("the doc");
    let (mut files, mut names) = (0, 0);
    for line in doc.lines() {
        let spans = code_spans(line);
        for (i, span) in spans.iter().enumerate() {
            // A template (NAME) or a glob (`bpf/*.bpf.c`) names no one file.
            if !is_path(span) || span.contains("NAME") || span.contains('*') {
                continue;
            }
            let file = root().join(span);
            assert!(
                file.exists(),
                "docs/architecture.md names {span}, which does not exist"
            );
            files += 1;
            // `path` (`name`): the name is in the file.
            let after = line.split(&format!("`{span}`")).nth(1).unwrap_or("");
            if after.starts_with(" (`") {
                let name = spans[i + 1];
                let text = std::fs::read_to_string(&file).expect("readable");
                assert!(
                    text.contains(name),
                    "docs/architecture.md says {span} has `{name}`; it does not"
                );
                names += 1;
            }
        }
    }
    assert!(
        files >= 10 && names >= 8,
        "{files} files, {names} names checked"
    );
}
