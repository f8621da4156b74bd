//! Garbage in, no panic out: token soup, mutations of valid files and random bytes give a
//! scenario or a one-line error.

use cclab_scenario::*;

use crate::common::*;
use cclab_scenario::units::{parse_loss_str, parse_rate, parse_size, parse_time};

use crate::{MATRIX, REALISTIC};

/// xorshift64*: a tiny deterministic PRNG.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Runs everything on `text`; returns whether it parsed.
fn exercise(text: &str, overrides: &[&str]) -> bool {
    match ScenarioFile::from_str(text, "fuzz.toml") {
        Err(e) => {
            let s = e.to_string();
            // One line per error, each naming the file.
            assert!(s.lines().all(|l| l.starts_with("fuzz.toml")), "{s}");
            assert_eq!(s.lines().count(), crate::common::error_lines(&e), "{s}");
            false
        }
        Ok(mut f) => {
            for o in overrides {
                if let Err(e) = f.apply_override(o) {
                    assert_eq!(
                        e.to_string().lines().count(),
                        crate::common::error_lines(&e)
                    );
                }
            }
            if f.matrix_len() <= 1000 {
                match f.expand() {
                    Ok(pts) => {
                        for p in pts {
                            let _ = p.resolved();
                            let text = p.scenario.to_toml_string();
                            // A concrete scenario always re-parses to itself.
                            let again = ScenarioFile::from_str(&text, "again.toml")
                                .unwrap_or_else(|e| panic!("{e}\n{text}"));
                            assert_eq!(again.expand().unwrap()[0].scenario, p.scenario);
                        }
                    }
                    Err(e) => assert!(!e.to_string().contains('\n')),
                }
            }
            true
        }
    }
}

#[test]
fn garbage_never_panics() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let tokens = [
        "name",
        "duration",
        "seed",
        "link",
        "flows",
        "rate",
        "rtt",
        "buffer",
        "loss",
        "ack_loss",
        "mss",
        "cc",
        "count",
        "start",
        "size",
        "rtt_extra",
        "init_cwnd",
        "reference",
        " = ",
        "\n",
        "[",
        "]",
        "[[",
        "]]",
        "{",
        "}",
        ",",
        ".",
        "\"",
        "'",
        "#",
        "\"1%\"",
        "\"100mbit\"",
        "\"10s\"",
        "\"bbr\"",
        "\"1bdp\"",
        "\"25mb\"",
        "0",
        "1",
        "-1",
        "1e400",
        "nan",
        "inf",
        "0.5",
        "9223372036854775807",
        "99999999999999999999",
        "true",
        "1979-05-27",
        "\"\"",
        "[]",
        "µ",
        "\u{0}",
        "\\",
        "\"\"\"",
        "=",
        " ",
        "0x10",
        "1_000",
    ];
    let overrides = [
        "link.loss=[0,1%]",
        "flows.cc=bbr",
        "duration=1s",
        "flows.0.size=1mb",
        "seed=[1,2,3]",
        "link.buffer=0.5bdp",
        "x=",
        "=",
        "flows.9.cc=bbr",
    ];
    // Token soup.
    for _ in 0..300 {
        let n = rng.below(40);
        let text: String = (0..n).map(|_| tokens[rng.below(tokens.len())]).collect();
        exercise(&text, &overrides[..rng.below(overrides.len())]);
    }
    // Mutations of valid files: delete, insert or replace a few characters.
    let seeds = [BASE, MATRIX, REALISTIC];
    let mut parsed = 0;
    for i in 0..600 {
        let mut chars: Vec<char> = seeds[i % seeds.len()].chars().collect();
        for _ in 0..if i % 2 == 0 { 1 } else { 1 + rng.below(4) } {
            if chars.is_empty() {
                break;
            }
            let at = rng.below(chars.len());
            let pool: Vec<char> = "abcdefghijklmnopqrstuvwxyz0123456789 =[]{}\"'#.,\n-%µ/_\\"
                .chars()
                .collect();
            match rng.below(3) {
                0 => {
                    chars.remove(at);
                }
                1 => chars.insert(at, pool[rng.below(pool.len())]),
                _ => chars[at] = pool[rng.below(pool.len())],
            }
        }
        let text: String = chars.into_iter().collect();
        parsed += exercise(&text, &overrides[..rng.below(overrides.len())]) as usize;
    }
    // Enough mutants stay valid that expansion and the round trip are exercised too.
    assert!(parsed > 60, "only {parsed} of 600 mutants parsed");
    eprintln!("{parsed} of 600 mutants parsed");
    // Random bytes read as (lossy) UTF-8, and unit parsers on random strings.
    for _ in 0..200 {
        let bytes: Vec<u8> = (0..rng.below(64)).map(|_| rng.next() as u8).collect();
        let text = String::from_utf8_lossy(&bytes);
        exercise(&text, &[]);
        let _ = (
            parse_rate(&text),
            parse_time(&text),
            parse_size(&text),
            parse_loss_str(&text),
            Buffer::parse(&text),
        );
    }
}
