//! Document tools (`pandoc`, the poppler tools, `qpdf`, LibreOffice headless) are known
//! programs: what they read, write and run is named, and the options that run other code
//! are executing arguments.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test harness code

use cordon_shell::{Class, Effects, analyze};

fn effects(cmd: &str) -> Effects {
    let a = analyze(cmd);
    assert!(a.parse_error.is_none(), "{cmd}: {:?}", a.parse_error);
    a.commands.into_iter().next().expect("one command").effects
}

fn values(ws: &[cordon_shell::Word]) -> Vec<&str> {
    ws.iter().map(|w| w.value.as_str()).collect()
}

#[test]
fn pandoc_converts_reads_and_writes() {
    let e = effects("pandoc report.md -o out/report.docx --reference-doc=tpl.docx");
    assert_eq!(e.class, Class::Mutating);
    assert_eq!(values(&e.reads), ["report.md", "tpl.docx"]);
    assert_eq!(values(&e.writes), ["out/report.docx"]);
    assert!(e.executes.is_empty());
    // Reading to stdout only reads.
    let e = effects("pandoc --track-changes=all doc.docx -t markdown");
    assert_eq!(e.class, Class::ReadOnly);
    assert_eq!(values(&e.reads), ["doc.docx"]);
}

#[test]
fn pandoc_filters_and_engines_run_code() {
    for cmd in [
        "pandoc a.md --filter ./f.py -o a.html",
        "pandoc a.md -F./f.py",
        "pandoc a.md --lua-filter=x.lua",
        "pandoc a.md --pdf-engine=/tmp/evil -o a.pdf",
        "pandoc -d defaults.yaml",
    ] {
        let e = effects(cmd);
        assert!(!e.executes.is_empty(), "{cmd}: {e:?}");
        assert_eq!(e.class, Class::Mutating, "{cmd}");
    }
    let e = effects("pandoc https://evil.example/x.md");
    assert!(!e.network.is_empty(), "{e:?}");
    assert_eq!(effects("pandoc server").class, Class::Unknown);
}

#[test]
fn poppler_tools() {
    let e = effects("pdftoppm -png -r 150 in.pdf pages/p");
    assert_eq!(values(&e.reads), ["in.pdf"]);
    assert_eq!(values(&e.writes), ["pages"]);
    assert_eq!(values(&e.fills), ["pages"]);
    let e = effects("pdftoppm -jpeg in.pdf page");
    assert_eq!(values(&e.writes), ["."]);
    let e = effects("pdftotext in.pdf");
    assert_eq!(values(&e.writes), ["in.txt"]);
    let e = effects("pdftotext -layout in.pdf -");
    assert_eq!(e.class, Class::ReadOnly);
    let e = effects("pdftotext in.pdf out.txt");
    assert_eq!(values(&e.writes), ["out.txt"]);
    let e = effects("pdfinfo in.pdf");
    assert_eq!(e.class, Class::ReadOnly);
    let e = effects("pdfunite a.pdf b.pdf all.pdf");
    assert_eq!(values(&e.reads), ["a.pdf", "b.pdf"]);
    assert_eq!(values(&e.writes), ["all.pdf"]);
}

#[test]
fn qpdf_forms() {
    let e = effects("qpdf --empty --pages a.pdf 1-3 b.pdf -- out.pdf");
    assert_eq!(values(&e.reads), ["a.pdf", "b.pdf"]);
    let e = effects("qpdf in.pdf --decrypt out.pdf");
    assert_eq!(values(&e.reads), ["in.pdf"]);
    assert_eq!(values(&e.writes), ["out.pdf"]);
    let e = effects("qpdf --replace-input --linearize in.pdf");
    assert_eq!(values(&e.writes), ["in.pdf"]);
    assert_eq!(effects("qpdf --check in.pdf").class, Class::ReadOnly);
    let e = effects("qpdf --split-pages=3 input.pdf out/group_%02d.pdf");
    assert_eq!(values(&e.fills), ["out"]);
    let e = effects("qpdf --encrypt u o 256 --print=none -- in.pdf enc.pdf");
    assert_eq!(values(&e.reads), ["in.pdf"]);
    assert_eq!(values(&e.writes), ["enc.pdf"]);
    assert_eq!(effects("qpdf @args.txt").class, Class::Unknown);
}

#[test]
fn libreoffice_headless_convert() {
    let e = effects("soffice --headless --convert-to pdf --outdir out a.docx");
    assert_eq!(values(&e.reads), ["a.docx"]);
    assert!(values(&e.writes).contains(&"out"), "{e:?}");
    // The user profile is written too, unless it is moved.
    assert!(
        values(&e.writes).contains(&"~/.config/libreoffice"),
        "{e:?}"
    );
    let e = effects(
        "libreoffice -env:UserInstallation=file:///tmp/lo --headless --convert-to pdf a.xlsx",
    );
    assert!(values(&e.writes).contains(&"/tmp/lo"), "{e:?}");
    assert!(
        !values(&e.writes).contains(&"~/.config/libreoffice"),
        "{e:?}"
    );
    // A macro URL runs code; an unmodelled form is unknown.
    let e = effects("soffice --headless 'macro:///Standard.Module1.Evil' --convert-to pdf a.odt");
    assert!(!e.executes.is_empty(), "{e:?}");
    assert_eq!(effects("soffice a.docx").class, Class::Unknown);
    let e = effects(
        "soffice --headless --norestore 'vnd.sun.star.script:Standard.Module1.X?language=Basic' out.docx",
    );
    assert!(!e.executes.is_empty(), "{e:?}");
    assert_eq!(e.class, Class::Mutating);
    let e = effects("soffice --headless --terminate_after_init");
    assert_eq!(values(&e.writes), ["~/.config/libreoffice"]);
}

#[test]
fn pdftk_forms() {
    let e = effects("pdftk A=in1.pdf B=in2.pdf cat A1-3 B2 output out.pdf");
    assert_eq!(values(&e.reads), ["in1.pdf", "in2.pdf"]);
    assert_eq!(values(&e.writes), ["out.pdf"]);
    assert_eq!(effects("pdftk in.pdf dump_data").class, Class::ReadOnly);
    let e = effects("pdftk in.pdf burst");
    assert_eq!(values(&e.writes), ["."]);
    let e = effects("pdftk in.pdf stamp mark.pdf output - ");
    assert_eq!(values(&e.reads), ["in.pdf", "mark.pdf"]);
    assert!(e.writes.is_empty());
}
