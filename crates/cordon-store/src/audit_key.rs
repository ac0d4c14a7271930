//! The audit log's signing key: an ed25519 key whose signatures close every batch of
//! records written, so that a log rewritten by someone without the key fails
//! verification, and a third party holding only the public key can check a copy.
//!
//! The secret lives in one file, `audit.key` beside the store (the state directory by
//! default, which every sandbox masks), mode 0600, never in a record. It is created on
//! first use with `O_EXCL`, so two processes racing to create it agree on one key.
//!
//! What is signed: a record line is `B,"sig":"S"}` where `B` is the line up to that
//! field (`{"seq":…,"prev":…,<fields>`) and `S` the hex ed25519 signature of
//! [`SIG_CONTEXT`] followed by `B`. `B` carries `prev`, the hash of the line before, so one
//! signature vouches for every line back to the header.

use std::path::{Path, PathBuf};

use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};

use crate::error::{StoreError, StoreErrorKind};
use crate::paths;

/// Prefix of every signed message: a signature made for anything else never verifies
/// as an audit checkpoint.
pub const SIG_CONTEXT: &[u8] = b"cordon-audit-checkpoint-v1\n";

/// The file name of the key, beside the store.
pub const KEY_FILE: &str = "audit.key";

/// Where the signing key of the audit logs written with the store at `store` lives.
pub fn key_path_for_store(store: &Path) -> PathBuf {
    paths::parent_of(store).join(KEY_FILE)
}

/// The files cordon keeps for the store at `store`: the database with its `-wal` and
/// `-shm` companions, and the signing key beside it. A sandbox must neither read nor
/// write any of them (the state directory is masked as a whole; a store named elsewhere
/// is masked file by file).
pub fn files_of_store(store: &Path) -> Vec<PathBuf> {
    let mut files = vec![key_path_for_store(store)];
    for suffix in ["", "-wal", "-shm"] {
        let mut name = store.as_os_str().to_owned();
        name.push(suffix);
        files.push(PathBuf::from(name));
    }
    files
}

/// The secret signing key. Its `Debug` shows the public half only.
pub struct AuditKey {
    signing: SigningKey,
}

impl std::fmt::Debug for AuditKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AuditKey({})", self.public().to_hex())
    }
}

/// The public verification key, for `cordon audit verify --key` and third parties.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuditPublicKey(VerifyingKey);

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex<const N: usize>(text: &str) -> Option<[u8; N]> {
    let text = text.trim();
    if text.len() != 2 * N || !text.is_ascii() {
        return None;
    }
    let mut out = [0u8; N];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

fn bad_key(path: &Path, why: &str) -> StoreError {
    StoreError::new(path, StoreErrorKind::Corrupt(why.to_string()))
}

impl AuditKey {
    /// Read the key at `path`, creating it (0600, in a 0700 directory, `O_EXCL`) when
    /// there is none.
    pub fn load_or_create(path: &Path) -> Result<AuditKey, StoreError> {
        if let Some(key) = AuditKey::load_if_present(path)? {
            return Ok(key);
        }
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|e| {
            StoreError::new(
                path,
                StoreErrorKind::Io(format!("no randomness for the key: {e}")),
            )
        })?;
        let dir = paths::ensure_dir(paths::parent_of(path))?;
        let name = Path::new(path.file_name().unwrap_or_default());
        let text = format!("{}\n", hex(&seed));
        match dir.write_new(name, text.as_bytes(), 0o600) {
            Ok(()) => Ok(AuditKey {
                signing: SigningKey::from_bytes(&seed),
            }),
            // Another process created it first: use theirs.
            Err(e) if e.raw_os_error() == Some(rustix::io::Errno::EXIST.raw_os_error()) => {
                AuditKey::load(path)
            }
            Err(e) => Err(paths::fs_err(path, e)),
        }
    }

    /// Read the key at `path`; an error when there is none.
    pub fn load(path: &Path) -> Result<AuditKey, StoreError> {
        AuditKey::load_if_present(path)?.ok_or_else(|| {
            StoreError::new(
                path,
                StoreErrorKind::Invalid("there is no audit signing key there".into()),
            )
        })
    }

    /// Read the key at `path`; `None` when there is none.
    pub fn load_if_present(path: &Path) -> Result<Option<AuditKey>, StoreError> {
        let dir = match cordon_fs::Dir::open_ambient(paths::parent_of(path)) {
            Ok(d) => d,
            Err(e) if e.is_not_found() => return Ok(None),
            Err(e) => return Err(paths::fs_err(path, e)),
        };
        let name = Path::new(path.file_name().unwrap_or_default());
        let bytes = match dir.read(name, 256) {
            Ok(b) => b,
            Err(e) if e.is_not_found() => return Ok(None),
            Err(e) => return Err(paths::fs_err(path, e)),
        };
        let stat = dir.stat(name).map_err(|e| paths::fs_err(path, e))?;
        if stat.st_mode & 0o077 != 0 {
            return Err(StoreError::new(
                path,
                StoreErrorKind::Permissions(
                    "the audit signing key is readable by others; chmod 600 it or remove it".into(),
                ),
            ));
        }
        let text = String::from_utf8(bytes).map_err(|_| bad_key(path, "it is not text"))?;
        let seed = unhex::<32>(&text)
            .ok_or_else(|| bad_key(path, "it is not an audit key (64 hex digits)"))?;
        Ok(Some(AuditKey {
            signing: SigningKey::from_bytes(&seed),
        }))
    }

    /// The public half.
    pub fn public(&self) -> AuditPublicKey {
        AuditPublicKey(self.signing.verifying_key())
    }

    /// Hex signature of [`SIG_CONTEXT`] + `body`.
    pub(crate) fn sign(&self, body: &[u8]) -> String {
        let mut msg = Vec::with_capacity(SIG_CONTEXT.len() + body.len());
        msg.extend_from_slice(SIG_CONTEXT);
        msg.extend_from_slice(body);
        hex(&self.signing.sign(&msg).to_bytes())
    }
}

