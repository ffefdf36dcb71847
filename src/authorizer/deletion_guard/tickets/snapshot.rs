//! [`Snapshot`]: a ticket source's tickets as last read, or why they could not be read.

use super::ticket::Ticket;
use crate::authorizer::deletion_guard::error::GuardError;
use std::collections::HashMap;

/// The tickets as last read, or why they could not be read.
#[derive(Debug)]
pub enum Snapshot {
    /// Read and decoded, by id.
    Loaded(HashMap<String, Ticket>),
    /// Not readable or not valid; the guard's failurePolicy applies when a ticket is needed.
    Unreadable(GuardError),
}
