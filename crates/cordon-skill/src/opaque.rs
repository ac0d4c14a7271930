//! Code a package ships that no review can read: compiled Python (`.pyc`, a
//! `__pycache__` entry) and native code (a shared object, a Node addon, an executable),
//! found by content as well as by name, wherever it sits in the package.
//!
//! A script that imports `payload` runs `payload.pyc` or `payload.so` if no `payload.py`
//! is there, Node runs `require('./fmt')` as `fmt.node`, Ruby's `require_relative 'fmt'`
//! loads `fmt.so`: the name of what runs is not in the script's text. So every such file
//! is a review on its own, whether or not cordon can tell which script loads it.
//!
//! A `__pycache__` entry beside its source is no exception, checked or not: Python runs
//! the cached code when the header matches the source (a timestamp and size, or the
//! source's hash), and the header is the package author's to write, so it can match the
//! reviewed source while the code it carries is something else.

use crate::report::{Check, Finding, Severity};
use std::collections::{BTreeMap, BTreeSet};

/// What an opaque file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Opaque {
    /// Machine code: the format's name.
    Native(&'static str),
    /// Compiled Python; `checked` when its header asks Python to check it against the
    /// source's hash on every import (PEP 552 flags `0b11`).
    Pyc { checked: bool },
    /// An image, or a PDF with no text (only images): what it says cannot be read.
    Picture(&'static str),
}

/// Extensions of native code loaded by name (`.so.1` counts as `.so`).
const NATIVE_EXT: &[&str] = &["so", "node", "dylib", "dll", "pyd", "bundle", "dylib"];

/// Classify a file by its name and its first bytes.
pub(crate) fn classify(name: &str, head: &[u8]) -> Option<Opaque> {
    if let Some(what) = native_magic(head) {
        return Some(Opaque::Native(what));
    }
    let base = name.rsplit('/').next().unwrap_or(name).to_ascii_lowercase();
    let pyc_ext = base.ends_with(".pyc") || base.ends_with(".pyo");
    // CPython's magic: two version bytes, then `\r\n`.
    let pyc_magic = head.len() >= 16 && head[2..4] == *b"\r\n";
    if pyc_ext || (pyc_magic && name.contains("__pycache__/")) {
        let flags = head
            .get(4..8)
            .map_or(0, |f| u32::from_le_bytes([f[0], f[1], f[2], f[3]]));
        return Some(Opaque::Pyc {
            checked: pyc_magic && flags == 0b11,
        });
    }
    let native_name = base.split('.').skip(1).any(|e| NATIVE_EXT.contains(&e));
    native_name.then_some(Opaque::Native("a native module (by its name)"))
}

/// The executable formats: ELF, Mach-O (thin and fat), PE, WebAssembly, Java classes.
fn native_magic(head: &[u8]) -> Option<&'static str> {
    let at = |i: usize, m: &[u8]| head.get(i..i + m.len()) == Some(m);
    if at(0, b"\x7fELF") {
        Some("ELF machine code")
    } else if [
        b"\xfe\xed\xfa\xce",
        b"\xce\xfa\xed\xfe",
        b"\xfe\xed\xfa\xcf",
        b"\xcf\xfa\xed\xfe",
    ]
    .iter()
    .any(|m| at(0, *m))
    {
        Some("Mach-O machine code")
    } else if at(0, b"\xca\xfe\xba\xbe") {
        Some("Mach-O universal binary or Java class")
    } else if at(0, b"\0asm") {
        Some("WebAssembly")
    } else if at(0, b"MZ") {
        // A PE file: `MZ`, and `PE\0\0` where the DOS header's `e_lfanew` points.
        let off = head
            .get(0x3c..0x40)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
        off.filter(|o| at(*o, b"PE\0\0"))
            .map(|_| "PE (Windows) machine code")
    } else {
        None
    }
}

