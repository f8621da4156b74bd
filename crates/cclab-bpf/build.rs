//! Builds every `bpf/*.bpf.c` of the repository into a BPF object with clang and embeds the
//! objects in the crate (see `src/lib.rs`). Without clang or libbpf's headers the crate
//! builds with no objects and says why at run time; with them, a program that does not
//! compile fails the build.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let src_dir = manifest.join("../../bpf");
    println!("cargo:rerun-if-changed={}", src_dir.display());

    let mut sources: Vec<PathBuf> = std::fs::read_dir(&src_dir)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.to_string_lossy().ends_with(".bpf.c"))
                .collect()
        })
        .unwrap_or_default();
    sources.sort();

    let mut entries = Vec::new();
    let not_built = match toolchain() {
        Err(why) => {
            println!("cargo:warning=BPF controllers not built: {why}");
            Some(why)
        }
        Ok(multiarch) => {
            for src in &sources {
                let file = src.file_name().unwrap().to_string_lossy().to_string();
                let name = file.trim_end_matches(".bpf.c").to_string();
                let obj = out.join(format!("{name}.bpf.o"));
                compile(src, &obj, &src_dir, &multiarch);
                let text = std::fs::read_to_string(src).unwrap();
                entries.push((name, summary(&text), obj));
            }
            // Objects the tests load (a program the verifier refuses, ...), as files.
            let tests = src_dir.join("tests");
            for e in std::fs::read_dir(&tests).into_iter().flatten().flatten() {
                let p = e.path();
                let file = p.file_name().unwrap().to_string_lossy().to_string();
                if let Some(stem) = file.strip_suffix(".bpf.c") {
                    compile(&p, &out.join(format!("{stem}.bpf.o")), &src_dir, &multiarch);
                }
            }
            None
        }
    };

    let mut code = String::from(
        "/// The controllers built from `bpf/`: (name, summary, source file, object).\n",
    );
    code.push_str("pub(crate) static OBJECTS: &[(&str, &str, &str, &[u8])] = &[\n");
    for (name, summary, obj) in &entries {
        code.push_str(&format!(
            "    ({name:?}, {summary:?}, \"bpf/{name}.bpf.c\", include_bytes!({:?})),\n",
            obj.display().to_string()
        ));
    }
    code.push_str("];\n");
    code.push_str(&format!(
        "/// Why nothing was built, when nothing was.\npub(crate) static NOT_BUILT: Option<&str> = {not_built:?};\n"
    ));
    std::fs::write(out.join("objects.rs"), code).unwrap();
}

/// clang that targets BPF, libbpf's headers, and the directory of the C library's
/// architecture headers (`asm/types.h`), or why not.
fn toolchain() -> Result<String, String> {
    let fix = "install clang and libbpf-dev (apt-get install clang libbpf-dev) and rebuild";
    let out = Command::new("clang")
        .arg("-print-multiarch")
        .output()
        .map_err(|_| format!("no clang was found when cclab was built; {fix}"))?;
    if !Path::new("/usr/include/bpf/bpf_helpers.h").exists() {
        return Err(format!(
            "libbpf's headers (bpf/bpf_helpers.h) were missing when cclab was built; {fix}"
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn compile(src: &Path, obj: &Path, dir: &Path, multiarch: &str) {
    let mut cmd = Command::new("clang");
    cmd.args(["-O2", "-g", "-target", "bpf", "-Wall", "-Werror"])
        .arg("-I")
        .arg(dir.join("include"));
    if !multiarch.is_empty() {
        cmd.arg("-idirafter")
            .arg(format!("/usr/include/{multiarch}"));
    }
    let res = cmd.arg("-c").arg(src).arg("-o").arg(obj).output().unwrap();
    if !res.status.success() {
        panic!(
            "clang could not build {}:\n{}",
            src.display(),
            String::from_utf8_lossy(&res.stderr)
        );
    }
}

/// The first line of the source's leading comment.
fn summary(text: &str) -> String {
    text.lines()
        .skip_while(|l| !l.trim_start().starts_with("/*"))
        .skip(1)
        .map(|l| l.trim_start().trim_start_matches('*').trim())
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .trim_end_matches('.')
        .to_string()
}
