//! Document tools: converters and PDF utilities that skills for office documents run
//! (`pandoc`, the poppler tools, `qpdf`, LibreOffice in headless mode). Each reads its
//! input documents and writes the outputs it names; the options that make one of them
//! run other programs or code (`pandoc --filter`, `--lua-filter`, `--pdf-engine`,
//! `--defaults`; a LibreOffice macro URL) are executing arguments, and a form an entry
//! does not model answers `Unknown`.

use super::{Entry, Invocation, Opts, Outcome, parse_args};
use crate::model::Word;

pub(super) const ENTRIES: &[Entry] = &[
    Entry {
        names: &["pandoc"],
        classify: pandoc,
    },
    Entry {
        names: &["pdftoppm", "pdftocairo", "pdfimages"],
        classify: pdf_to_images,
    },
    Entry {
        names: &["pdftotext", "pdftohtml"],
        classify: pdftotext,
    },
    Entry {
        names: &["pdfinfo", "pdffonts", "pdfdetach", "pdfsig"],
        classify: pdfinfo,
    },
    Entry {
        names: &["pdfunite", "pdfseparate"],
        classify: pdfunite,
    },
    Entry {
        names: &["qpdf"],
        classify: qpdf,
    },
    Entry {
        names: &["pdftk"],
        classify: pdftk,
    },
    Entry {
        names: &["libreoffice", "soffice", "lowriter", "localc", "loimpress"],
        classify: soffice,
    },
];

/// Is the word a URL the program would fetch?
fn is_url(w: &Word) -> bool {
    let v = w.value.to_ascii_lowercase();
    v.starts_with("http://") || v.starts_with("https://") || v.starts_with("ftp://")
}

/// Read operands, fetching those that are URLs.
fn read_inputs(o: &mut Outcome, inputs: &[Word]) {
    for w in inputs {
        if is_url(w) {
            o.net(w);
            o.fetches = true;
        } else {
            o.reads([w]);
        }
    }
}

/// pandoc's options that take a value, so that no value is taken for an input.
const PANDOC_OPTS: Opts = Opts::gnu(
    "oftrwFLMVdcHBATD",
    &[
        "output",
        "from",
        "to",
        "read",
        "write",
        "filter",
        "lua-filter",
        "metadata",
        "variable",
        "defaults",
        "css",
        "include-in-header",
        "include-before-body",
        "include-after-body",
        "title-prefix",
        "print-default-template",
        "template",
        "reference-doc",
        "resource-path",
        "data-dir",
        "pdf-engine",
        "pdf-engine-opt",
        "extract-media",
        "bibliography",
        "csl",
        "citation-abbreviations",
        "syntax-definition",
        "highlight-style",
        "abbreviations",
        "epub-cover-image",
        "epub-metadata",
        "epub-embed-font",
        "metadata-file",
        "log",
        "request-header",
        "tab-stop",
        "columns",
        "dpi",
        "toc-depth",
        "shift-heading-level-by",
        "top-level-division",
        "email-obfuscation",
        "id-prefix",
        "number-offset",
        "wrap",
        "eol",
        "track-changes",
        "reference-location",
        "markdown-headings",
        "ipynb-output",
        "split-level",
        "chunk-template",
        "slide-level",
        "default-image-extension",
        "indented-code-classes",
        "epub-subdirectory",
        "epub-title-page",
    ],
);

/// Options whose value is a file (or URL) pandoc reads into the document or its
/// styling.
const PANDOC_INPUTS: &[&str] = &[
    "-c",
    "--css",
    "-H",
    "--include-in-header",
    "-B",
    "--include-before-body",
    "-A",
    "--include-after-body",
    "--template",
    "--reference-doc",
    "--bibliography",
    "--csl",
    "--citation-abbreviations",
    "--syntax-definition",
    "--abbreviations",
    "--epub-cover-image",
    "--epub-metadata",
    "--epub-embed-font",
    "--metadata-file",
];

