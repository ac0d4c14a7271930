//! The pieces of strace's syntax: file descriptor decorations, socket addresses, one
//! call line, quoted strings and arrays, and the lexical clean of a path.

use super::*;

/// `3</path>` → `/path`; `AT_FDCWD</path>` → `/path`.
pub(super) fn decoration(arg: &str) -> Option<String> {
    let open = arg.find('<')?;
    let inner = arg[open + 1..].strip_suffix('>')?;
    let inner = inner.strip_suffix(" (deleted)").unwrap_or(inner);
    if inner.starts_with('/') {
        Some(unescape_plain(inner))
    } else {
        None
    }
}

/// A socket address as strace prints it.
pub(super) fn peer(addr: &str) -> Option<Peer> {
    let field = |key: &str| -> Option<&str> {
        let i = addr.find(key)? + key.len();
        let rest = &addr[i..];
        let end = rest.find([',', '}']).unwrap_or(rest.len());
        Some(&rest[..end])
    };
    if addr.contains("sa_family=AF_INET6") {
        let port = field("sin6_port=htons(")?
            .trim_end_matches(')')
            .parse()
            .ok()?;
        let i = addr.find("inet_pton(AF_INET6, ")? + "inet_pton(AF_INET6, ".len();
        let (ip, _) = unquote(&addr[i..]);
        let ip: IpAddr = String::from_utf8_lossy(&ip).parse().ok()?;
        Some(Peer::Inet(ip, port))
    } else if addr.contains("sa_family=AF_INET") {
        let port = field("sin_port=htons(")?
            .trim_end_matches(')')
            .parse()
            .ok()?;
        let i = addr.find("inet_addr(")? + "inet_addr(".len();
        let (ip, _) = unquote(&addr[i..]);
        let ip: IpAddr = String::from_utf8_lossy(&ip).parse().ok()?;
        Some(Peer::Inet(ip, port))
    } else if addr.contains("sa_family=AF_UNIX") {
        let i = addr.find("sun_path=")? + "sun_path=".len();
        let rest = &addr[i..];
        let (abstract_, rest) = match rest.strip_prefix('@') {
            Some(r) => ("@", r),
            None => ("", rest),
        };
        let (p, _) = unquote(rest);
        Some(Peer::Unix(format!(
            "{abstract_}{}",
            String::from_utf8_lossy(&p)
        )))
    } else {
        None
    }
}

pub(super) fn ok(result: &str) -> bool {
    let r = result.trim_start();
    !(r.starts_with('-') || r.starts_with('?'))
}

/// `PID  rest` → (pid, rest).
pub(super) fn split_pid(line: &str) -> Option<(u32, &str)> {
    let (pid, rest) = line.split_once(' ')?;
    Some((pid.parse().ok()?, rest.trim_start()))
}

/// `name(arg, arg, …) = result` → a record. Arguments are split at top-level commas,
/// respecting quotes, brackets and `-y` decorations.
pub(super) fn parse_call(pid: u32, text: &str) -> Option<Record> {
    let open = text.find('(')?;
    let name = text[..open].to_string();
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return None;
    }
    let bytes = text.as_bytes();
    let mut args = Vec::new();
    let mut depth = 0i32;
    let mut in_str = false;
    let mut in_deco = false;
    let mut cur = String::new();
    let mut i = open + 1;
    let mut end = None;
    while i < bytes.len() {
        let c = bytes[i] as char;
        if in_str {
            cur.push(c);
            if c == '\\' && i + 1 < bytes.len() {
                cur.push(bytes[i + 1] as char);
                i += 2;
                continue;
            }
            if c == '"' {
                in_str = false;
            }
        } else if in_deco {
            cur.push(c);
            if c == '>' {
                in_deco = false;
            }
        } else {
            match c {
                '"' => {
                    in_str = true;
                    cur.push(c);
                }
                // `-y` prints a descriptor as `3</path>`: a `<` right after an argument
                // that is a bare number (or AT_FDCWD), not a shift such as `1<<TCP_CLOSE`.
                '<' if is_fd_token(cur.trim()) && bytes.get(i + 1) != Some(&b'<') => {
                    in_deco = true;
                    cur.push(c);
                }
                '(' | '[' | '{' => {
                    depth += 1;
                    cur.push(c);
                }
                ')' | ']' | '}' if depth > 0 => {
                    depth -= 1;
                    cur.push(c);
                }
                ')' => {
                    end = Some(i);
                    break;
                }
                ',' if depth == 0 => {
                    args.push(std::mem::take(&mut cur).trim().to_string());
                }
                _ => cur.push(c),
            }
        }
        i += 1;
    }
    let end = end?;
    if !cur.trim().is_empty() {
        args.push(cur.trim().to_string());
    }
    // Multi-byte characters were pushed byte by byte above; rebuild each argument from
    // its bytes so that decorations with UTF-8 names survive.
    let args = args
        .into_iter()
        .map(|a| {
            String::from_utf8_lossy(&a.chars().map(|c| c as u8).collect::<Vec<_>>()).into_owned()
        })
        .collect();
    let result = text[end + 1..]
        .trim_start()
        .strip_prefix('=')?
        .trim()
        .to_string();
    Some(Record {
        pid,
        name,
        args,
        result,
    })
}

