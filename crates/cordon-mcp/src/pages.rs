//! The gateway's own `tools/list`, page by page, bounded.
//!
//! The gateway asks the server for its whole tool list (to check it against the pins)
//! and follows `nextCursor` from page to page, keeping the tools read so far in the
//! in-flight entry of the next request. The server decides how many pages there are
//! and how large each is, so the pages are bounded three ways: at most [`MAX_PAGES`]
//! pages, [`MAX_TOOLS`] tools and [`MAX_BYTES`] bytes of tools (as JSON) in all. Past
//! any of them the list is refused as a whole: every tool is withheld, with the reason,
//! as when the list cannot be read. (Found while the fuzz target `mcp` was given the
//! in-flight bound to check: the pages were bounded by a count of tools only, so a
//! server answering every page with a next cursor and no tools kept the gateway paging
//! without end, and one sending large pages grew the entry without a bound on bytes.)

use serde_json::Value;

/// The most pages of one tool list.
pub const MAX_PAGES: usize = 1_000;
/// The most tools in one tool list.
pub const MAX_TOOLS: usize = 100_000;
/// The most bytes of tools (written as JSON) in one tool list: one frame's worth.
pub const MAX_BYTES: usize = crate::frame::MAX_FRAME;

/// Bounds on one tool list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// Pages.
    pub pages: usize,
    /// Tools.
    pub tools: usize,
    /// Bytes of tools, as JSON.
    pub bytes: usize,
}

/// The gateway's bounds.
pub const BOUNDS: Bounds = Bounds {
    pages: MAX_PAGES,
    tools: MAX_TOOLS,
    bytes: MAX_BYTES,
};

/// The pages of one tool list read so far.
#[derive(Debug)]
pub struct ToolPages {
    tools: Vec<Value>,
    pages: usize,
    bytes: usize,
    bounds: Bounds,
}

/// What to do after a page.
#[derive(Debug, PartialEq)]
pub enum Next {
    /// Ask for the page at this cursor.
    Fetch(Value),
    /// The list is whole: these tools.
    Done(Vec<Value>),
    /// The list is refused as a whole, for this reason.
    TooLarge(String),
}

/// Counts the bytes written to it.
struct Count(usize);

impl std::io::Write for Count {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0 = self.0.saturating_add(b.len());
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Default for ToolPages {
    fn default() -> Self {
        ToolPages::bounded(BOUNDS)
    }
}

impl ToolPages {
    /// No page read yet, within `bounds`.
    pub fn bounded(bounds: Bounds) -> Self {
        ToolPages {
            tools: Vec::new(),
            pages: 0,
            bytes: 0,
            bounds,
        }
    }

    /// Pages read so far.
    pub fn pages(&self) -> usize {
        self.pages
    }

    /// Tools read so far.
    pub fn tools(&self) -> &[Value] {
        &self.tools
    }

    /// Bytes of the tools read so far, as JSON.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Add the page `result` (a `tools/list` result) and say what comes next.
    pub fn add(&mut self, result: &Value) -> Next {
        self.pages += 1;
        if let Some(tools) = result.get("tools").and_then(Value::as_array) {
            let mut count = Count(0);
            let _ = serde_json::to_writer(&mut count, tools);
            self.bytes = self.bytes.saturating_add(count.0);
            if self.bytes > self.bounds.bytes
                || self.tools.len().saturating_add(tools.len()) > self.bounds.tools
            {
                self.tools.clear();
                return Next::TooLarge(format!(
                    "the server's tool list is larger than the gateway accepts ({} tools, {} bytes)",
                    self.bounds.tools, self.bounds.bytes
                ));
            }
            self.tools.extend(tools.iter().cloned());
        }
        match result.get("nextCursor") {
            Some(c) if !c.is_null() => {
                if self.pages >= self.bounds.pages {
                    self.tools.clear();
                    return Next::TooLarge(format!(
                        "the server's tool list runs to more than {} pages",
                        self.bounds.pages
                    ));
                }
                Next::Fetch(c.clone())
            }
            _ => Next::Done(std::mem::take(&mut self.tools)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pages_are_followed_and_joined() {
        let mut p = ToolPages::default();
        let c = json!("c1");
        assert_eq!(
            p.add(&json!({"tools": [{"name": "a"}], "nextCursor": c})),
            Next::Fetch(c)
        );
        assert_eq!(
            p.add(&json!({"tools": [{"name": "b"}], "nextCursor": null})),
            Next::Done(vec![json!({"name": "a"}), json!({"name": "b"})])
        );
    }

    #[test]
    fn endless_empty_pages_stop_at_the_page_bound() {
        let mut p = ToolPages::default();
        let mut n = 0;
        let end = loop {
            n += 1;
            match p.add(&json!({"tools": [], "nextCursor": n})) {
                Next::Fetch(_) => assert!(n < MAX_PAGES, "still paging after {n} pages"),
                other => break other,
            }
        };
        assert_eq!(n, MAX_PAGES);
        assert!(matches!(end, Next::TooLarge(_)), "{end:?}");
    }

    #[test]
    fn large_pages_stop_at_the_byte_bound_and_many_tools_at_the_tool_bound() {
        let bounds = Bounds {
            pages: 100,
            tools: 5,
            bytes: 1000,
        };
        let mut p = ToolPages::bounded(bounds);
        let big = json!({"tools": [{"name": "x".repeat(600)}], "nextCursor": 1});
        assert!(matches!(p.add(&big), Next::Fetch(_)));
        assert!(matches!(p.add(&big), Next::TooLarge(_)));
        assert!(p.tools().is_empty(), "a refused list keeps nothing");
        let mut p = ToolPages::bounded(bounds);
        let three = json!({"tools": [{}, {}, {}], "nextCursor": 1});
        assert!(matches!(p.add(&three), Next::Fetch(_)));
        assert!(matches!(p.add(&three), Next::TooLarge(_)));
        // The bound is a limit, not a cut: a list of exactly the bound passes.
        let mut p = ToolPages::bounded(bounds);
        let five = json!({"tools": [{}, {}, {}, {}, {}]});
        assert!(matches!(p.add(&five), Next::Done(t) if t.len() == 5));
    }
}
