//! Authentication with a pre-shared key: HMAC-SHA256 (RustCrypto `hmac` + `sha2`) over both
//! peers' nonces (`getrandom`), each side proving the key to the other; tags are checked with
//! the MAC's own constant-time `verify_slice`. Nothing here is home-made cryptography: only
//! which labels and nonces go into the MAC.
//!
//! ```text
//! client proof  = HMAC(key, "cclab-v1 client"  | nonce_c | nonce_s)
//! server proof  = HMAC(key, "cclab-v1 server"  | nonce_c | nonce_s)
//! session key   = HMAC(key, "cclab-v1 session" | nonce_c | nonce_s)
//! data token    = HMAC(session key, "cclab-v1 data" | session id | run | stream)
//! ```
//! Without a key (loopback only) the same exchange runs with an empty key: the data tokens
//! still bind each data connection to its session, but nothing is secret.

use crate::protocol::{MAC_LEN, NONCE_LEN, SESSION_LEN};
use crate::RemoteError;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::path::Path;

type HmacSha256 = Hmac<Sha256>;

/// Shortest key accepted, bytes.
pub const MIN_KEY_LEN: usize = 16;
/// Largest key file read, bytes.
const MAX_KEY_FILE: u64 = 4096;

/// A pre-shared key.
#[derive(Clone)]
pub struct Key(Vec<u8>);

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Key({} bytes)", self.0.len())
    }
}

impl Key {
    /// A key from bytes; at least [`MIN_KEY_LEN`] of them.
    pub fn from_bytes(b: &[u8]) -> Result<Key, RemoteError> {
        if b.len() < MIN_KEY_LEN {
            return Err(RemoteError::Usage(format!(
                "the key has {} bytes; use at least {MIN_KEY_LEN} (e.g. `head -c 32 /dev/urandom | base64 > key`)",
                b.len()
            )));
        }
        Ok(Key(b.to_vec()))
    }

    /// The key in file `path`: its content less surrounding whitespace. The file must not
    /// be readable by group or others (as ssh asks of a private key).
    pub fn load(path: &Path) -> Result<Key, RemoteError> {
        use std::io::Read;
        use std::os::unix::fs::OpenOptionsExt;
        use std::os::unix::fs::PermissionsExt;
        let p = path.display();
        // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever,
        // before the check below could say it is not a file.
        let f = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .map_err(|e| RemoteError::Usage(format!("cannot read key file {p}: {e}")))?;
        let meta = f
            .metadata()
            .map_err(|e| RemoteError::Usage(format!("cannot read key file {p}: {e}")))?;
        if !meta.is_file() {
            return Err(RemoteError::Usage(format!(
                "key file {p} is not a regular file (a FIFO, socket, device or directory); give the path of a file holding the key"
            )));
        }
        let mode = meta.permissions().mode();
        if mode & 0o077 != 0 {
            return Err(RemoteError::Usage(format!(
                "key file {p} is readable by others (mode {:o}); `chmod 600 {p}`",
                mode & 0o777
            )));
        }
        let mut buf = Vec::new();
        f.take(MAX_KEY_FILE + 1)
            .read_to_end(&mut buf)
            .map_err(|e| RemoteError::Usage(format!("cannot read key file {p}: {e}")))?;
        if buf.len() as u64 > MAX_KEY_FILE {
            return Err(RemoteError::Usage(format!(
                "key file {p} is over {MAX_KEY_FILE} bytes; a key is one line (e.g. 32 random bytes in base64)"
            )));
        }
        let k = buf.trim_ascii();
        Key::from_bytes(k).map_err(|e| RemoteError::Usage(format!("key file {p}: {e}")))
    }

    pub fn bytes(&self) -> &[u8] {
        &self.0
    }
}

fn mac_of(key: &[u8], label: &[u8], parts: &[&[u8]]) -> HmacSha256 {
    // HMAC takes keys of any length; this cannot fail.
    let mut m = <HmacSha256 as Mac>::new_from_slice(key).expect("HMAC takes any key length");
    m.update(label);
    for p in parts {
        m.update(p);
    }
    m
}