fn pandoc(inv: &Invocation<'_>) -> Outcome {
    let p = parse_args(inv.args, &PANDOC_OPTS);
    // `pandoc lua` runs a Lua script or REPL; `pandoc server` serves HTTP.
    if p.operands
        .first()
        .is_some_and(|w| w.value == "lua" || w.value == "server")
    {
        return Outcome::unknown();
    }
    let mut o = Outcome::read_only();
    read_inputs(&mut o, &p.operands);
    for (name, value) in &p.opts {
        let Some(v) = value else { continue };
        match name.as_str() {
            "-o" | "--output" => o.writes([v]),
            "--extract-media" | "--log" => {
                o.writes([v]);
                o.fills([v]);
            }
            // A filter is a program pandoc runs with the document on its stdin; a Lua
            // filter is code pandoc runs itself; the PDF engine is a program it runs.
            "-F" | "--filter" => o.exec("pandoc", "--filter", &v.value),
            "-L" | "--lua-filter" => o.exec("pandoc", "--lua-filter", &v.value),
            "--pdf-engine" => o.exec("pandoc", "--pdf-engine", &v.value),
            // A defaults file can name filters, outputs and engines the command line
            // does not show.
            "-d" | "--defaults" => o.exec("pandoc", "--defaults", &v.value),
            n if PANDOC_INPUTS.contains(&n) => read_inputs(&mut o, std::slice::from_ref(v)),
            "--data-dir" | "--resource-path" => o.reads([v]),
            _ => {}
        }
    }
    o
}

/// The poppler tools' options that take a value (single-dash long names).
const POPPLER_VALUED: &[&str] = &[
    "-f",
    "-l",
    "-r",
    "-rx",
    "-ry",
    "-x",
    "-y",
    "-W",
    "-H",
    "-sz",
    "-scale-to",
    "-scale-to-x",
    "-scale-to-y",
    "-jpegopt",
    "-tiffcompression",
    "-freetype",
    "-thinlinemode",
    "-aa",
    "-aaVector",
    "-opw",
    "-upw",
    "-enc",
    "-eol",
    "-fixed",
    "-paper",
    "-paperw",
    "-paperh",
    "-origpagesizes",
    "-level",
    "-icc",
    "-zoom",
    "-fmt",
    "-nodrm",
    "-save",
    "-savefile",
    "-o",
    "-dump",
    "-nssdir",
    "-nss-pwd",
    "-sign",
    "-digest",
    "-reason",
    "-etsi",
    "-add-signature",
    "-new-signature-field-name",
    "-certificate",
    "-password",
];

/// Split poppler-style arguments: options (with values) and operands.
fn poppler_args(args: &[Word]) -> (Vec<(String, Option<Word>)>, Vec<Word>) {
    let mut opts = Vec::new();
    let mut operands = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a.value.starts_with('-') && a.value != "-" {
            let name = a.value.clone();
            if POPPLER_VALUED.contains(&name.as_str()) {
                opts.push((name, args.get(i + 1).cloned()));
                i += 2;
            } else {
                opts.push((name, None));
                i += 1;
            }
        } else {
            operands.push(a.clone());
            i += 1;
        }
    }
    (opts, operands)
}

/// The directory a tool fills with files whose names it builds from a root or pattern
/// it is given (`root-1.ppm`, `root-000.png`, `page-%d.pdf`).
fn root_dir(o: &mut Outcome, root: &Word) {
    let dir = match root.value.rsplit_once('/') {
        Some(("", _)) => "/".to_owned(),
        Some((d, _)) => d.to_owned(),
        None => ".".to_owned(),
    };
    let dir = Word {
        value: dir,
        literal: root.literal,
    };
    o.writes([&dir]);
    o.fills([&dir]);
}

/// `pdftoppm PDF [ROOT]`, `pdftocairo -png PDF [ROOT]`, `pdfimages PDF ROOT`.
fn pdf_to_images(inv: &Invocation<'_>) -> Outcome {
    let (opts, ops) = poppler_args(inv.args);
    let mut o = Outcome::read_only();
    if opts
        .iter()
        .any(|(n, _)| ["-v", "-h", "-help", "--help"].contains(&n.as_str()))
    {
        return o;
    }
    let Some(input) = ops.first() else {
        return Outcome::unknown();
    };
    o.reads([input]);
    if inv.name == "pdfimages" && opts.iter().any(|(n, _)| n == "-list") {
        return o;
    }
    if let Some(root) = ops.get(1).filter(|w| w.value != "-") {
        root_dir(&mut o, root);
    }
    if ops.len() > 2 {
        return Outcome::unknown();
    }
    o
}

/// `pdftotext PDF [OUT]` writes `OUT` (or `PDF` with `.txt`/`.html`); `-` is stdout.
fn pdftotext(inv: &Invocation<'_>) -> Outcome {
    let (_, ops) = poppler_args(inv.args);
    let mut o = Outcome::read_only();
    let Some(input) = ops.first() else {
        return o;
    };
    o.reads([input]);
    match ops.get(1) {
        Some(w) if w.value == "-" => {}
        Some(w) => o.writes([w]),
        None => {
            let ext = if inv.name == "pdftohtml" {
                "html"
            } else {
                "txt"
            };
            let stem = input
                .value
                .strip_suffix(".pdf")
                .or(input.value.strip_suffix(".PDF"))
                .unwrap_or(&input.value);
            o.writes([&Word {
                value: format!("{stem}.{ext}"),
                literal: input.literal,
            }]);
        }
    }
    if ops.len() > 2 {
        return Outcome::unknown();
    }
    o
}

