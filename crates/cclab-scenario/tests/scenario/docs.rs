//! The format reference stays true: docs/scenarios.md's examples parse, and its tables of
//! controllers and of `[link.aqm]` settings follow the registries.

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
    use cclab_path::SettingValue;
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/scenarios.md");
    let doc = std::fs::read_to_string(path).expect("docs/scenarios.md");
    let table: Vec<Vec<String>> = doc
        .split("The `[link.aqm]` parameters")
        .nth(1)
        .expect("the [link.aqm] table")
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.split('|').map(|c| c.trim().to_string()).collect())
        .collect();
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
    let shown = |v: SettingValue| match v {
        SettingValue::Time(ns) => format!("{} ms", ns / 1_000_000),
        SettingValue::Int(i) => i.to_string(),
        SettingValue::Bool(b) => b.to_string(),
    };
    let mut rows = 0;
    for row in &table[2..] {
        let key = row[1].trim_matches('`');
        let mut declared = false;
        for (i, a) in aqms.iter().enumerate() {
            let want = a
                .settings
                .iter()
                .find(|s| s.name == key)
                .map(|s| shown(s.default))
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