/// Findings for the opaque files of a package (package-relative paths); `files` is
/// every regular file of the package.
pub(crate) fn judge(opaque: &BTreeMap<String, Opaque>, files: &BTreeSet<String>) -> Vec<Finding> {
    let mut out = Vec::new();
    for (path, what) in opaque {
        let (verdict, msg) = match *what {
            Opaque::Picture(_) => continue,
            Opaque::Native(kind) => (
                Severity::Review,
                format!(
                    "compiled native code ({kind}): cordon cannot read what it does, and a script that imports or requires it by a bare name runs it"
                ),
            ),
            Opaque::Pyc { checked } => match pycache_source(path).filter(|s| files.contains(s)) {
                Some(src) => (
                    Severity::Review,
                    format!(
                        "compiled Python that Python runs in place of {src} when the header matches that source ({}); the header can match while the code differs, and cordon cannot read the code",
                        if checked { "a checked source hash" } else { "a timestamp and size, or an unchecked hash" }
                    ),
                ),
                None => (
                    Severity::Review,
                    "compiled Python with no source beside it: `import` runs it, and cordon cannot read it".to_string(),
                ),
            },
        };
        out.push(Finding::new(
            Check::ConstructedShell,
            verdict,
            Some(path),
            msg,
        ));
    }
    out
}

/// An image by its magic number, or a PDF without a font anywhere (in its objects or
/// in its compressed streams): its text, if any, is pixels. A PDF too large to keep
/// (`bytes` is `None`) cannot be checked and counts as one.
pub(crate) fn picture(head: &[u8], bytes: Option<&[u8]>) -> Option<Opaque> {
    const IMAGES: &[(&[u8], &str)] = &[
        (b"\x89PNG", "a PNG image"),
        (b"\xff\xd8\xff", "a JPEG image"),
        (b"GIF8", "a GIF image"),
        (b"BM", "a BMP image"),
        (b"II*\0", "a TIFF image"),
        (b"MM\0*", "a TIFF image"),
        (b"\0\0\x01\0", "an icon"),
    ];
    if let Some((_, what)) = IMAGES.iter().find(|(m, _)| head.starts_with(m)) {
        return Some(Opaque::Picture(what));
    }
    if head.starts_with(b"RIFF") && head.get(8..12) == Some(b"WEBP") {
        return Some(Opaque::Picture("a WebP image"));
    }
    if head.get(4..8) == Some(b"ftyp")
        && matches!(head.get(8..12), Some(b"avif" | b"heic" | b"heix" | b"mif1"))
    {
        return Some(Opaque::Picture("an AVIF/HEIC image"));
    }
    if !head.starts_with(b"%PDF") {
        return None;
    }
    let Some(bytes) = bytes else {
        return Some(Opaque::Picture("a PDF too large to check for text"));
    };
    (!pdf_has_font(bytes)).then_some(Opaque::Picture("a PDF with no text, only images"))
}

/// Whether a PDF names a font, in its plain objects or inside a Flate stream (object
/// streams hide dictionaries there). Inflation is bounded.
fn pdf_has_font(pdf: &[u8]) -> bool {
    use std::io::Read;
    let has = |b: &[u8]| b.windows(5).any(|w| w == b"/Font");
    if has(pdf) {
        return true;
    }
    let mut budget: u64 = 64 << 20;
    let mut rest = pdf;
    while let Some(i) = rest.windows(6).position(|w| w == b"stream") {
        let mut start = i + 6;
        if rest.get(start) == Some(&b'\r') {
            start += 1;
        }
        if rest.get(start) == Some(&b'\n') {
            start += 1;
        }
        let body = &rest[start.min(rest.len())..];
        let end = body
            .windows(9)
            .position(|w| w == b"endstream")
            .unwrap_or(body.len());
        let mut out = Vec::new();
        let mut z = flate2::read::ZlibDecoder::new(&body[..end]).take(budget.min(16 << 20));
        if z.read_to_end(&mut out).is_ok() || !out.is_empty() {
            budget = budget.saturating_sub(out.len() as u64);
            if has(&out) {
                return true;
            }
        }
        if budget == 0 {
            // Past the bound: say it has text rather than inflate further.
            return true;
        }
        rest = &body[end.min(body.len())..];
    }
    false
}

/// Findings for the pictures that a text of the package names (by its path or, when
/// no other file has it, its file name): instructions in a picture cannot be checked.
pub(crate) fn pictures(
    opaque: &BTreeMap<String, Opaque>,
    texts: &[(String, String)],
) -> Vec<Finding> {
    let mut out = Vec::new();
    for (path, what) in opaque {
        let Opaque::Picture(kind) = *what else {
            continue;
        };
        let base = path.rsplit('/').next().unwrap_or(path);
        let unique = opaque
            .keys()
            .filter(|p| p.rsplit('/').next() == Some(base))
            .count()
            == 1;
        let named = texts.iter().find(|(p, t)| {
            p != path && (t.contains(path.as_str()) || (unique && t.contains(base)))
        });
        if let Some((doc, _)) = named {
            out.push(Finding::new(
                Check::HiddenText,
                Severity::Review,
                Some(path),
                format!(
                    "{doc} names this file, {kind}: instructions in an image cannot be checked, and an agent told to follow what it shows reads them; look at it yourself"
                ),
            ));
        }
    }
    out
}

