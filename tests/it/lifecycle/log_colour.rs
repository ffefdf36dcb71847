//! Text logs written to a pipe carry no ANSI colour codes.

use super::served::Served;
use crate::support::ALLOW_ALL;

#[test]
fn text_logs_to_a_pipe_carry_no_colour_codes() {
    let s = Served::start(ALLOW_ALL, &["--log-format", "text"]);
    let log = s.log();
    assert!(
        log.iter()
            .any(|l| l.contains("warrant listening") && l.contains("INFO")),
        "{log:#?}"
    );
    assert!(
        log.iter().all(|l| !l.contains('\u{1b}')),
        "colour codes in a piped log: {log:#?}"
    );
}