/// An argument that is a file descriptor number or `AT_FDCWD`.
pub(super) fn is_fd_token(t: &str) -> bool {
    t == "AT_FDCWD" || (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
}

/// A C string as strace prints it (`"a\nb\303\251"...`) → its bytes, and whether strace
/// cut it short.
pub fn unquote(s: &str) -> (Vec<u8>, bool) {
    let s = s.trim_start();
    let Some(body) = s.strip_prefix('"') else {
        return (s.as_bytes().to_vec(), false);
    };
    let b = body.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                let truncated = body[i + 1..].starts_with("...");
                return (out, truncated);
            }
            b'\\' if i + 1 < b.len() => {
                i += 1;
                match b[i] {
                    b'n' => out.push(b'\n'),
                    b't' => out.push(b'\t'),
                    b'r' => out.push(b'\r'),
                    b'v' => out.push(0x0b),
                    b'f' => out.push(0x0c),
                    b'x' => {
                        let h = std::str::from_utf8(&b[i + 1..(i + 3).min(b.len())]).unwrap_or("");
                        out.push(u8::from_str_radix(h, 16).unwrap_or(b'?'));
                        i += 2;
                    }
                    b'0'..=b'7' => {
                        let mut v = 0u32;
                        let mut n = 0;
                        while n < 3 && i < b.len() && (b'0'..=b'7').contains(&b[i]) {
                            v = v * 8 + u32::from(b[i] - b'0');
                            i += 1;
                            n += 1;
                        }
                        out.push(v as u8);
                        continue;
                    }
                    c => out.push(c),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    (out, false)
}

/// A decoration's path: strace escapes only unprintable bytes there.
pub(super) fn unescape_plain(s: &str) -> String {
    if !s.contains('\\') {
        return s.to_string();
    }
    let (b, _) = unquote(&format!("\"{}\"", s.replace('"', "\\\"")));
    String::from_utf8_lossy(&b).into_owned()
}

/// `["ls", "-la"]` → the strings.
pub(super) fn string_array(s: &str) -> Vec<String> {
    let inner = s.trim().trim_start_matches('[').trim_end_matches(']');
    let mut out = Vec::new();
    let mut rest = inner;
    while let Some(i) = rest.find('"') {
        let (bytes, _) = unquote(&rest[i..]);
        out.push(String::from_utf8_lossy(&bytes).into_owned());
        // Skip past this string: find its closing quote.
        let b = rest.as_bytes();
        let mut j = i + 1;
        while j < b.len() {
            if b[j] == b'\\' {
                j += 2;
                continue;
            }
            if b[j] == b'"' {
                break;
            }
            j += 1;
        }
        rest = &rest[(j + 1).min(rest.len())..];
    }
    out
}

/// Lexical clean of an absolute path.
pub fn clean(p: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(s) => out.push(s),
            _ => {}
        }
    }
    out
}
