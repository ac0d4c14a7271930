//! Reading a log's lines with bounds: no line longer than [`MAX_LINE`] is ever read
//! whole, and nothing is allocated by the file's size, so a sparse hole or a forged
//! giant line is a break to report, not a reason to exhaust memory.

use std::fs::File;
use std::io::{BufRead, Read, Seek, SeekFrom};
use std::path::Path;

/// Open `path` for reading without following a symlink at its last component and
/// without blocking (a FIFO put at the log's path would hang a reader forever): anything
/// but a regular file is refused, as writers refuse it.
pub(crate) fn open_regular(path: &Path) -> std::io::Result<File> {
    let name = path.file_name().ok_or_else(|| {
        std::io::Error::new(std::io::ErrorKind::InvalidInput, "the path names no file")
    })?;
    cordon_fs::Dir::open_ambient(crate::paths::parent_of(path))
        .and_then(|d| d.open_read(Path::new(name)))
        .map_err(|e| {
            let kind = if e.is_not_found() {
                std::io::ErrorKind::NotFound
            } else {
                std::io::ErrorKind::InvalidInput
            };
            std::io::Error::new(kind, e.to_string())
        })
}

/// The longest line a reader or writer of a log takes in (1 MiB): a longer one is not a
/// record cordon wrote, and reading it whole would let a sparse hole at the end of the
/// file (`truncate -s +64G`) exhaust memory.
pub(crate) const MAX_LINE: usize = 1 << 20;

/// One line read with [`read_line`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineRead {
    /// The end of the file.
    Eof,
    /// A complete line of this many bytes (its newline included) is in the buffer.
    Complete(usize),
    /// The file ends before the line's newline.
    Partial,
    /// No newline within [`MAX_LINE`] bytes: the buffer holds that much of it.
    TooLong,
}

/// Read one line into `buf` (cleared first), never more than [`MAX_LINE`] + 1 bytes.
pub(crate) fn read_line(reader: &mut impl BufRead, buf: &mut Vec<u8>) -> std::io::Result<LineRead> {
    buf.clear();
    let n = reader
        .by_ref()
        .take(MAX_LINE as u64 + 1)
        .read_until(b'\n', buf)?;
    Ok(if n == 0 {
        LineRead::Eof
    } else if buf.last() == Some(&b'\n') {
        LineRead::Complete(n)
    } else if n > MAX_LINE {
        LineRead::TooLong
    } else {
        LineRead::Partial
    })
}

/// What [`read_last_line`] found.
#[derive(Debug)]
pub(crate) enum LastLine {
    /// The length of the file up to and including the last newline, and that last
    /// complete line (without its newline), or `None` when there is no complete line.
    Found(u64, Option<Vec<u8>>),
    /// No newline within [`MAX_LINE`] bytes of the end, or a last line longer than that.
    TooLong,
}

/// Read backwards from `len` to find the last complete line, never more than twice
/// [`MAX_LINE`] bytes (a torn tail and a line each at most that long).
pub(crate) fn read_last_line(file: &mut File, len: u64) -> std::io::Result<LastLine> {
    let cap = 2 * (MAX_LINE as u64 + 1);
    let mut chunk = 4096u64;
    loop {
        let start = len.saturating_sub(chunk);
        let mut buf = vec![0u8; usize::try_from(len - start).unwrap_or(0)];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut buf)?;
        // End of the complete part: just past the last newline.
        let Some(last_nl) = buf.iter().rposition(|&b| b == b'\n') else {
            if start == 0 {
                return Ok(LastLine::Found(0, None));
            }
            if len - start > MAX_LINE as u64 {
                return Ok(LastLine::TooLong);
            }
            chunk = chunk.saturating_mul(4).min(cap);
            continue;
        };
        let complete_len = start + last_nl as u64 + 1;
        if len - complete_len > MAX_LINE as u64 {
            return Ok(LastLine::TooLong);
        }
        match buf[..last_nl].iter().rposition(|&b| b == b'\n') {
            Some(prev_nl) => {
                return Ok(LastLine::Found(
                    complete_len,
                    Some(buf[prev_nl + 1..last_nl].to_vec()),
                ));
            }
            None if start == 0 => {
                return Ok(LastLine::Found(complete_len, Some(buf[..last_nl].to_vec())));
            }
            None if chunk >= cap => return Ok(LastLine::TooLong),
            None => chunk = chunk.saturating_mul(4).min(cap),
        }
    }
}