/// Why a text is not a public audit key ([`AuditPublicKey::parse`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PublicKeyError {
    /// Not 64 hex digits, with or without the `cordon-audit-ed25519:` prefix.
    NotHex,
    /// 64 hex digits that are not an ed25519 public key.
    NotEd25519,
}

impl std::fmt::Display for PublicKeyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PublicKeyError::NotHex => {
                "a public audit key is 64 hex digits (what `cordon audit pubkey` prints)"
            }
            PublicKeyError::NotEd25519 => "these 64 hex digits are not an ed25519 public key",
        })
    }
}

impl std::error::Error for PublicKeyError {}

impl AuditPublicKey {
    /// Parse a public key: 64 hex digits, optionally prefixed `cordon-audit-ed25519:`.
    pub fn parse(text: &str) -> Result<AuditPublicKey, PublicKeyError> {
        let text = text.trim();
        let digits = text.strip_prefix("cordon-audit-ed25519:").unwrap_or(text);
        let bytes = unhex::<32>(digits).ok_or(PublicKeyError::NotHex)?;
        VerifyingKey::from_bytes(&bytes)
            .map(AuditPublicKey)
            .map_err(|_| PublicKeyError::NotEd25519)
    }

    /// The key as `cordon-audit-ed25519:HEX`, which [`parse`](Self::parse) reads.
    pub fn to_hex(&self) -> String {
        format!("cordon-audit-ed25519:{}", hex(self.0.as_bytes()))
    }

    /// Whether `sig_hex` is this key's signature of [`SIG_CONTEXT`] + `body`.
    pub fn verifies(&self, body: &[u8], sig_hex: &str) -> bool {
        let Some(bytes) = unhex::<64>(sig_hex) else {
            return false;
        };
        let mut msg = Vec::with_capacity(SIG_CONTEXT.len() + body.len());
        msg.extend_from_slice(SIG_CONTEXT);
        msg.extend_from_slice(body);
        self.0
            .verify_strict(&msg, &Signature::from_bytes(&bytes))
            .is_ok()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_key_is_created_once_private_and_verifies_only_its_own_signatures() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("state").join(KEY_FILE);
        let key = AuditKey::load_or_create(&path).unwrap();
        let again = AuditKey::load_or_create(&path).unwrap();
        assert_eq!(key.public(), again.public());
        let mode = std::fs::metadata(&path).unwrap();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode.permissions()) & 0o777,
            0o600
        );
        let sig = key.sign(b"body");
        let public = AuditPublicKey::parse(&key.public().to_hex()).unwrap();
        assert!(public.verifies(b"body", &sig));
        assert!(!public.verifies(b"bodx", &sig));
        let other = AuditKey::load_or_create(&t.path().join("k2")).unwrap();
        assert!(!other.public().verifies(b"body", &sig));
        let err = AuditPublicKey::parse("zz").unwrap_err();
        assert_eq!(err, PublicKeyError::NotHex);
        assert_eq!(
            err.to_string(),
            "a public audit key is 64 hex digits (what `cordon audit pubkey` prints)"
        );
    }
}
