//! The terminal prompter: writes the question to one stream (stderr) and reads the
//! answer from another (the terminal on stdin).
//!
//! Everything shown comes from the request, which an attacker may have written: control
//! characters are escaped so that a target cannot move the cursor, clear the screen or
//! repaint the choices. Input typed before the question appeared is discarded.

use std::io::{self, BufRead, IsTerminal, Write};
use std::os::fd::AsFd;

use cordon_policy::terminal::sanitize_for_terminal;

use cordon_store::{Choice, PromptOutcome, Prompter, Question};

/// How many unreadable answers are tolerated before the prompt gives up with "deny".
const MAX_ATTEMPTS: usize = 3;

fn key(choice: Choice) -> String {
    match choice {
        Choice::AllowOnce => "o".into(),
        Choice::AllowSession => "s".into(),
        Choice::AlwaysAllow => "a".into(),
        Choice::AlwaysAllowOption(i) => format!("a{}", i + 1),
        Choice::Edit => "e".into(),
        Choice::Deny => "d".into(),
    }
}

/// Asks on a terminal. Build it with [`TerminalPrompter::from_stdio`] for the real
/// terminal, or with [`TerminalPrompter::new`] over any pair of streams.
pub struct TerminalPrompter<R, W> {
    input: R,
    output: W,
    flush_stdin: bool,
    /// Reset the terminal's character attributes before each question.
    reset_attributes: bool,
}

impl TerminalPrompter<io::StdinLock<'static>, io::Stderr> {
    /// The prompter for this process's terminal, or `None` unless both stdin and stderr
    /// are terminals (a human can only be asked when both are).
    pub fn from_stdio() -> Option<Self> {
        if !(io::stdin().is_terminal() && io::stderr().is_terminal()) {
            return None;
        }
        Some(TerminalPrompter {
            input: io::stdin().lock(),
            output: io::stderr(),
            flush_stdin: true,
            reset_attributes: true,
        })
    }
}

impl<R: BufRead, W: Write> TerminalPrompter<R, W> {
    /// A prompter reading answers from `input` and writing questions to `output`.
    pub fn new(input: R, output: W) -> Self {
        TerminalPrompter {
            input,
            output,
            flush_stdin: false,
            reset_attributes: false,
        }
    }

    /// The same, resetting the character attributes the output was left with before
    /// each question, as on a real terminal.
    pub fn resetting_attributes(mut self) -> Self {
        self.reset_attributes = true;
        self
    }

    fn render(&mut self, q: &Question<'_>) -> io::Result<()> {
        let c = q.context;
        let s = sanitize_for_terminal;
        let mut text = String::new();
        if self.reset_attributes {
            // A terminal a command may have left concealing text.
            text.push_str(cordon_policy::terminal::RESET_ATTRIBUTES);
        }
        text.push_str("\ncordon: approval needed\n");
        text.push_str(&format!("  tool:        {}\n", s(&c.tool)));
        text.push_str(&format!("  target:      {}\n", s(&c.target)));
        if !c.consequence.is_empty() {
            text.push_str(&format!("  consequence: {}\n", s(&c.consequence)));
        }
        if !c.reason.is_empty() {
            text.push_str(&format!("  reason:      {}\n", s(&c.reason)));
        }
        // The files the call runs, as they are now (the approval is bound to them), and
        // the first lines of those the session wrote.
        let runs = &c.verdict["runs"];
        for f in runs["files"].as_array().into_iter().flatten() {
            let written = if f["written"] == true {
                " (written in the session)"
            } else {
                ""
            };
            text.push_str(&format!(
                "  runs:        {}{written}: {}\n",
                s(f["path"].as_str().unwrap_or("?")),
                s(f["state"].as_str().unwrap_or("?"))
            ));
            if let Some(head) = f["head"].as_str() {
                for line in head.lines() {
                    text.push_str(&format!("               | {}\n", s(line)));
                }
            }
        }
        for n in runs["notes"].as_array().into_iter().flatten() {
            text.push_str(&format!(
                "  runs:        {}\n",
                s(n.as_str().unwrap_or("?"))
            ));
        }
        let options = c.rule_options();
        for choice in &q.choices {
            let line = match choice {
                Choice::AllowOnce => "allow once".to_string(),
                Choice::AllowSession => format!(
                    "allow for this session ({})",
                    s(c.session.as_deref().unwrap_or_default())
                ),
                Choice::AlwaysAllow => format!(
                    "always allow this exact call, saving the rule {}",
                    s(options.first().map(|o| o.rule.as_str()).unwrap_or_default())
                ),
                Choice::AlwaysAllowOption(i) => {
                    let o = options.get(*i);
                    format!(
                        "always allow, saving the wider rule {}, which also allows e.g. {}",
                        s(o.map(|o| o.rule.as_str()).unwrap_or_default()),
                        s(o.and_then(|o| o.example.as_deref()).unwrap_or("?"))
                    )
                }
                Choice::Edit => {
                    "edit the input (opens $VISUAL or $EDITOR), then judge it again".to_string()
                }
                Choice::Deny => "deny".to_string(),
            };
            text.push_str(&format!("  [{}] {}\n", key(*choice), line));
        }
        self.output.write_all(text.as_bytes())?;
        self.output.flush()
    }

