//! The blocks of a uid range that are taken: one bit per block, as OpenShift keeps them in its
//! `RangeAllocation` object (`Data`, a bitmap; `Range`, the range it was made for).
//!
//! The encoded form is the bitmap's bytes, block 0 in the lowest bit of the first byte,
//! trailing zero bytes left out, in standard base64; it is read back only for the same range.

use super::uid_range::{MAX_BLOCKS, UidRange};
use crate::pod_security::constraint::IdRange;
use base64::Engine as _;
use thiserror::Error;

/// Taken blocks of one range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ledger {
    range: UidRange,
    words: Vec<u64>,
}

/// Why an encoded ledger cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LedgerError {
    /// It was made for another range (OpenShift: "conflicting UID range").
    #[error("conflicting UID range: expected {expected}, got {got}")]
    OtherRange {
        /// The range configured.
        expected: String,
        /// The range it was made for.
        got: String,
    },
    /// Not base64.
    #[error("the taken blocks are not base64: {0}")]
    Encoding(String),
    /// Longer than the range.
    #[error("the taken blocks name {bytes} bytes, more than the range's {blocks} blocks")]
    TooLong {
        /// The decoded length.
        bytes: usize,
        /// The range's blocks.
        blocks: u32,
    },
}

impl Ledger {
    /// Nothing taken in `range`.
    pub fn new(range: UidRange) -> Self {
        let words = (range.blocks() as usize).div_ceil(64);
        Self {
            range,
            words: vec![0; words],
        }
    }

    /// The ledger `data` encodes for the range written `range_text`, when that is `range`.
    pub fn decode(range: UidRange, range_text: &str, data: &str) -> Result<Self, LedgerError> {
        if range_text != range.to_string() {
            return Err(LedgerError::OtherRange {
                expected: range.to_string(),
                got: range_text.to_owned(),
            });
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .map_err(|e| LedgerError::Encoding(e.to_string()))?;
        let blocks = range.blocks();
        if bytes.len() > (blocks as usize).div_ceil(8) || bytes.len() > MAX_BLOCKS as usize / 8 {
            return Err(LedgerError::TooLong {
                bytes: bytes.len(),
                blocks,
            });
        }
        let mut ledger = Self::new(range);
        for (i, byte) in bytes.iter().enumerate() {
            for bit in 0..8 {
                if byte & (1 << bit) != 0 {
                    let offset = u32::try_from(i * 8 + bit).unwrap_or(u32::MAX);
                    if offset < blocks {
                        ledger.take(offset);
                    }
                }
            }
        }
        Ok(ledger)
    }

    /// The encoded form.
    pub fn encode(&self) -> String {
        let mut bytes: Vec<u8> = self.words.iter().flat_map(|w| w.to_le_bytes()).collect();
        while bytes.last() == Some(&0) {
            bytes.pop();
        }
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    /// The range.
    pub fn range(&self) -> UidRange {
        self.range
    }

    /// Marks block `offset` taken (nothing when the range has no such block).
    pub fn take(&mut self, offset: u32) {
        if offset < self.range.blocks() {
            self.words[(offset / 64) as usize] |= 1 << (offset % 64);
        }
    }

    /// Marks block `offset` free.
    pub fn release(&mut self, offset: u32) {
        if offset < self.range.blocks() {
            self.words[(offset / 64) as usize] &= !(1 << (offset % 64));
        }
    }

    /// Whether block `offset` is taken.
    pub fn is_taken(&self, offset: u32) -> bool {
        offset < self.range.blocks()
            && self.words[(offset / 64) as usize] & (1 << (offset % 64)) != 0
    }

    /// Marks every block that shares an id with `ids` taken: a namespace's hand-written range
    /// that is not one of the blocks still keeps the blocks it touches from anyone else.
    pub fn take_overlapping(&mut self, ids: IdRange) {
        for offset in self.range.overlapping(ids).into_iter().flatten() {
            self.take(offset);
        }
    }

    /// Adds every block `other` has taken.
    pub fn merge(&mut self, other: &Ledger) {
        if other.range != self.range {
            return;
        }
        for (mine, theirs) in self.words.iter_mut().zip(&other.words) {
            *mine |= theirs;
        }
    }

    /// The lowest free block (OpenShift's `allocateNextContiguousBit`).
    pub fn first_free(&self) -> Option<u32> {
        let (index, word) = self
            .words
            .iter()
            .enumerate()
            .find(|(_, w)| **w != u64::MAX)?;
        let offset = u32::try_from(index * 64).ok()? + word.trailing_ones();
        (offset < self.range.blocks()).then_some(offset)
    }

    /// How many blocks are taken.
    pub fn taken(&self) -> u32 {
        self.words.iter().map(|w| w.count_ones()).sum()
    }
}
