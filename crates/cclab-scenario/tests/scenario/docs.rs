//! The format reference stays true: docs/scenarios.md's examples parse, and its tables of
//! controllers, of `[link.aqm]` settings and of the token buckets' settings follow the
//! registries.

use cclab_scenario::*;
use serde_json::json;

use crate::common::*;
use crate::edit;

#[test]
fn docs_examples_parse() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/scenarios.md");
    let doc = std::fs::read_to_string(path).expect("docs/scenarios.md");
    let blocks: Vec<&str> = doc
        .split("```toml\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap())
        .collect();
    // Whole scenarios (with a name) are checked below; the [reference] fragment must load
    // when appended to a minimal scenario.
    let (blocks, fragments): (Vec<&str>, Vec<&str>) =
        blocks.into_iter().partition(|b| b.contains("name ="));
    assert_eq!(blocks.len(), 3, "toml examples in the doc");
    // The path-element example: FQ-CoDel and a policer, swept over two controllers.
    let (paths, blocks): (Vec<&str>, Vec<&str>) =
        blocks.into_iter().partition(|b| b.contains("aqm ="));
    let pts = load(paths[0]).expand().unwrap();
    assert_eq!(pts.len(), 2);
    let l = &pts[0].scenario.link;
    assert_eq!(
        l.path.aqm,
        cclab_path::AqmDesc::from(cclab_path::FqCodelParams::default())
    );
    assert_eq!(
        l.path.policer,
        Some(cclab_path::TokenBucket {
            rate_bps: 10e6,
            burst_bytes: 65536
        })
    );
    for f in fragments {
        let text = format!("name = \"x\"\nduration = \"1s\"\n[link]\nrate = \"1mbit\"\nrtt = \"1ms\"\n[[flows]]\ncc = \"bbr\"\n{f}");
        let pts = load(&text).expand().unwrap();
        assert!(pts[0].scenario.reference.as_ref().unwrap()["results"][0]["goodput"].is_string());
    }
    let lan = load(blocks[0]).expand().unwrap();
    assert_eq!(lan.len(), 1);
    assert_eq!(lan[0].scenario.link.path.loss, 0.01);
    assert_eq!(
        lan[0].scenario.reference.as_ref().unwrap()["expected_goodput_mbit"],
        json!(11.7)
    );
    let sweep = load(blocks[1]);
    assert_eq!(
        sweep.sweep_keys(),
        ["seed", "link.rtt", "link.loss", "flows.cc"]
    );
    let pts = sweep.expand().unwrap();
    assert_eq!(pts.len(), 24);
    assert_eq!(
        pts[2].label(),
        "seed=1,link.rtt=0.01,link.loss=0.001,flows.cc=cubic"
    );
    assert_eq!(
        pts[23].label(),
        "seed=2,link.rtt=0.1,link.loss=0.01,flows.cc=bbr"
    );
    // The first documented error message is what the code prints.
    let e = ScenarioFile::from_str(&edit(4, "rate = \"100mbps/s\""), "seeds/x.toml").unwrap_err();
    assert!(doc.contains(&e.to_string()), "{e}");
    let e = ScenarioFile::from_str(&with_link("queue = \"1bdp\""), "seeds/x.toml").unwrap_err();
    assert!(doc.contains(&e.to_string()), "{e}");
    let e = load(BASE).apply_override("link.loss=2").unwrap_err();
    assert!(
        doc.contains(&e.to_string().replace("t.toml", "seeds/x.toml")),
        "{e}"
    );
}

/// docs/scenarios.md's table of controllers follows the registry: every controller, alias and
/// parameter (with its default) appears there.
#[test]
fn docs_list_every_registered_controller_and_parameter() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/scenarios.md");
    let doc = std::fs::read_to_string(path).expect("docs/scenarios.md");
    let table = doc
        .split("### Controllers")
        .nth(1)
        .and_then(|s| s.split("\n### ").next())
        .expect("a Controllers section");
    for c in cclab_core::cc::CONTROLLERS {
        let row = table
            .lines()
            .find(|l| l.starts_with(&format!("| `{}`", c.name)))
            .unwrap_or_else(|| panic!("docs/scenarios.md lists no {}", c.name));
        for a in c.aliases {
            assert!(
                row.contains(&format!("`{a}`")),
                "alias {a} of {} missing: {row}",
                c.name
            );
        }
        for p in c.params {
            assert!(
                row.contains(&format!("`{}` ({}", p.name, p.default)),
                "parameter {} of {} (default {}) missing: {row}",
                p.name,
                c.name,
                p.default
            );
        }
        if c.params.is_empty() {
            assert!(row.trim_end().ends_with("| none |"), "{row}");
        }
    }
}

