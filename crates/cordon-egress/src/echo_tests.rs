use super::*;
use cordon_policy::credential::{Apply, Destination};

const REAL: &str = "s3cr3t/Value+0123456789?~";

fn cred() -> Credential {
    let d = Destination::parse("api.example.com", &[], &[]).unwrap();
    Credential::new(
        "t",
        REAL.into(),
        Apply::Basic { user: "ci".into() },
        vec![d],
        None,
    )
    .unwrap()
}

fn b64(data: &[u8], alphabet: &[u8; 64], pad: bool) -> String {
    let mut out = String::new();
    for chunk in data.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, b)| acc | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(alphabet[((n >> (18 - 6 * i)) & 63) as usize]));
            } else if pad {
                out.push('=');
            }
        }
    }
    out
}

fn unb64(text: &str, alphabet: &[u8; 64]) -> Vec<u8> {
    let digits: Vec<u32> = text
        .trim_end_matches('=')
        .bytes()
        .map(|c| alphabet.iter().position(|a| *a == c).unwrap() as u32)
        .collect();
    let mut out = Vec::new();
    for chunk in digits.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, d)| acc | (d << (18 - 6 * i)));
        for i in 0..chunk.len() - 1 {
            out.push(((n >> (16 - 8 * i)) & 0xff) as u8);
        }
    }
    out
}

/// Every alignment (0 to 5 bytes before the value, 0 to 2 after), both alphabets,
/// padded or not: the value is gone, the placeholder decodes in its place, and the
/// bytes around it decode as before.
#[test]
fn base64_at_every_alignment_decodes_to_the_placeholder() {
    let c = cred();
    for alphabet in [STANDARD, URL_SAFE] {
        for pre in 0..6 {
            for post in 0..3 {
                for pad in [false, true] {
                    let prefix = &b"ci:abc"[..pre];
                    let suffix = &b"\n\xff"[..post];
                    let plain = [prefix, REAL.as_bytes(), suffix].concat();
                    let enc = b64(&plain, alphabet, pad);
                    let body = format!("{{\"echo\":\"{enc}\"}}");
                    let out = String::from_utf8(redact(&c, body.as_bytes()).unwrap()).unwrap();
                    let got = out
                        .trim_start_matches("{\"echo\":\"")
                        .trim_end_matches("\"}");
                    assert_eq!(got.len(), enc.len());
                    let want = [prefix, c.placeholder().as_bytes(), suffix].concat();
                    assert_eq!(unb64(got, alphabet), want, "{pre} {post} {pad} {enc}");
                }
            }
        }
    }
}

#[test]
fn every_bytewise_spelling_is_replaced_in_its_own_spelling() {
    let c = cred();
    let ph = c.placeholder();
    for upper in [false, true] {
        for prefix in ["", "\\x", "%", "\\u00"] {
            let v = String::from_utf8(bytewise(REAL.as_bytes(), prefix, upper)).unwrap();
            let p = String::from_utf8(bytewise(ph.as_bytes(), prefix, upper)).unwrap();
            let out = redact(&c, format!("a {v} b").as_bytes()).unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), format!("a {p} b"));
        }
        let v = String::from_utf8(percent(REAL.as_bytes(), upper)).unwrap();
        let out = String::from_utf8(redact(&c, v.as_bytes()).unwrap()).unwrap();
        assert_eq!(
            out,
            String::from_utf8(percent(ph.as_bytes(), upper)).unwrap()
        );
    }
    let rev: String = REAL.chars().rev().collect();
    let out = String::from_utf8(redact(&c, rev.as_bytes()).unwrap()).unwrap();
    assert_eq!(out, ph.chars().rev().collect::<String>());
    let json = REAL.replace('/', "\\/");
    let out = String::from_utf8(redact(&c, json.as_bytes()).unwrap()).unwrap();
    assert_eq!(out, ph.replace('/', "\\/"));
}

#[test]
fn a_body_without_the_value_is_untouched() {
    let c = cred();
    let body = b"plain text, \x00\xff binary, QUJDREVGR0g= base64";
    assert_eq!(redact(&c, body).unwrap(), body);
}

#[test]
fn a_case_folded_echo_is_replaced_and_a_mixed_one_too() {
    let c = cred();
    let ph = c.placeholder();
    let mixed: String = REAL
        .chars()
        .enumerate()
        .map(|(i, ch)| {
            if i % 2 == 0 {
                ch.to_ascii_uppercase()
            } else {
                ch.to_ascii_lowercase()
            }
        })
        .collect();
    for (echo, want) in [
        (REAL.to_uppercase(), ph.to_uppercase()),
        (REAL.to_lowercase(), ph.to_lowercase()),
        (mixed, ph.to_owned()),
    ] {
        let out = redact(&c, format!("<{echo}>").as_bytes()).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), format!("<{want}>"));
    }
}
