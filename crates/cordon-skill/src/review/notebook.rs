//! Jupyter notebooks: the code cells, with IPython's `!cmd` lines as the shell commands
//! they are.

/// The code cells of a Jupyter notebook (cell number, source); a notebook that is not
/// JSON has none (its text is still searched for origins and secrets).
pub(super) fn cells(text: &str) -> Vec<(usize, String)> {
    let Ok(nb) = serde_json::from_str::<serde_json::Value>(text) else {
        return Vec::new();
    };
    let cells = nb
        .get("cells")
        .and_then(|c| c.as_array())
        .cloned()
        .unwrap_or_default();
    cells
        .iter()
        .enumerate()
        .filter(|(_, c)| c.get("cell_type").and_then(|t| t.as_str()) == Some("code"))
        .map(|(i, c)| {
            let src = match c.get("source") {
                Some(serde_json::Value::Array(lines)) => {
                    lines.iter().filter_map(|l| l.as_str()).collect::<String>()
                }
                Some(serde_json::Value::String(s)) => s.clone(),
                _ => String::new(),
            };
            // IPython's `!cmd` lines are shell commands.
            (
                i + 1,
                src.lines()
                    .map(|l| {
                        l.strip_prefix('!')
                            .map_or(l.to_string(), |c| format!("__import__('os').system({c:?})"))
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
            )
        })
        .collect()
}