    fn prompt_line(&mut self, q: &Question<'_>) -> io::Result<()> {
        let keys: Vec<String> = q.choices.iter().map(|c| key(*c)).collect();
        // One write, so the line appears whole.
        let reset = if self.reset_attributes {
            cordon_policy::terminal::RESET_ATTRIBUTES
        } else {
            ""
        };
        let line = format!("{reset}choose [{}]: ", keys.join("/"));
        self.output.write_all(line.as_bytes())?;
        self.output.flush()
    }
}

fn parse_answer(line: &str, offered: &[Choice]) -> Option<Choice> {
    let word = line.trim().to_ascii_lowercase();
    let choice = match word.as_str() {
        "o" | "once" | "allow once" => Choice::AllowOnce,
        "s" | "session" | "allow for this session" => Choice::AllowSession,
        "a" | "a1" | "always" | "always allow" => Choice::AlwaysAllow,
        "e" | "edit" => Choice::Edit,
        "d" | "deny" | "n" | "no" => Choice::Deny,
        w => match w.strip_prefix('a').and_then(|n| n.parse::<usize>().ok()) {
            Some(n) if n >= 2 && !w.starts_with("a0") => Choice::AlwaysAllowOption(n - 1),
            _ => return None,
        },
    };
    offered.contains(&choice).then_some(choice)
}

