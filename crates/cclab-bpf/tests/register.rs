//! Registering BPF controllers in the running kernel (root; SKIP with the reason elsewhere).

use cclab_bpf::{available, builtin, Registration, Source};

fn skip() -> Option<String> {
    if let Some(why) = cclab_bpf::not_built() {
        return Some(why.into());
    }
    cclab_bpf::unavailable()
}

/// One test at a time touches the kernel's list of controllers.
static KERNEL: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn builtin_dctcp_registers_and_goes_with_its_registration() {
    if let Some(why) = skip() {
        eprintln!("SKIP: {why}");
        return;
    }
    let _one = KERNEL.lock().unwrap_or_else(|p| p.into_inner());
    if available().iter().any(|n| n == "dctcp") {
        eprintln!("SKIP: this kernel has dctcp already (built in, or registered by another run)");
        return;
    }
    let b = builtin("dctcp").expect("dctcp is built from bpf/dctcp.bpf.c");
    let reg = Registration::register(&Source::Builtin(b)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(reg.name(), "dctcp");
    assert_eq!(reg.source(), "builtin:dctcp");
    assert_eq!(reg.sha256().len(), 64);
    assert!(available().iter().any(|n| n == "dctcp"));
    // A second registration of the same name is refused, and says what to do.
    let err = Registration::register(&Source::Builtin(b))
        .err()
        .expect("a name is registered once");
    assert!(err.to_string().contains("already registered"), "{err}");
    drop(reg);
    assert!(
        !available().iter().any(|n| n == "dctcp"),
        "dctcp stayed registered: {:?}",
        available()
    );
}

#[test]
fn a_program_the_verifier_refuses_is_one_line_with_the_verifiers_words() {
    if let Some(why) = skip() {
        eprintln!("SKIP: {why}");
        return;
    }
    let _one = KERNEL.lock().unwrap_or_else(|p| p.into_inner());
    let path = std::path::Path::new(env!("OUT_DIR")).join("reject_write.bpf.o");
    let before = available();
    let err = Registration::register(&Source::File(path.clone()))
        .err()
        .expect("the verifier refuses a write to snd_una");
    let msg = err.to_string();
    assert!(!msg.contains('\n'), "{msg}");
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    assert!(msg.contains("verifier refused"), "{msg}");
    // The verifier's own reason: no write access to that member.
    assert!(msg.to_lowercase().contains("write"), "{msg}");
    assert_eq!(available(), before);
}

#[test]
fn a_file_that_is_no_bpf_object_is_a_clear_error() {
    if let Some(why) = skip() {
        eprintln!("SKIP: {why}");
        return;
    }
    let dir = std::env::temp_dir().join(format!("cclab-bpf-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("not.bpf.o");
    std::fs::write(&f, b"hello").unwrap();
    let err = Registration::register(&Source::File(f.clone()))
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("not a BPF object"), "{err}");
    let missing = Registration::register(&Source::File(dir.join("missing.o")))
        .err()
        .unwrap()
        .to_string();
    assert!(missing.contains("cannot read BPF object"), "{missing}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_map_held_leftover_of_a_dead_process_is_unregistered_by_clean_stale() {
    if let Some(why) = skip() {
        eprintln!("SKIP: {why}");
        return;
    }
    let _one = KERNEL.lock().unwrap_or_else(|p| p.into_inner());
    if available().iter().any(|n| n == "vegas") {
        eprintln!("SKIP: this kernel has vegas already");
        return;
    }
    let reg = Registration::register_held_by_map(&Source::Builtin(builtin("vegas").unwrap()))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(reg.hold(), cclab_bpf::Hold::Map);
    let record = reg
        .record()
        .expect("a map-held registration leaves a record")
        .to_path_buf();
    // A registration live in this process is not stale.
    assert!(cclab_bpf::clean_stale().unwrap().is_empty());
    assert!(available().iter().any(|n| n == "vegas"));
    // Its process died without unregistering it: the record now names a dead process.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let moved = record.with_file_name(format!("{dead}-{}", reg.map_id()));
    std::fs::rename(&record, &moved).unwrap();
    std::mem::forget(reg);
    let cleaned = cclab_bpf::clean_stale().unwrap();
    assert_eq!(cleaned.len(), 1, "{cleaned:?}");
    assert!(cleaned[0].contains("builtin:vegas"), "{cleaned:?}");
    assert!(
        !available().iter().any(|n| n == "vegas"),
        "{:?}",
        available()
    );
    assert!(!moved.exists());
}