/// `pdfinfo`, `pdffonts`: read-only reports; `pdfdetach -save…`/`pdfsig -add-signature`
/// write files.
fn pdfinfo(inv: &Invocation<'_>) -> Outcome {
    let (opts, ops) = poppler_args(inv.args);
    let mut o = Outcome::read_only();
    o.reads(&ops);
    for (n, v) in &opts {
        match (n.as_str(), v) {
            ("-o", Some(v)) => o.writes([v]),
            ("-saveall", _) | ("-save", _) | ("-savefile", _) => o.fills([&Word::literal(".")]),
            ("-add-signature", _) => {
                if let Some(out) = ops.get(1) {
                    o.writes([out]);
                } else {
                    return Outcome::unknown();
                }
            }
            _ => {}
        }
    }
    if o.effects.fills.iter().any(|w| w.value == ".") {
        o.mutate();
    }
    o
}

/// `pdfunite IN… OUT`; `pdfseparate IN PATTERN`.
fn pdfunite(inv: &Invocation<'_>) -> Outcome {
    let (_, ops) = poppler_args(inv.args);
    let [inputs @ .., out] = &ops[..] else {
        return Outcome::read_only();
    };
    let mut o = Outcome::read_only();
    o.reads(inputs);
    if inv.name == "pdfseparate" {
        root_dir(&mut o, out);
    } else {
        o.writes([out]);
    }
    o
}

/// `qpdf [OPTIONS] IN [OUT]`: reads every PDF it is given (`--pages A.pdf 1-3 --`),
/// writes OUT, or IN itself with `--replace-input`.
fn qpdf(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::read_only();
    let mut files = Vec::new();
    let mut replace = false;
    let mut empty = false;
    let mut split = false;
    let mut in_encrypt = false;
    let mut in_list = false;
    for w in inv.args {
        let a = w.value.as_str();
        if a == "--" {
            in_list = false;
            in_encrypt = false;
        } else if a == "--pages" || a.starts_with("--overlay") || a.starts_with("--underlay") {
            in_list = true;
        } else if a == "--empty" {
            empty = true;
        } else if a == "--replace-input" {
            replace = true;
        } else if a.starts_with("--split-pages") {
            split = true;
        } else if a == "--encrypt" {
            // `--encrypt USER OWNER BITS [options] --`: passwords, not files.
            in_encrypt = true;
        } else if in_encrypt {
            continue;
        } else if a == "--job-json-file" || a.starts_with("--job-json-file=") || a.starts_with('@')
        {
            // Takes its whole job (or more arguments) from a file.
            return Outcome::unknown();
        } else if a.starts_with("--") || (a.starts_with('-') && a != "-") {
            continue;
        } else if in_list {
            // Page lists (`1-3`, `z`) are not files; file names are.
            if a.contains('.') || a.contains('/') {
                o.reads([w]);
            }
        } else {
            files.push(w.clone());
        }
    }
    match (&files[..], replace) {
        ([input, out], false) if split => {
            // `out` is a pattern for one file per group of pages.
            o.reads([input]);
            root_dir(&mut o, out);
        }
        ([out], false) if empty => o.writes([out]),
        ([input], true) => {
            o.reads([input]);
            o.writes([input]);
        }
        ([input, out], false) => {
            o.reads([input]);
            if out.value != "-" {
                o.writes([out]);
            }
        }
        ([input], false) => o.reads([input]),
        ([], _) => {}
        _ => return Outcome::unknown(),
    }
    o
}

