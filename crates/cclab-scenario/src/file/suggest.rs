//! Unknown-key suggestions: the closest known key, a synonym, or a key of another table.

use super::schema::{
    AQM_KEYS, BUCKET_KEYS, CC_PARAMS, FLOW_KEYS, HOST_KEYS, LINK_KEYS, SYNONYMS, TOP_SCALARS,
    TOP_TABLES,
};

pub(super) fn levenshtein(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// All keys with their qualified names and the section they belong to.
fn all_keys() -> Vec<(&'static str, String)> {
    let mut v: Vec<(&str, String)> = Vec::new();
    for (k, _) in TOP_SCALARS {
        v.push((k, k.to_string()));
    }
    for k in TOP_TABLES {
        v.push((k, k.to_string()));
    }
    for (k, _) in LINK_KEYS.iter() {
        v.push((k, format!("link.{k}")));
    }
    for (k, _) in HOST_KEYS {
        v.push((k, format!("hosts.{k}")));
    }
    for (k, _) in FLOW_KEYS {
        v.push((k, format!("flows.{k}")));
    }
    v.push((CC_PARAMS, format!("flows.{CC_PARAMS}")));
    v
}

/// "did you mean ...?" text for an unknown `key` found in `section_prefix` ("", "link.", "flows.").
pub(super) fn suggestion(key: &str, section_prefix: &str) -> String {
    match suggest(key, section_prefix) {
        (Some(hint), allowed) => {
            format!("unknown key; did you mean {hint}? (allowed here: {allowed})")
        }
        (None, allowed) => format!("unknown key (allowed here: {allowed})"),
    }
}

/// The closest known key (in words, e.g. `rate under [link]`) and the keys allowed here.
pub(super) fn suggest(key: &str, section_prefix: &str) -> (Option<String>, String) {
    let lower = key.to_ascii_lowercase();
    let here: Vec<&str> = match section_prefix {
        "" => TOP_SCALARS
            .iter()
            .map(|(k, _)| *k)
            .chain(TOP_TABLES.iter().copied())
            .collect(),
        "link." => LINK_KEYS.iter().map(|(k, _)| *k).collect(),
        "hosts." => HOST_KEYS.iter().map(|(k, _)| *k).collect(),
        "link.aqm." => AQM_KEYS.iter().map(|(k, _)| *k).collect(),
        "link.bucket." => BUCKET_KEYS.iter().map(|(k, _)| *k).collect(),
        _ => FLOW_KEYS
            .iter()
            .map(|(k, _)| *k)
            .chain([CC_PARAMS])
            .collect(),
    };
    let limit = match lower.chars().count() {
        0..=3 => 1,
        4..=6 => 2,
        _ => 3,
    };
    let allowed = here.join(", ");
    let place = |q: &str| -> String {
        if !section_prefix.is_empty() && q.starts_with(section_prefix) {
            q[section_prefix.len()..].to_string()
        } else if let Some(k) = q.strip_prefix("link.") {
            format!("{k} under [link]")
        } else if let Some(k) = q.strip_prefix("hosts.") {
            format!("{k} under [hosts]")
        } else if let Some(k) = q.strip_prefix("flows.") {
            format!("{k} under [[flows]]")
        } else if q == "flows" {
            "[[flows]]".to_string()
        } else if q == "link" || q == "hosts" || q == "reference" {
            format!("[{q}]")
        } else {
            format!("{q} at the top level")
        }
    };
    let best_here = here.iter().map(|k| (levenshtein(&lower, k), *k)).min();
    let best_elsewhere = all_keys()
        .into_iter()
        .filter(|(_, q)| {
            if section_prefix.is_empty() {
                q.contains('.')
            } else {
                !q.starts_with(section_prefix)
            }
        })
        .map(|(k, q)| (levenshtein(&lower, k), q))
        .min();
    // 1. The exact name of a key of another table.
    if let (Some((0, q)), false) = (&best_elsewhere, here.contains(&lower.as_str())) {
        return (Some(place(q)), allowed);
    }
    // 2. A close key in the same table.
    if let Some((d, k)) = best_here {
        if d <= limit {
            return (Some(k.to_string()), allowed);
        }
    }
    // 3. A synonym, or a close key of another table.
    for (syn, q) in SYNONYMS {
        if *syn == lower {
            return (Some(place(q)), allowed);
        }
    }
    if let Some((d, q)) = best_elsewhere {
        if d <= limit {
            return (Some(place(&q)), allowed);
        }
    }
    (None, allowed)
}