/// docs/scenarios.md's table of `[link.aqm]` parameters follows the declarations
/// (`cclab_path::AQMS`): a column per discipline, a row per setting, each discipline's
/// default in its column and nothing where it does not take the setting.
#[test]
fn docs_list_every_declared_aqm_setting_with_its_default() {
    let table = doc_table("The `[link.aqm]` parameters");
    let aqms: Vec<&cclab_path::Aqm> = cclab_path::AQMS
        .iter()
        .filter(|a| !a.settings.is_empty())
        .collect();
    let header: Vec<&str> = aqms.iter().map(|a| a.name).collect();
    assert_eq!(
        table[0][2..2 + aqms.len()],
        header[..],
        "columns: {:?}",
        table[0]
    );
    let mut rows = 0;
    for row in &table[2..] {
        let key = row[1].trim_matches('`');
        let mut declared = false;
        for (i, a) in aqms.iter().enumerate() {
            let want = a
                .settings
                .iter()
                .find(|s| s.name == key)
                .map(shown_default)
                .unwrap_or_default();
            declared |= !want.is_empty();
            assert_eq!(
                row[2 + i],
                want,
                "docs/scenarios.md: {key} under {}",
                a.name
            );
        }
        assert!(
            declared,
            "docs/scenarios.md lists {key}, which no discipline declares"
        );
        rows += 1;
    }
    let keys: std::collections::BTreeSet<&str> = aqms
        .iter()
        .flat_map(|a| a.settings.iter().map(|s| s.name))
        .collect();
    assert_eq!(rows, keys.len(), "a row per declared setting: {keys:?}");
}

/// A setting's default as the docs' tables show it: a time in ms, a number or flag as it
/// is, `required`, or how a derived one is worked out.
fn shown_default(s: &cclab_path::Setting) -> String {
    use cclab_path::{SettingDefault, SettingValue};
    match s.default {
        SettingDefault::Value(SettingValue::Time(ns)) => format!("{} ms", ns / 1_000_000),
        SettingDefault::Value(SettingValue::Int(i)) => i.to_string(),
        SettingDefault::Value(SettingValue::Bool(b)) => b.to_string(),
        SettingDefault::Required => "required".into(),
        SettingDefault::Derived(d) => d.doc.into(),
    }
}

/// The cells of each row of the first table in docs/scenarios.md after `heading`.
fn doc_table(heading: &str) -> Vec<Vec<String>> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/scenarios.md");
    let doc = std::fs::read_to_string(path).expect("docs/scenarios.md");
    doc.split(heading)
        .nth(1)
        .unwrap_or_else(|| panic!("docs/scenarios.md has no {heading}"))
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.split('|').map(|c| c.trim().to_string()).collect())
        .collect()
}

/// docs/scenarios.md's table of token-bucket settings follows the declarations
/// (`cclab_path::TokenBucket::SETTINGS`): a row per setting in order, with its default
/// (derived ones in words); and `[link]`'s row of each bucket (`cclab_path::BUCKETS`) says
/// what it is as the bucket declares.
#[test]
fn docs_list_every_declared_bucket_setting_with_its_default() {
    let table = doc_table("The `[link.policer]` and `[link.shaper]` settings");
    let rows: Vec<(&str, &str)> = table[2..]
        .iter()
        .map(|r| (r[1].trim_matches('`'), r[2].as_str()))
        .collect();
    let declared: Vec<(&str, String)> = cclab_path::TokenBucket::SETTINGS
        .iter()
        .map(|s| (s.name, shown_default(s)))
        .collect();
    let declared: Vec<(&str, &str)> = declared.iter().map(|(k, d)| (*k, d.as_str())).collect();
    assert_eq!(rows, declared);
    let link = doc_table("### `[link]`");
    for b in cclab_path::BUCKETS {
        assert_eq!(b.settings, cclab_path::TokenBucket::SETTINGS, "{}", b.name);
        let row = link
            .iter()
            .find(|r| r[1] == format!("`{}`", b.name))
            .unwrap_or_else(|| panic!("docs/scenarios.md: no [link] row for {}", b.name));
        assert!(row[4].starts_with(b.help), "{}: {}", b.name, row[4]);
    }
}

/// Every other name `link.aqm` accepts is documented and loads as its discipline.
#[test]
fn docs_name_every_aqm_alias() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/scenarios.md");
    let doc = std::fs::read_to_string(path).expect("docs/scenarios.md");
    for (alias, name) in AQM_ALIASES {
        assert!(
            doc.contains(&format!("`\"{alias}\"`")),
            "{alias} not in docs/scenarios.md"
        );
        for spelled in [
            alias.to_string(),
            alias.to_uppercase(),
            alias.replace('_', "-"),
        ] {
            let pts = load(&with_link(&format!("aqm = \"{spelled}\"")))
                .expand()
                .unwrap();
            assert_eq!(pts[0].scenario.link.path.aqm.name(), *name, "{spelled}");
        }
    }
    assert!(doc.contains("`\"fq-codel\"`"));
}