/// `pdftk IN… OPERATION … output OUT`: inputs (`A=in.pdf` handles too) up to the
/// operation; `output` names what it writes (`-` is stdout); `burst` and `unpack_files`
/// without `output` fill the working directory.
fn pdftk(inv: &Invocation<'_>) -> Outcome {
    const OPS: &[&str] = &[
        "cat",
        "shuffle",
        "burst",
        "rotate",
        "generate_fdf",
        "fill_form",
        "background",
        "multibackground",
        "stamp",
        "multistamp",
        "dump_data",
        "dump_data_utf8",
        "dump_data_fields",
        "dump_data_fields_utf8",
        "dump_data_annots",
        "update_info",
        "update_info_utf8",
        "attach_files",
        "unpack_files",
    ];
    let mut o = Outcome::read_only();
    let mut args = inv.args.iter();
    let mut op = None;
    for w in args.by_ref() {
        if OPS.contains(&w.value.as_str()) {
            op = Some(w.value.as_str());
            break;
        }
        if w.value == "input_pw" {
            // Passwords follow until the operation.
            continue;
        }
        let file = w.value.split_once('=').map_or(w.value.as_str(), |(_, f)| f);
        if file.contains('.') || file.contains('/') {
            o.reads([&Word {
                value: file.to_owned(),
                literal: w.literal,
            }]);
        }
    }
    let Some(op) = op else {
        return o;
    };
    let rest: Vec<&Word> = args.collect();
    let output = rest
        .iter()
        .position(|w| w.value == "output")
        .and_then(|i| rest.get(i + 1));
    // The file the operation reads: a background, a stamp, FDF data, info to set.
    if matches!(
        op,
        "background"
            | "multibackground"
            | "stamp"
            | "multistamp"
            | "fill_form"
            | "update_info"
            | "update_info_utf8"
    ) && let Some(w) = rest.first().filter(|w| w.value != "output")
    {
        o.reads([*w]);
    }
    match output {
        Some(w) if w.value == "-" => {}
        Some(w) => {
            o.writes([*w]);
            if op == "burst" || op == "unpack_files" {
                o.fills([*w]);
            }
        }
        None if op == "burst" || op == "unpack_files" => {
            let here = Word::literal(".");
            o.writes([&here]);
            o.fills([&here]);
        }
        None => {}
    }
    if op == "attach_files" {
        for w in rest
            .iter()
            .take_while(|w| !matches!(w.value.as_str(), "to_page" | "output"))
        {
            o.reads([*w]);
        }
    }
    o
}

/// LibreOffice headless: `soffice --headless --convert-to FMT [--outdir DIR] FILE…`
/// and `--cat`. It writes its user profile under `~/.config/libreoffice` unless
/// `-env:UserInstallation=file:///DIR` moves it. A macro URL (`macro:///…`,
/// `vnd.sun.star.script:…`) runs code; any other form (opening the GUI, printing) is
/// not modelled.
fn soffice(inv: &Invocation<'_>) -> Outcome {
    let mut o = Outcome::read_only();
    let mut convert = false;
    let mut cat = false;
    let mut init_only = false;
    let mut outdir: Option<Word> = None;
    let mut profile: Option<Word> = None;
    let mut inputs = Vec::new();
    let mut i = 0;
    while i < inv.args.len() {
        let w = &inv.args[i];
        let a = w.value.as_str();
        let lower = a.to_ascii_lowercase();
        if lower.starts_with("macro:") || lower.starts_with("vnd.sun.star.script:") {
            o.exec(inv.name, "macro", a);
        } else if let Some(dir) = a.strip_prefix("-env:UserInstallation=") {
            let dir = dir.strip_prefix("file://").unwrap_or(dir);
            profile = Some(Word {
                value: dir.to_owned(),
                literal: w.literal,
            });
        } else if a == "--convert-to" || a == "-convert-to" {
            convert = true;
            i += 1;
        } else if a == "--outdir" || a == "-outdir" {
            outdir = inv.args.get(i + 1).cloned();
            i += 1;
        } else if a == "--cat" || a == "-cat" {
            cat = true;
        } else if a == "--terminate_after_init" || a == "-terminate_after_init" {
            // Starts, creates its profile, and exits.
            init_only = true;
        } else if a.starts_with('-') {
            if !KNOWN_FLAGS.contains(&a.trim_start_matches('-').split('=').next().unwrap_or("")) {
                return Outcome::unknown();
            }
        } else {
            inputs.push(w.clone());
        }
        i += 1;
    }
    let macro_run = !o.effects.executes.is_empty();
    if !(convert || cat || macro_run || init_only) {
        return Outcome::unknown();
    }
    read_inputs(&mut o, &inputs);
    if convert {
        let dir = outdir.unwrap_or_else(|| Word::literal("."));
        o.writes([&dir]);
        o.fills([&dir]);
    }
    let profile = profile.unwrap_or_else(|| Word::literal("~/.config/libreoffice"));
    o.writes([&profile]);
    o.fills([&profile]);
    o
}

/// LibreOffice flags that change no files by themselves.
const KNOWN_FLAGS: &[&str] = &[
    "headless",
    "invisible",
    "nologo",
    "norestore",
    "nodefault",
    "nofirststartwizard",
    "nolockcheck",
    "minimized",
    "safe-mode",
    "writer",
    "calc",
    "impress",
    "draw",
    "infilter",
];
