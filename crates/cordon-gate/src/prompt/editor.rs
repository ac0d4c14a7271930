//! Editing a tool call's input in the user's editor, for the "edit" answer.
//!
//! The input is written as pretty JSON to a private temporary file, the editor named by
//! `$VISUAL` or `$EDITOR` (else `vi`) runs on the terminal, and the file is read back. The
//! result must be a JSON object; anything else is an error and nothing is approved.

use std::io::{self, Write};
use std::process::Command;

use serde_json::{Map, Value};

/// The largest edited input read back.
const MAX_EDITED_BYTES: u64 = 1 << 20;

/// Let the human edit `input`. `Ok(None)` when the file came back unchanged.
pub(crate) fn edit_input(input: &Map<String, Value>) -> io::Result<Option<Map<String, Value>>> {
    let editor = std::env::var("VISUAL")
        .ok()
        .filter(|e| !e.trim().is_empty())
        .or_else(|| {
            std::env::var("EDITOR")
                .ok()
                .filter(|e| !e.trim().is_empty())
        })
        .unwrap_or_else(|| "vi".to_string());
    edit_input_with(&editor, input)
}

/// [`edit_input`] with this editor command.
fn edit_input_with(
    editor: &str,
    input: &Map<String, Value>,
) -> io::Result<Option<Map<String, Value>>> {
    let mut file = tempfile::Builder::new()
        .prefix("cordon-edit-")
        .suffix(".json")
        .tempfile()?;
    let before = serde_json::to_string_pretty(&Value::Object(input.clone()))
        .map_err(|e| io::Error::other(format!("the input cannot be written as JSON: {e}")))?;
    file.write_all(before.as_bytes())?;
    file.write_all(b"\n")?;
    file.flush()?;
    // The editor command may carry arguments (`code -w`), so the shell splits it; the
    // file name is passed as a positional parameter, never spliced into the text.
    let status = Command::new("/bin/sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(file.path())
        .status()
        .map_err(|e| io::Error::other(format!("the editor `{editor}` could not start: {e}")))?;
    if !status.success() {
        return Err(io::Error::other(format!(
            "the editor `{editor}` failed ({status}); nothing was changed"
        )));
    }
    // The editor may have put anything at the path: only a regular file of at most
    // MAX_EDITED_BYTES is read, never a FIFO that would block.
    let after = cordon_fs::read_regular_text(file.path(), MAX_EDITED_BYTES).map_err(|e| {
        io::Error::other(format!(
            "the edited input could not be read (at most {MAX_EDITED_BYTES} bytes of UTF-8 text): {e}"
        ))
    })?;
    let value: Value = serde_json::from_str(&after)
        .map_err(|e| io::Error::other(format!("the edited input is not valid JSON: {e}")))?;
    let Value::Object(edited) = value else {
        return Err(io::Error::other("the edited input must be a JSON object"));
    };
    Ok((&edited != input).then_some(edited))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn editor_output_is_read_back_and_checked() {
        let input: Map<String, Value> =
            serde_json::from_str(r#"{"command": "rm -rf build"}"#).unwrap();
        let cases = [
            ("sed -i 's/rm -rf build/ls build/'", Ok(Some("ls build"))),
            ("true", Ok(None)),
            ("sh -c 'echo [1] > \"$0\"'", Err("must be a JSON object")),
            ("sh -c 'echo nope > \"$0\"'", Err("not valid JSON")),
            ("false", Err("failed")),
        ];
        for (editor, want) in cases {
            let got = edit_input_with(editor, &input);
            match (got, want) {
                (Ok(Some(m)), Ok(Some(cmd))) => assert_eq!(m["command"], cmd, "{editor}"),
                (Ok(None), Ok(None)) => {}
                (Err(e), Err(part)) => assert!(e.to_string().contains(part), "{editor}: {e}"),
                (got, _) => panic!("{editor}: unexpected {got:?}"),
            }
        }
    }
}
