//! `docs/cli.md`: every subcommand and argument, walked from clap's `Command` tree (the parser
//! `warrant` itself uses), with usage, default values, accepted values and help text.

use super::check_block;
use clap::{Arg, Command, CommandFactory};
use std::fmt::Write as _;

const PAGE: &str = "docs/cli.md";

fn cell(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

fn arg_name(arg: &Arg) -> String {
    let values: Vec<String> = arg
        .get_value_names()
        .map(|v| v.iter().map(|n| format!("<{n}>")).collect())
        .unwrap_or_default();
    let many = arg.get_num_args().is_some_and(|n| n.max_values() > 1)
        || matches!(arg.get_action(), clap::ArgAction::Append);
    if arg.is_positional() {
        let name = values.join(" ");
        let name = if name.is_empty() {
            format!("<{}>", arg.get_id())
        } else {
            name
        };
        return if many { format!("{name}...") } else { name };
    }
    let mut names = Vec::new();
    if let Some(s) = arg.get_short() {
        names.push(format!("-{s}"));
    }
    if let Some(l) = arg.get_long() {
        names.push(format!("--{l}"));
    }
    let mut out = names.join(", ");
    let takes_value = arg.get_num_args().is_some_and(|n| n.takes_values());
    if takes_value && !values.is_empty() {
        let _ = write!(out, " {}", values.join(" "));
    }
    if many && !arg.is_positional() {
        out.push_str(" (repeatable)");
    }
    out
}

fn arguments(out: &mut String, cmd: &Command) {
    let args: Vec<&Arg> = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set() && a.get_id() != "help" && a.get_id() != "version")
        .collect();
    if args.is_empty() {
        return;
    }
    out.push_str("| argument | default | meaning |\n|---|---|---|\n");
    for arg in args {
        let defaults: Vec<String> = arg
            .get_default_values()
            .iter()
            .map(|v| format!("`{}`", v.to_string_lossy()))
            .collect();
        let mut default = defaults.join(", ");
        if arg.is_required_set() {
            default = "**required**".into();
        }
        let help = arg
            .get_long_help()
            .or(arg.get_help())
            .map(|h| h.to_string())
            .unwrap_or_default();
        let mut meaning = cell(&help);
        let possible: Vec<String> = arg
            .get_possible_values()
            .iter()
            .filter(|p| !p.is_hide_set())
            .map(|p| format!("`{}`", p.get_name()))
            .collect();
        // A bool flag's possible values are `true`/`false`; say so only for real choices.
        if !possible.is_empty() && possible != ["`true`", "`false`"] {
            if !meaning.is_empty() && !meaning.ends_with('.') {
                meaning.push('.');
            }
            let _ = write!(meaning, " One of {}.", possible.join(", "));
        }
        let _ = writeln!(
            out,
            "| `{}` | {} | {} |",
            cell(&arg_name(arg)),
            default,
            meaning.trim()
        );
    }
    out.push('\n');
}

/// The reference: each subcommand with its usage and its arguments.
fn reference() -> String {
    let mut root = warrant::cli::Cli::command();
    root.build();
    let mut out = String::new();
    for sub in root.get_subcommands() {
        let name = sub.get_name();
        let mut sub = sub.clone().bin_name(format!("warrant {name}"));
        let usage = sub.render_usage().to_string();
        let usage = usage.trim_start_matches("Usage: ");
        let _ = writeln!(out, "## `warrant {name}`\n");
        let about = sub
            .get_long_about()
            .or(sub.get_about())
            .map(|a| a.to_string())
            .unwrap_or_default();
        let _ = writeln!(out, "{}\n", cell(&about));
        let _ = writeln!(out, "```\n{usage}\n```\n");
        arguments(&mut out, &sub);
    }
    out
}

#[test]
fn cli_reference_matches_the_argument_parser() {
    let text = reference();
    for sub in ["serve", "check", "validate", "test", "replay"] {
        assert!(
            text.contains(&format!("## `warrant {sub}`")),
            "{sub} missing"
        );
    }
    check_block(PAGE, &text);
}