/// HMAC-SHA256 of `label` followed by `parts`.
pub fn mac(key: &[u8], label: &[u8], parts: &[&[u8]]) -> [u8; MAC_LEN] {
    mac_of(key, label, parts).finalize().into_bytes().into()
}

/// Whether `tag` is the MAC of `label | parts` (constant-time comparison).
pub fn verify(key: &[u8], label: &[u8], parts: &[&[u8]], tag: &[u8]) -> bool {
    mac_of(key, label, parts).verify_slice(tag).is_ok()
}

pub const CLIENT: &[u8] = b"cclab-v1 client";
pub const SERVER: &[u8] = b"cclab-v1 server";
pub const SESSION: &[u8] = b"cclab-v1 session";
pub const DATA: &[u8] = b"cclab-v1 data";

/// Random bytes from the operating system.
pub fn random<const N: usize>() -> Result<[u8; N], RemoteError> {
    let mut b = [0u8; N];
    getrandom::fill(&mut b)
        .map_err(|e| RemoteError::Io(format!("no random numbers from the system: {e}")))?;
    Ok(b)
}

pub fn nonce() -> Result<[u8; NONCE_LEN], RemoteError> {
    random()
}

/// The key the session's data tokens are MACed with.
pub fn session_key(key: &[u8], nc: &[u8; NONCE_LEN], ns: &[u8; NONCE_LEN]) -> [u8; MAC_LEN] {
    mac(key, SESSION, &[nc, ns])
}

/// The token that binds data connection `stream` of `run` to session `session`.
pub fn data_token(
    sk: &[u8; MAC_LEN],
    session: &[u8; SESSION_LEN],
    run: u32,
    stream: u16,
) -> [u8; MAC_LEN] {
    mac(
        sk,
        DATA,
        &[session, &run.to_be_bytes(), &stream.to_be_bytes()],
    )
}

pub fn data_token_ok(
    sk: &[u8; MAC_LEN],
    session: &[u8; SESSION_LEN],
    run: u32,
    stream: u16,
    tag: &[u8],
) -> bool {
    verify(
        sk,
        DATA,
        &[session, &run.to_be_bytes(), &stream.to_be_bytes()],
        tag,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_sha256_matches_rfc_4231() {
        // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
        let m = mac(b"Jefe", b"what do ya want ", &[b"for nothing?"]);
        let hex: String = m.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn proofs_depend_on_key_label_and_nonces() {
        let (k, nc, ns) = (b"0123456789abcdef", [1u8; 32], [2u8; 32]);
        let p = mac(k, CLIENT, &[&nc, &ns]);
        assert!(verify(k, CLIENT, &[&nc, &ns], &p));
        assert!(!verify(b"0123456789abcdeX", CLIENT, &[&nc, &ns], &p));
        assert!(
            !verify(k, SERVER, &[&nc, &ns], &p),
            "a client proof is no server proof"
        );
        assert!(!verify(k, CLIENT, &[&ns, &nc], &p));
        assert!(!verify(k, CLIENT, &[&nc, &ns], &p[..31]));
        let sk = session_key(k, &nc, &ns);
        let t = data_token(&sk, &[5; 16], 3, 1);
        assert!(data_token_ok(&sk, &[5; 16], 3, 1, &t));
        assert!(!data_token_ok(&sk, &[5; 16], 3, 2, &t));
        assert!(!data_token_ok(&sk, &[5; 16], 4, 1, &t));
        assert!(!data_token_ok(
            &session_key(k, &nc, &[3; 32]),
            &[5; 16],
            3,
            1,
            &t
        ));
        assert_ne!(nonce().unwrap(), nonce().unwrap());
    }

    #[test]
    fn key_files_are_checked() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("cclab-key-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("key");
        std::fs::write(&f, "  s3cret-s3cret-s3cret\n").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = Key::load(&f).unwrap_err().to_string();
        assert!(e.contains("chmod 600"), "{e}");
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(Key::load(&f).unwrap().bytes(), b"s3cret-s3cret-s3cret");
        std::fs::write(&f, "short\n").unwrap();
        let e = Key::load(&f).unwrap_err().to_string();
        assert!(e.contains("at least 16"), "{e}");
        let e = Key::load(&dir.join("none")).unwrap_err().to_string();
        assert!(e.contains("cannot read key file"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
