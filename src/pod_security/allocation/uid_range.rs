//! The cluster-wide uid range namespaces get their blocks from: `<start>-<end>/<blockSize>`,
//! as library-go's `pkg/security/uid/uid.go` (`ParseRange`, `NewRange`, `BlockAt`, `Offset`)
//! defines it. Block `n` is `[start + n*size, start + (n+1)*size - 1]`; the range holds
//! `(end - start + 1) / size` whole blocks.

use crate::pod_security::constraint::IdRange;
use std::fmt;
use std::ops::RangeInclusive;
use thiserror::Error;

/// The default range, OpenShift's (`UIDAllocatorRange`).
pub const DEFAULT: &str = "1000000000-1999999999/10000";

/// A uid range cut into equal blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UidRange {
    start: u32,
    end: u32,
    block_size: u32,
}

/// Why a range is refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum UidRangeError {
    /// Not `<start>-<end>/<blockSize>` of 32-bit unsigned numbers.
    #[error("uid range {0:?} not in the format \"<start>-<end>/<blockSize>\"")]
    Format(String),
    /// The start is past the end.
    #[error("uid range {text:?}: start {start} must be less than end {end}")]
    Order {
        /// The text.
        text: String,
        /// The start.
        start: u32,
        /// The end.
        end: u32,
    },
    /// The block size is zero.
    #[error("uid range {0:?}: block size must be a positive integer")]
    ZeroBlock(String),
    /// The block size does not fit in the range.
    #[error("uid range {0:?}: block size must be less than or equal to the range")]
    BlockTooLarge(String),
    /// More blocks than warrant keeps track of.
    #[error("uid range {0:?}: more than 1048576 blocks; use larger blocks")]
    TooManyBlocks(String),
}

/// The most blocks a range may hold: the ledger of taken blocks is one bit per block (128 KiB
/// at most, which fits in the annotations of the object that keeps it).
pub const MAX_BLOCKS: u32 = 1 << 20;

fn whole_blocks(start: u32, end: u32, block_size: u32) -> u64 {
    (u64::from(end) - u64::from(start) + 1) / u64::from(block_size)
}

impl UidRange {
    /// Parses `<start>-<end>/<blockSize>`, checked as `NewRange` checks it.
    pub fn parse(text: &str) -> Result<Self, UidRangeError> {
        let format = || UidRangeError::Format(text.to_owned());
        let (span, size) = text.split_once('/').ok_or_else(format)?;
        let (start, end) = span.split_once('-').ok_or_else(format)?;
        let number = |s: &str| s.trim().parse::<u32>().map_err(|_| format());
        let (start, end, block_size) = (number(start)?, number(end)?, number(size)?);
        if start > end {
            return Err(UidRangeError::Order {
                text: text.to_owned(),
                start,
                end,
            });
        }
        if block_size == 0 {
            return Err(UidRangeError::ZeroBlock(text.to_owned()));
        }
        if end - start < block_size {
            return Err(UidRangeError::BlockTooLarge(text.to_owned()));
        }
        if whole_blocks(start, end, block_size) > u64::from(MAX_BLOCKS) {
            return Err(UidRangeError::TooManyBlocks(text.to_owned()));
        }
        Ok(Self {
            start,
            end,
            block_size,
        })
    }

    /// How many whole blocks the range holds.
    pub fn blocks(&self) -> u32 {
        // `parse` refused more than MAX_BLOCKS blocks.
        u32::try_from(whole_blocks(self.start, self.end, self.block_size)).unwrap_or(MAX_BLOCKS)
    }

    /// The ids in each block.
    pub fn block_size(&self) -> u32 {
        self.block_size
    }

    /// Block `offset`, when the range holds it.
    pub fn block_at(&self, offset: u32) -> Option<IdRange> {
        if offset >= self.blocks() {
            return None;
        }
        let min = i64::from(self.start) + i64::from(offset) * i64::from(self.block_size);
        Some(IdRange {
            min,
            max: min + i64::from(self.block_size) - 1,
        })
    }

    /// The offsets of the blocks that share at least one id with `ids` (`None` when none).
    pub fn overlapping(&self, ids: IdRange) -> Option<RangeInclusive<u32>> {
        let (start, size) = (i64::from(self.start), i64::from(self.block_size));
        let last_block = i64::from(self.blocks()) - 1;
        let first = ((ids.min.max(start) - start) / size).max(0);
        let last = (ids.max - start).div_euclid(size).min(last_block);
        if ids.max < start || ids.min > ids.max || first > last {
            return None;
        }
        // Both are within 0..=last_block, which fits in u32.
        let to_u32 = |v: i64| u32::try_from(v).unwrap_or(u32::MAX);
        Some(to_u32(first)..=to_u32(last))
    }

    /// `block`'s offset when it is exactly one of the range's blocks (`Offset`).
    pub fn offset_of(&self, block: IdRange) -> Option<u32> {
        let offsets = self.overlapping(block)?;
        let first = *offsets.start();
        (offsets.start() == offsets.end() && self.block_at(first) == Some(block)).then_some(first)
    }
}

impl fmt::Display for UidRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}/{}", self.start, self.end, self.block_size)
    }
}

/// A block as OpenShift writes it into the annotations: `<start>/<size>`.
pub fn block_text(block: IdRange) -> String {
    format!("{}/{}", block.min, block.max - block.min + 1)
}
