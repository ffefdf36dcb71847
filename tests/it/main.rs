//! Black-box tests of warrant over real HTTPS: rcgen certificates, a real rustls client, the
//! library's server started on 127.0.0.1:0, and the `warrant` binary itself.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails by panicking"
)]

mod admit;
mod audit_webhook;
mod authorization_details;
mod bad_configs;
mod binary;
mod body_limits;
mod cel;
mod cel_diff;
mod check_conditions;
mod cluster;
mod cluster_apiserver;
mod coverage;
mod guard;
mod http;
mod kafka;
mod lifecycle;
mod prometheus;
mod properties;
mod recommend;
mod reference;
mod reload;
mod replay;
mod shadow;
mod starvation;
mod suite;
mod support;
mod tickets_webhook;
mod tls;
mod webhook;
