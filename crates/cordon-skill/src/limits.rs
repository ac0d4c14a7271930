//! Limits on what a package may unpack to, and the counting reader that enforces them on
//! the bytes a decompressor actually produces.

use std::io::{self, Read};

/// Upper bounds for one package. Defaults suit a skill (text and small scripts) with room
/// to spare; a package past any of them is refused, not truncated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Entries of any kind (files, directories, links).
    pub max_entries: u64,
    /// Bytes one file may unpack to.
    pub max_file_bytes: u64,
    /// Bytes the whole package may unpack to.
    pub max_total_bytes: u64,
    /// Bytes of one entry name.
    pub max_name_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_entries: 20_000,
            max_file_bytes: 100 << 20,
            max_total_bytes: 1 << 30,
            max_name_bytes: 1024,
        }
    }
}

/// Which limit a read ran into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Overrun {
    File,
    Total,
}

/// Reads at most `file_left` bytes of this entry and `total_left` of the package; one byte
/// past either is an error naming the limit, raised while reading, so a decompression bomb
/// stops after at most the limit plus one buffer.
pub(crate) struct Counted<'a, R> {
    inner: R,
    file_left: u64,
    total_left: &'a mut u64,
    pub(crate) read: u64,
    pub(crate) overrun: Option<Overrun>,
}

impl<'a, R: Read> Counted<'a, R> {
    pub(crate) fn new(inner: R, file_limit: u64, total_left: &'a mut u64) -> Self {
        Counted {
            inner,
            file_left: file_limit,
            total_left,
            read: 0,
            overrun: None,
        }
    }
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // Ask for one byte more than allowed, so that "exactly at the limit" passes and
        // "over it" is seen without reading further.
        let allowed = self.file_left.min(*self.total_left);
        let want = (buf.len() as u64).min(allowed.saturating_add(1));
        let want = usize::try_from(want).unwrap_or(buf.len());
        let n = self.inner.read(&mut buf[..want])?;
        let n64 = n as u64;
        if n64 > allowed {
            self.overrun = Some(if self.file_left <= *self.total_left {
                Overrun::File
            } else {
                Overrun::Total
            });
            return Err(io::Error::other("unpacked size limit reached"));
        }
        self.file_left -= n64;
        *self.total_left -= n64;
        self.read += n64;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stops_one_byte_past_the_file_limit() {
        let data = [0u8; 100];
        let mut total = 1000;
        let mut c = Counted::new(&data[..], 99, &mut total);
        let mut out = Vec::new();
        assert!(c.read_to_end(&mut out).is_err());
        assert_eq!(c.overrun, Some(Overrun::File));
    }

    #[test]
    fn exactly_at_the_limit_passes() {
        let data = [0u8; 100];
        let mut total = 100;
        let mut c = Counted::new(&data[..], 100, &mut total);
        let mut out = Vec::new();
        assert!(c.read_to_end(&mut out).is_ok());
        assert_eq!(out.len(), 100);
        assert_eq!(total, 0);
    }

    #[test]
    fn total_limit_is_shared() {
        let data = [0u8; 60];
        let mut total = 100;
        let mut out = Vec::new();
        assert!(
            Counted::new(&data[..], 1000, &mut total)
                .read_to_end(&mut out)
                .is_ok()
        );
        let mut c = Counted::new(&data[..], 1000, &mut total);
        assert!(c.read_to_end(&mut out).is_err());
        assert_eq!(c.overrun, Some(Overrun::Total));
    }
}
