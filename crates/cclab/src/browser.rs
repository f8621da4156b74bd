//! Headless Chromium, to load a report as a reader's browser does: `cclab bench` times the
//! load of a large report with it, and the report tests drive it for their checks.
//!
//! Every page carries a self-check (see `cclab_report::html`): after the load event it
//! writes, into `<pre id="selfcheck">`, the plots drawn and empty, the interactive charts
//! built, the script errors seen and the milliseconds to the load event. Chromium's
//! `--dump-dom` prints the DOM once the page has loaded, self-check included.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The first of `chromium`, `chromium-browser`, `google-chrome` on `PATH`.
pub fn find() -> Option<PathBuf> {
    crate::tools::on_path(&["chromium", "chromium-browser", "google-chrome"])
}

/// What one browser run printed, and how long the process took.
pub struct Browse {
    pub stdout: String,
    pub stderr: String,
    pub wall: Duration,
}

/// Open `page` in headless Chromium `bin` with a fresh profile (removed afterwards) and the
/// `extra` flags; the browser is killed if it runs longer than `limit`.
pub fn browse(
    bin: &Path,
    page: &Path,
    extra: &[String],
    limit: Duration,
) -> Result<Browse, String> {
    let page = page
        .canonicalize()
        .map_err(|e| format!("cannot open {}: {e}", page.display()))?;
    let prof = crate::tools::TempDir::new("chromium")
        .map_err(|e| format!("cannot make a profile: {e}"))?;
    let (so, se) = (
        prof.path().join("stdout.txt"),
        prof.path().join("stderr.txt"),
    );
    let file = |p: &Path| {
        std::fs::File::create(p).map_err(|e| format!("cannot create {}: {e}", p.display()))
    };
    let start = Instant::now();
    let mut child = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!(
            "--user-data-dir={}",
            prof.path().join("profile").display()
        ))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(file(&so)?)
        .stderr(file(&se)?)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) => {}
            Err(e) => return Err(format!("waiting for {}: {e}", bin.display())),
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "{} did not finish loading {} in {} s",
                bin.display(),
                page.display(),
                limit.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(Browse {
        stdout: std::fs::read_to_string(&so).unwrap_or_default(),
        stderr: std::fs::read_to_string(&se).unwrap_or_default(),
        wall: start.elapsed(),
    })
}

/// The page's self-check, read from a `--dump-dom` of it.
pub fn selfcheck(dom: &str) -> Result<serde_json::Value, String> {
    let at = dom.find("<pre id=\"selfcheck\"").ok_or_else(|| {
        format!(
            "no self-check in the DOM dump (page did not load?): {}",
            &dom[..dom.len().min(500)]
        )
    })?;
    let text = &dom[at..];
    let (Some(open), Some(close)) = (text.find('>'), text.find("</pre>")) else {
        return Err("the self-check element is not closed".into());
    };
    let json = &text[open + 1..close];
    serde_json::from_str(
        &json
            .replace("&amp;", "&")
            .replace("&lt;", "<")
            .replace("&gt;", ">"),
    )
    .map_err(|e| format!("self-check not JSON ({e}): {json}"))
}

/// The self-check after the load event of `page`, and the console messages it logged
/// (Chromium logs every level as `CONSOLE`).
pub fn load(
    bin: &Path,
    page: &Path,
    limit: Duration,
) -> Result<(serde_json::Value, Browse, Vec<String>), String> {
    let b = browse(
        bin,
        page,
        &[
            "--enable-logging=stderr".into(),
            "--v=0".into(),
            "--dump-dom".into(),
        ],
        limit,
    )?;
    let console = b
        .stderr
        .lines()
        .filter(|l| l.contains("CONSOLE"))
        .map(String::from)
        .collect();
    let v = selfcheck(&b.stdout)?;
    Ok((v, b, console))
}
