//! The authorization config loader: YAML bytes to a validated config and, when valid, the
//! chain built from it. Refused with an error or built, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(loaded) = warrant::config::parse("fuzz.yaml", data) else {
        return;
    };
    let _ = warrant::authorizer::Chain::build(&loaded.config);
});
