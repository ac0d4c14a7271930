//! Echoes of a credential's real value in a response, in every spelling an echo can
//! produce, each replaced by the placeholder in the same spelling.
//!
//! A host that receives the value can hand it back transformed: a debugging endpoint that
//! returns the request's headers as base64, a JSON API that escapes `/`, a template that
//! hex-dumps. The spellings recognised:
//! - the value as it is, JSON-escaped (`/` as `\/`) and reversed;
//! - percent-encoded, the reserved characters only or every byte, in either case;
//! - hex, `\xHH`, `%HH` and `\u00HH` byte by byte, in lower or upper case;
//! - base64 in the standard and URL-safe alphabets, padded or not, at each of the three
//!   alignments the value can have inside a longer encoded text; so also the value
//!   inside a `Basic` header's `user:value`, whatever the user's length.
//!
//! The placeholder has the value's length ([`Credential`] draws it so), so each spelling
//! of the placeholder has the length of the same spelling of the value and a body is
//! patched in place: lengths, offsets and the alignment of base64 around an echo are
//! kept. In base64 the characters that hold bits of the value and of its neighbours are
//! rewritten bit by bit, so no bit of the value is left and the neighbours decode as
//! before. After patching the text is searched again for every spelling; one still
//! found (spellings overlapping in ways patching undid) fails the response instead.
//!
//! Every spelling but base64 is matched without regard to ASCII case: an upper- or
//! lower-cased copy of the value gives it away but for the case. The status line's reason
//! phrase and the header names cannot carry a placeholder and are only checked: an echo
//! there fails the response.

use crate::credential::Credential;
use memchr::memmem;

const STANDARD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Why a response cannot be passed on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EchoError(pub(crate) String);

/// A spelling of the value and what replaces it.
enum Spelling {
    /// A byte string swapped for one of the same length.
    Plain {
        value: Vec<u8>,
        placeholder: Vec<u8>,
    },
    /// The base64 of the value at one alignment in one alphabet.
    Base64 {
        alphabet: &'static [u8; 64],
        /// How many bytes of the 3-byte group come before the value (0, 1 or 2).
        align: usize,
        /// The characters whose six bits all come from the value.
        core: Vec<u8>,
    },
}

/// Every spelling of `cred`'s value that a response may echo.
fn spellings(cred: &Credential) -> Vec<Spelling> {
    let value = cred.value().as_bytes();
    let ph = cred.placeholder().as_bytes();
    let mut plain: Vec<(Vec<u8>, Vec<u8>)> = vec![
        (value.to_vec(), ph.to_vec()),
        (escape_slash(value), escape_slash(ph)),
        (rev(value), rev(ph)),
    ];
    for upper in [false, true] {
        plain.push((percent(value, upper), percent(ph, upper)));
        for prefix in ["", "\\x", "%", "\\u00"] {
            plain.push((bytewise(value, prefix, upper), bytewise(ph, prefix, upper)));
        }
    }
    let mut out: Vec<Spelling> = Vec::new();
    for (v, p) in plain {
        let known = out
            .iter()
            .any(|s| matches!(s, Spelling::Plain { value, .. } if *value == v));
        if !known {
            out.push(Spelling::Plain {
                value: v,
                placeholder: p,
            });
        }
    }
    for alphabet in [STANDARD, URL_SAFE] {
        for align in 0..3 {
            out.push(Spelling::Base64 {
                alphabet,
                align,
                core: core(value, align, alphabet),
            });
        }
    }
    out
}