impl<R: BufRead, W: Write> Prompter for TerminalPrompter<R, W> {
    fn ask(&mut self, question: &Question<'_>) -> io::Result<PromptOutcome> {
        self.render(question)?;
        if self.flush_stdin {
            // Drop keystrokes typed before the question was visible; they were not an
            // answer to it. Failure only means there was nothing to flush.
            let _ = rustix::termios::tcflush(
                io::stdin().as_fd(),
                rustix::termios::QueueSelector::IFlush,
            );
        }
        for _ in 0..MAX_ATTEMPTS {
            self.prompt_line(question)?;
            let mut line = String::new();
            if self.input.read_line(&mut line)? == 0 {
                writeln!(self.output)?;
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the terminal closed before an answer",
                ));
            }
            match (
                parse_answer(&line, &question.choices),
                &question.context.editable_input,
            ) {
                (Some(Choice::Edit), Some(input)) => match super::editor::edit_input(input) {
                    Ok(Some(edited)) => return Ok(PromptOutcome::Edited(edited)),
                    Ok(None) => {
                        writeln!(self.output, "cordon: the input was not changed")?;
                        continue;
                    }
                    Err(e) => {
                        writeln!(
                            self.output,
                            "cordon: {}",
                            sanitize_for_terminal(&e.to_string())
                        )?;
                        continue;
                    }
                },
                (Some(Choice::Edit), None) | (None, _) => {}
                (Some(choice), _) => return Ok(PromptOutcome::Answered(choice)),
            }
            writeln!(
                self.output,
                "cordon: please answer with one of the letters shown"
            )?;
        }
        writeln!(self.output, "cordon: no valid answer; denying")?;
        Ok(PromptOutcome::Answered(Choice::Deny))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cordon_store::AskContext;

    #[test]
    fn reprompts_then_denies() {
        let ctx = AskContext {
            tool: "Bash".into(),
            target: "rm x".into(),
            ..Default::default()
        };
        let q = Question {
            context: &ctx,
            choices: vec![Choice::AllowOnce, Choice::Deny],
        };
        let mut out = Vec::new();
        let mut p = TerminalPrompter::new(&b"x\ns\nzzz\n"[..], &mut out);
        // "s" is not offered without a session: it counts as an invalid answer.
        assert_eq!(p.ask(&q).ok(), Some(PromptOutcome::Answered(Choice::Deny)));
        let text = String::from_utf8_lossy(&out);
        assert_eq!(text.matches("please answer").count(), 3);
        assert!(text.contains("no valid answer; denying"));
    }

    #[test]
    fn on_a_terminal_each_question_starts_by_resetting_what_a_command_left_on() {
        let ctx = AskContext {
            tool: "Bash".into(),
            target: "rm x".into(),
            ..Default::default()
        };
        let q = Question {
            context: &ctx,
            choices: vec![Choice::AllowOnce, Choice::Deny],
        };
        let mut out = Vec::new();
        let mut p = TerminalPrompter::new(&b"d\n"[..], &mut out).resetting_attributes();
        assert_eq!(p.ask(&q).ok(), Some(PromptOutcome::Answered(Choice::Deny)));
        let text = String::from_utf8_lossy(&out);
        let reset = cordon_policy::terminal::RESET_ATTRIBUTES;
        assert!(reset.contains("\x1b[r") && reset.ends_with("\x1b[0m"));
        assert!(
            text.starts_with(&format!("{reset}\ncordon: approval needed")),
            "{text:?}"
        );
        assert!(text.contains(&format!("{reset}choose [o/d]: ")), "{text:?}");
        // Not a terminal: nothing but text.
        let mut out = Vec::new();
        let mut p = TerminalPrompter::new(&b"d\n"[..], &mut out);
        assert_eq!(p.ask(&q).ok(), Some(PromptOutcome::Answered(Choice::Deny)));
        assert!(!String::from_utf8_lossy(&out).contains('\x1b'));
    }

    #[test]
    fn a_wider_rule_is_its_own_key_with_an_example() {
        let ctx = AskContext {
            tool: "Bash".into(),
            target: "git log -5".into(),
            suggestion: Some("Bash(git log -5)".into()),
            suggestions: vec![
                cordon_store::RuleOption::exact("Bash(git log -5)"),
                cordon_store::RuleOption {
                    rule: "Bash(git log:*)".into(),
                    example: Some("git log -p --all".into()),
                },
            ],
            ..Default::default()
        };
        let q = Question {
            context: &ctx,
            choices: vec![
                Choice::AllowOnce,
                Choice::AlwaysAllow,
                Choice::AlwaysAllowOption(1),
                Choice::Deny,
            ],
        };
        for (typed, want) in [
            ("a\n", Choice::AlwaysAllow),
            ("a2\n", Choice::AlwaysAllowOption(1)),
            // Not offered: asked again, then denied.
            ("a3\na02\nzz\n", Choice::Deny),
        ] {
            let mut out = Vec::new();
            let mut p = TerminalPrompter::new(typed.as_bytes(), &mut out);
            assert_eq!(
                p.ask(&q).ok(),
                Some(PromptOutcome::Answered(want)),
                "{typed}"
            );
            let text = String::from_utf8_lossy(&out);
            assert!(
                text.contains("[a] always allow this exact call, saving the rule Bash(git log -5)"),
                "{text}"
            );
            assert!(
                text.contains("[a2] always allow, saving the wider rule Bash(git log:*), which also allows e.g. git log -p --all"),
                "{text}"
            );
            assert!(text.contains("choose [o/a/a2/d]"), "{text}");
        }
    }
}
