//! The deletion guard's tickets file: decoded into tickets or refused, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use warrant::authorizer::deletion_guard::tickets::source;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(tickets) = source::parse(text) {
        for t in tickets.values() {
            let _ = t.pre_authorises();
        }
    }
});
