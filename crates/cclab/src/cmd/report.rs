//! `cclab report`: report.html from one or more results directories.

use cclab::reports;
use cclab::runner::Error;
use cclab_report::html;
use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub(crate) struct ReportArgs {
    /// Results directories (written by `cclab run --out DIR`) or results.json files; several are merged into one page
    #[arg(required = true, value_name = "DIR")]
    dirs: Vec<PathBuf>,
    /// Write the page here instead of DIR/report.html (the first DIR when several are given)
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Page title
    #[arg(long, value_name = "TEXT")]
    title: Option<String>,
    /// Draw every document in the same charts, whatever its scenario's name (documents of the
    /// same scenario always share charts)
    #[arg(long)]
    overlay: bool,
    /// A document's name in overlays (repeatable: one per document, in order; default: its
    /// backend and directory)
    #[arg(long, value_name = "TEXT")]
    label: Vec<String>,
    /// Also write every chart as a standalone SVG file, NN-NAME.svg in page order (see
    /// --charts-dir)
    #[arg(long)]
    svg: bool,
    /// Also write every chart as a PNG file, NN-NAME.png, rendered by resvg with the system's
    /// fonts (see --charts-dir, --png-scale)
    #[arg(long)]
    png: bool,
    /// Where --svg/--png write the charts (default: charts/ next to the page)
    #[arg(long, value_name = "DIR")]
    charts_dir: Option<PathBuf>,
    /// Pixels per SVG unit of the --png files (2 = sharp on HiDPI screens and in tickets)
    #[arg(long, default_value_t = cclab_report::chartfile::DEFAULT_SCALE, value_name = "X")]
    png_scale: f32,
    /// Print the results as GitHub-flavoured Markdown tables on stdout (the table `cclab run
    /// --markdown` prints, one per results document) instead of writing the page: for
    /// tickets, without re-running
    #[arg(long, conflicts_with_all = ["out", "svg", "png", "charts_dir", "overlay", "label"])]
    markdown: bool,
}

/// Runs `cclab report`.
pub(crate) fn run(a: ReportArgs) -> Result<(), Error> {
    if a.markdown {
        return markdown(&a.dirs, a.title.as_deref());
    }
    let out = match &a.out {
        Some(f) => f.clone(),
        None => {
            let first = &a.dirs[0];
            if first.is_file() {
                first.with_file_name("report.html")
            } else {
                first.join("report.html")
            }
        }
    };
    let opts = html::Options {
        title: a.title.clone(),
        overlay: a.overlay,
        labels: a.label.clone(),
        ..Default::default()
    };
    if a.charts_dir.is_some() && !a.svg && !a.png {
        return Err(Error::new(
            "--charts-dir is where --svg/--png write the charts: add --svg and/or --png",
        ));
    }
    if a.png {
        cclab_report::chartfile::check_scale(a.png_scale).map_err(Error::new)?;
    }
    let page = reports::write_report_page(&a.dirs, &out, &opts)?;
    println!(
        "report written to {} ({:.1} kB)",
        out.display(),
        page.len() as f64 / 1e3
    );
    if a.svg || a.png {
        let dir = a.charts_dir.clone().unwrap_or_else(|| {
            out.parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."))
                .join("charts")
        });
        let scale = a.png.then_some(a.png_scale);
        // Collapsed sections of the page carry data only: the files come from every chart drawn.
        let full = if page.contains("plot ts lazy") {
            reports::full_page(&a.dirs, &opts)?
        } else {
            page
        };
        let w = reports::write_charts(&full, &dir, a.svg, scale)?;
        let n = w.charts;
        if n == 0 {
            println!(
                "the report has no charts: nothing written to {}",
                dir.display()
            );
            return Ok(());
        }
        let mut kinds = Vec::new();
        if a.svg {
            kinds.push("SVG".to_string());
        }
        if a.png {
            kinds.push(format!(
                "PNG ({}x, font {})",
                a.png_scale,
                w.family.as_deref().unwrap_or("-")
            ));
        }
        println!(
            "{n} chart{} written to {} as {} ({:.1} kB)",
            if n == 1 { "" } else { "s" },
            dir.display(),
            kinds.join(" + "),
            w.bytes as f64 / 1e3
        );
    }
    Ok(())
}

/// `cclab report DIR --markdown`: each results document's table as Markdown on stdout,
/// headed as `cclab run --markdown` heads it (`--title` replaces the scenario's name).
fn markdown(dirs: &[PathBuf], title: Option<&str>) -> Result<(), Error> {
    let sources = reports::load_all(dirs)?;
    let mut out = String::new();
    for s in &sources {
        let name = title.unwrap_or(&s.doc.scenario);
        let path = s
            .file
            .clone()
            .or_else(|| s.origin.as_ref().map(|o| o.display().to_string()))
            .unwrap_or_else(|| "results".into());
        let head = cclab::output::title(name, &path, s.description.as_deref(), &s.doc);
        out.push_str(&cclab_report::table::render_markdown(&s.doc, &head));
        out.push('\n');
    }
    print!("{out}");
    Ok(())
}
