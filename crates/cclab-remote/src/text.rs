//! Text from a peer, made safe to show.
//!
//! A hostile server or client can put any characters in a string cclab prints: an HTTP
//! status line, reason phrase or `Location`, an error message, a kernel release, a
//! controller's name. Raw, an ESC or BEL would reach the user's terminal (escape sequences
//! can retitle windows, move the cursor, rewrite what is on screen) and a newline would forge
//! a log line. [`escape`] keeps printable text as it is and writes every control character
//! (C0, DEL, C1) as `\xNN`, the invisible characters that reorder or hide text
//! (bidirectional overrides and isolates, zero-width marks, line and paragraph separators)
//! as `\u{NNNN}`, and a backslash as `\\`, so what is shown is unambiguous. `get`, `perf` and
//! `serve` pass every peer-supplied string they print or log through it.

use std::borrow::Cow;

/// `s` with control and invisible formatting characters escaped (see the module docs).
pub fn escape(s: &str) -> Cow<'_, str> {
    if !s.chars().any(needs_escape) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if c == '\\' {
            out.push_str("\\\\");
        } else if c.is_control() {
            // Every Unicode control character is below U+00A0: C0, DEL and C1.
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else if invisible(c) {
            out.push_str(&format!("\\u{{{:04x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

fn needs_escape(c: char) -> bool {
    c == '\\' || c.is_control() || invisible(c)
}

/// Characters that change how the text around them is shown without showing themselves.
fn invisible(c: char) -> bool {
    matches!(
        c as u32,
        0x061C | 0x180E | 0x200B..=0x200F | 0x2028..=0x202E | 0x2060..=0x2064 | 0x2066..=0x2069
            | 0xFEFF
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_text_is_kept_and_the_rest_is_escaped() {
        assert!(matches!(escape("200 OK é ü"), Cow::Borrowed("200 OK é ü")));
        assert_eq!(escape("a\x1b[2Jb\x07"), "a\\x1b[2Jb\\x07");
        assert_eq!(escape("line\r\nforged"), "line\\x0d\\x0aforged");
        assert_eq!(escape("\u{9b}31m"), "\\x9b31m");
        assert_eq!(escape("abc\u{202e}gpj.exe"), "abc\\u{202e}gpj.exe");
        assert_eq!(escape("del\x7f"), "del\\x7f");
        // A backslash is doubled, so an escaped form cannot be faked by the peer.
        assert_eq!(escape("\\x1b"), "\\\\x1b");
    }
}