/// `bytes` with every echo of `cred`'s value replaced by its placeholder in the same
/// spelling, or why that cannot be done.
pub(crate) fn redact(cred: &Credential, bytes: &[u8]) -> Result<Vec<u8>, EchoError> {
    let value = cred.value().as_bytes();
    let ph = cred.placeholder().as_bytes();
    let spellings = spellings(cred);
    if !found_any(&spellings, bytes) {
        return Ok(bytes.to_vec());
    }
    if value.len() != ph.len() {
        return Err(EchoError(format!(
            "the response echoes the credential {} and its placeholder cannot stand in for it",
            cred.name()
        )));
    }
    let mut out = bytes.to_vec();
    // Exact spellings first, so that an echo in upper-case hex gets the placeholder in
    // upper-case hex; then the case-folded copies, each given the placeholder folded the
    // same way when it is all one case.
    for folded in [false, true] {
        for s in &spellings {
            if let Spelling::Plain { value, placeholder } = s {
                swap_plain(&mut out, value, placeholder, folded);
            }
        }
    }
    for s in &spellings {
        if let Spelling::Base64 {
            alphabet,
            align,
            core,
        } = s
        {
            let hits: Vec<usize> = memmem::find_iter(&out, core).collect();
            for at in hits {
                patch_base64(&mut out, at, *align, alphabet, value, ph);
            }
        }
    }
    if found_any(&spellings, &out) {
        return Err(EchoError(format!(
            "the response echoes the credential {} in a way that could not be replaced",
            cred.name()
        )));
    }
    Ok(out)
}

/// Replace each copy of `value` in `out` by `placeholder`: exact copies, or with `folded`
/// copies in any ASCII case.
fn swap_plain(out: &mut [u8], value: &[u8], placeholder: &[u8], folded: bool) {
    if value.is_empty() {
        return;
    }
    let hits: Vec<usize> = if folded {
        memmem::find_iter(&out.to_ascii_lowercase(), &value.to_ascii_lowercase()).collect()
    } else {
        memmem::find_iter(out, value).collect()
    };
    for at in hits {
        // An earlier swap may have overlapped this hit.
        let Some(window) = out.get_mut(at..at + value.len()) else {
            continue;
        };
        if !window.eq_ignore_ascii_case(value) {
            continue;
        }
        let swap = if *window == *value {
            placeholder.to_vec()
        } else if *window == *value.to_ascii_uppercase() {
            placeholder.to_ascii_uppercase()
        } else if *window == *value.to_ascii_lowercase() {
            placeholder.to_ascii_lowercase()
        } else {
            placeholder.to_vec()
        };
        window.copy_from_slice(&swap);
    }
}

/// Every response header with echoes of `cred`'s value replaced, or why that cannot be
/// done (a header that is no longer a valid value after the swap counts as that).
pub(crate) fn redact_headers(
    cred: &Credential,
    headers: &mut hyper::HeaderMap,
) -> Result<(), EchoError> {
    for value in headers.values_mut() {
        let redacted = redact(cred, value.as_bytes())?;
        if redacted != value.as_bytes() {
            *value = hyper::header::HeaderValue::from_bytes(&redacted).map_err(|_| {
                EchoError(format!(
                    "a response header echoes the credential {} and cannot carry its placeholder",
                    cred.name()
                ))
            })?;
        }
    }
    Ok(())
}

/// Why the head of a response (its reason phrase and header names, which cannot carry
/// a placeholder) gives `cred`'s value away, if it does. The caller drops a reason phrase
/// that passes all the same, so the client gets the status code's canonical one.
pub(crate) fn check_head(
    cred: &Credential,
    parts: &hyper::http::response::Parts,
) -> Result<(), EchoError> {
    let spellings = spellings(cred);
    if let Some(reason) = parts.extensions.get::<hyper::ext::ReasonPhrase>()
        && found_any(&spellings, reason.as_bytes())
    {
        return Err(EchoError(format!(
            "the response's status line echoes the credential {}",
            cred.name()
        )));
    }
    if parts
        .headers
        .keys()
        .any(|name| found_any(&spellings, name.as_str().as_bytes()))
    {
        return Err(EchoError(format!(
            "a response header's name echoes the credential {}",
            cred.name()
        )));
    }
    Ok(())
}

/// Whether `hay` holds any of `spellings`: base64 as it is, every other spelling in any
/// ASCII case (the text is folded once for all of them).
fn found_any(spellings: &[Spelling], hay: &[u8]) -> bool {
    let lower = hay.to_ascii_lowercase();
    spellings.iter().any(|s| match s {
        Spelling::Plain { value, .. } => {
            !value.is_empty() && memmem::find(&lower, &value.to_ascii_lowercase()).is_some()
        }
        Spelling::Base64 { core, .. } => !core.is_empty() && memmem::find(hay, core).is_some(),
    })
}