/// The source a `__pycache__/NAME.TAG.pyc` entry stands for (`../NAME.py`).
fn pycache_source(path: &str) -> Option<String> {
    let (dir, base) = path.rsplit_once('/').unwrap_or(("", path));
    let parent = dir.strip_suffix("__pycache__")?;
    let stem = base.split('.').next()?;
    Some(format!("{parent}{stem}.py"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_is_found_by_content_and_by_name() {
        assert_eq!(
            classify("assets/font.bin", b"\x7fELF\x02\x01\x01\0"),
            Some(Opaque::Native("ELF machine code"))
        );
        assert!(matches!(
            classify("lib/fmt.so.1", b"not elf"),
            Some(Opaque::Native(_))
        ));
        assert!(matches!(
            classify("x/addon.node", b""),
            Some(Opaque::Native(_))
        ));
        let mut pyc = b"\xa7\x0d\x0d\x0a\x03\0\0\0".to_vec();
        pyc.extend_from_slice(&[0; 12]);
        assert_eq!(
            classify("s/__pycache__/m.cpython-311.pyc", &pyc),
            Some(Opaque::Pyc { checked: true })
        );
        pyc[4] = 1;
        assert_eq!(
            classify("s/__pycache__/m.cpython-311.data", &pyc),
            Some(Opaque::Pyc { checked: false })
        );
        assert_eq!(classify("fonts/a.ttf", b"\0\x01\0\0\0\x0f"), None);
        assert_eq!(classify("doc.pdf", b"%PDF-1.7"), None);
        assert_eq!(classify("notes.txt", b"MZ is a word"), None);
    }

    #[test]
    fn every_pyc_is_a_review_whatever_its_header_says() {
        let files: BTreeSet<String> = ["s/m.py".to_string()].into();
        let one = |p: &str, o| judge(&[(p.to_string(), o)].into(), &files)[0].verdict;
        for checked in [true, false] {
            for p in [
                "s/__pycache__/m.cpython-311.pyc",
                "s/__pycache__/n.cpython-311.pyc",
                "s/m.pyc",
            ] {
                assert_eq!(one(p, Opaque::Pyc { checked }), Severity::Review, "{p}");
            }
        }
    }

    #[test]
    fn pictures_named_by_a_text_are_instructions_nobody_can_check() {
        let webp = b"RIFF\0\0\0\0WEBPVP8 ";
        assert_eq!(picture(webp, None), Some(Opaque::Picture("a WebP image")));
        // A PDF whose only content is an image, its dictionaries in a compressed stream.
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut z, b"<< /Type /XObject /Subtype /Image >>").ok();
        let body = z.finish().unwrap_or_default();
        let pdf = [
            b"%PDF-1.7\n1 0 obj << /Type /ObjStm >> stream\n".as_slice(),
            &body,
            b"\nendstream\n",
        ]
        .concat();
        assert!(matches!(
            picture(&pdf, Some(&pdf)),
            Some(Opaque::Picture(_))
        ));
        // The same with a font in the stream: text, not a picture.
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut z, b"<< /Type /Font /Subtype /Type1 >>").ok();
        let body = z.finish().unwrap_or_default();
        let text_pdf = [
            b"%PDF-1.7\n1 0 obj << /Type /ObjStm >> stream\n".as_slice(),
            &body,
            b"\nendstream\n",
        ]
        .concat();
        assert_eq!(picture(&text_pdf, Some(&text_pdf)), None);
        // Named by an instruction text in another format: a review; not named: nothing.
        let opaque: BTreeMap<String, Opaque> =
            [("docs/step.jpg".to_string(), Opaque::Picture("a JPEG image"))].into();
        let named = [(
            "docs/setup.txt".to_string(),
            "Do what step.jpg shows.".to_string(),
        )];
        assert_eq!(pictures(&opaque, &named).len(), 1);
        let unnamed = [("docs/setup.txt".to_string(), "Format as usual.".to_string())];
        assert!(pictures(&opaque, &unnamed).is_empty());
    }
}
