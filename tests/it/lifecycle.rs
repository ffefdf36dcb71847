//! Load and lifecycle of the real `warrant serve` process over mTLS on loopback:
//! configuration reloads and serving-certificate rotation under load, SIGTERM with reviews in
//! flight, a flood of unique reviews through a caching webhook, and the cost of a review with
//! tens of thousands of `extra` keys. Each test is bounded in time and count.

mod cache_flood;
mod decoded_memory;
mod extra_cost;
mod load;
mod log_colour;
mod reload_under_load;
mod rotation;
mod served;
mod sigterm;