/// The bit stream of `align` zero bytes and then `data`, as 6-bit digits, with for each
/// digit the mask of its bits that come from `data`.
fn digits(data: &[u8], align: usize) -> Vec<(u8, u8)> {
    let total = (align + data.len()) * 8;
    let from = align * 8;
    let bit = |i: usize| -> (u8, bool) {
        if i < from || i >= total {
            return (0, false);
        }
        let k = i - from;
        ((data[k / 8] >> (7 - k % 8)) & 1, true)
    };
    (0..total.div_ceil(6))
        .map(|d| {
            let mut v = 0u8;
            let mut mask = 0u8;
            for j in 0..6 {
                let (b, ours) = bit(d * 6 + j);
                v = (v << 1) | b;
                mask = (mask << 1) | u8::from(ours);
            }
            (v, mask)
        })
        .collect()
}

/// The characters of the base64 of `data` at `align` that hold its bits only.
fn core(data: &[u8], align: usize, alphabet: &[u8; 64]) -> Vec<u8> {
    digits(data, align)
        .into_iter()
        .filter(|(_, mask)| *mask == 0x3f)
        .map(|(v, _)| alphabet[usize::from(v)])
        .collect()
}

/// Rewrite the base64 echo of `value` whose fully-owned characters start at `at`: every
/// character holding a bit of the value gets the placeholder's bit instead, the bits of
/// its neighbours kept.
fn patch_base64(
    out: &mut [u8],
    at: usize,
    align: usize,
    alphabet: &[u8; 64],
    value: &[u8],
    ph: &[u8],
) {
    let ours = digits(value, align);
    let theirs = digits(ph, align);
    // Index (among the digits) of the first digit wholly from the value.
    let Some(first_full) = ours.iter().position(|(_, m)| *m == 0x3f) else {
        return;
    };
    for (d, ((_, mask), (pv, _))) in ours.iter().zip(&theirs).enumerate() {
        if *mask == 0 {
            continue;
        }
        let Some(pos) = (at + d).checked_sub(first_full) else {
            continue; // the text starts inside this character: it is not there
        };
        let Some(c) = out.get(pos).copied() else {
            continue;
        };
        let Some(old) = alphabet.iter().position(|a| *a == c) else {
            continue; // padding or text: holds no bit of the value
        };
        let old = u8::try_from(old).unwrap_or(0);
        let new = (old & !mask) | (pv & mask);
        out[pos] = alphabet[usize::from(new & 0x3f)];
    }
}

fn escape_slash(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.len());
    for &c in b {
        if c == b'/' {
            out.push(b'\\');
        }
        out.push(c);
    }
    out
}

fn rev(b: &[u8]) -> Vec<u8> {
    b.iter().rev().copied().collect()
}

fn hex_digit(n: u8, upper: bool) -> u8 {
    let digits = if upper {
        b"0123456789ABCDEF"
    } else {
        b"0123456789abcdef"
    };
    digits[usize::from(n & 15)]
}

/// Each byte as `prefix` and two hex digits.
fn bytewise(b: &[u8], prefix: &str, upper: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.len() * (2 + prefix.len()));
    for &c in b {
        out.extend_from_slice(prefix.as_bytes());
        out.push(hex_digit(c >> 4, upper));
        out.push(hex_digit(c, upper));
    }
    out
}

/// Percent-encoding of all but the unreserved characters (RFC 3986 §2.3).
fn percent(b: &[u8], upper: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.len() * 3);
    for &c in b {
        if c.is_ascii_alphanumeric() || b"-._~".contains(&c) {
            out.push(c);
        } else {
            out.push(b'%');
            out.push(hex_digit(c >> 4, upper));
            out.push(hex_digit(c, upper));
        }
    }
    out
}

#[cfg(test)]
#[path = "echo_tests.rs"]
mod tests;
