//! Rules and modes.

use super::*;

// ---- rules ----------------------------------------------------------------------------
case!(
    deny_rule,
    "[permissions]\ndeny = [\"Read(./secrets/**)\"]\n",
    None,
    read("secrets/token"),
    Deny,
    Some(Step::DenyRule)
);
case!(
    deny_rule_via_symlink,
    "[permissions]\ndeny = [\"Read(./secrets/**)\"]\n",
    None,
    read("sec/token"),
    Deny,
    Some(Step::DenyRule)
);
case!(
    deny_rule_dir_form,
    "[permissions]\ndeny = [\"Read(./secrets)\"]\n",
    None,
    read("secrets/token"),
    Deny,
    Some(Step::DenyRule)
);
case!(
    deny_beats_allow,
    "[permissions]\nallow = [\"Read(./secrets/**)\"]\ndeny = [\"Read(./secrets/**)\"]\n",
    None,
    read("secrets/token"),
    Deny,
    Some(Step::DenyRule)
);
case!(
    ask_beats_allow,
    "[permissions]\nallow = [\"Read(./**)\"]\nask = [\"Read(./src/**)\"]\n",
    None,
    read("src/main.rs"),
    Ask,
    Some(Step::AskRule)
);
case!(
    allow_rule_absolute,
    "[permissions]\nallow = [\"Read(//etc/**)\"]\n",
    None,
    read("/etc/hosts"),
    Allow,
    Some(Step::AllowRule)
);
case!(
    allow_rule_not_through_symlink_out,
    "[permissions]\nallow = [\"Read(./etc/**)\"]\n",
    None,
    read("etc/passwd"),
    Ask
);
case!(
    edit_allow_rule,
    "[permissions]\nallow = [\"Edit(./src/**)\"]\n",
    None,
    write("src/lib.rs"),
    Allow,
    Some(Step::AllowRule)
);
case!(
    edit_rule_does_not_cover_reads,
    "[permissions]\ndeny = [\"Edit(//etc/**)\"]\n",
    None,
    read("/etc/hosts"),
    Ask
);
case!(
    tool_wide_deny,
    "[permissions]\ndeny = [\"WebFetch\"]\n",
    None,
    fetch("https://example.com/"),
    Deny,
    Some(Step::DenyRule)
);
case!(
    structured_rule,
    "[[rule]]\naction = \"deny\"\nrule = \"Read(//etc/passwd)\"\nreason = \"no passwd\"\n",
    None,
    read("/etc/passwd"),
    Deny,
    Some(Step::DenyRule)
);

// ---- modes ----------------------------------------------------------------------------
case!(
    plan_denies_write,
    PERMISSIVE,
    Some(Mode::Plan),
    write("src/x.rs"),
    Deny,
    Some(Step::Mode)
);
case!(
    plan_allows_read,
    NONE,
    Some(Mode::Plan),
    read("src/main.rs"),
    Allow
);
case!(
    accept_edits_inside,
    NONE,
    Some(Mode::AcceptEdits),
    write("src/x.rs"),
    Allow,
    Some(Step::Mode)
);
case!(
    accept_edits_not_outside,
    NONE,
    Some(Mode::AcceptEdits),
    write("/tmp/x"),
    Ask
);
case!(
    accept_edits_not_hard_link,
    NONE,
    Some(Mode::AcceptEdits),
    write("hardlinked"),
    Ask
);
case!(
    bypass_allows_outside,
    NONE,
    Some(Mode::Bypass),
    write("/tmp/x"),
    Allow,
    Some(Step::Mode)
);
case!(
    bypass_respects_ask_rule,
    "[permissions]\nask = [\"Edit(//tmp/**)\"]\n",
    Some(Mode::Bypass),
    write("/tmp/x"),
    Ask,
    Some(Step::AskRule)
);
case!(
    dont_ask_turns_ask_into_deny,
    NONE,
    Some(Mode::DontAsk),
    read("/etc/hosts"),
    Deny,
    Some(Step::NoHuman)
);
case!(
    dont_ask_keeps_allow,
    NONE,
    Some(Mode::DontAsk),
    read("src/main.rs"),
    Allow
);
