//! [`Spool`]: a sink's records on disk, so that an outage of the receiver or a restart of
//! warrant loses none (within the spool's byte bound). Every record goes through it before
//! it is sent: the sink's spooler appends what the reviews queued, its sender reads from the
//! oldest unsent record and moves the spool's cursor past a batch only once the receiver has
//! taken it (at-least-once: a crash between the two sends the batch again).
//!
//! On disk, one directory per sink: segment files `<20-digit sequence>.spool`, each line
//! `<queued ms> <key or -> <record JSON>` (the JSON has no raw newline), and `cursor`, the
//! segment and byte offset of the oldest unsent record (`<sequence> <offset>`), replaced by
//! rename. A segment is removed once the cursor has left it. After a restart appends go to a
//! new segment, so a line torn by a crash can only end a segment: it is skipped and counted.
//! Writes are not synced: a restart of warrant keeps everything, a crash of the machine may
//! lose what the kernel had not written yet.

use super::record::SinkRecord;
use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The largest segment file before appends move to a new one.
const SEGMENT_MAX_BYTES: u64 = 8 << 20;

/// A spool that cannot be used.
#[derive(Debug, Error)]
pub enum SpoolError {
    /// A file or the directory cannot be read or written.
    #[error("audit spool {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> SpoolError + '_ {
    move |source| SpoolError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Where the oldest unsent record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    /// The segment's sequence number.
    pub segment: u64,
    /// The byte offset in it.
    pub offset: u64,
}

/// Records read from the spool, and where the cursor goes once they are delivered.
#[derive(Debug)]
pub struct Unsent {
    /// The records, oldest first.
    pub records: Vec<SinkRecord>,
    /// The cursor past them.
    pub next: Cursor,
    /// Lines skipped as unreadable (torn by a crash, or not written by warrant).
    pub skipped: u64,
}

/// A sink's spool directory.
#[derive(Debug)]
pub struct Spool {
    dir: PathBuf,
    max_bytes: u64,
    /// Segment sequence numbers on disk, oldest first.
    segments: VecDeque<u64>,
    /// The segment appends go to (created on the first append of this run).
    active: Option<(u64, File, u64)>,
    cursor: Cursor,
    /// Bytes of every segment file.
    disk_bytes: u64,
    /// Unsent records (counted at open, then kept up to date).
    records: u64,
    /// When the oldest unsent record was queued, once known.
    oldest_ms: Option<i64>,
}

impl Spool {
    /// Opens (or creates) the spool in `dir`, bounded to `max_bytes` on disk.
    pub fn open(dir: &Path, max_bytes: u64) -> Result<Self, SpoolError> {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let mut segments: Vec<u64> = Vec::new();
        let mut disk_bytes = 0;
        for entry in std::fs::read_dir(dir).map_err(io(dir))? {
            let entry = entry.map_err(io(dir))?;
            let name = entry.file_name();
            let Some(seq) = name
                .to_str()
                .and_then(|n| n.strip_suffix(".spool"))
                .and_then(|n| n.parse::<u64>().ok())
            else {
                continue;
            };
            disk_bytes += entry.metadata().map_err(io(&entry.path()))?.len();
            segments.push(seq);
        }
        segments.sort_unstable();
        let cursor_path = dir.join("cursor");
        let cursor = match std::fs::read_to_string(&cursor_path) {
            Ok(text) => parse_cursor(&text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io(&cursor_path)(e)),
        };
        let first = segments.first().copied().unwrap_or(0);
        let cursor = cursor.filter(|c| c.segment >= first).unwrap_or(Cursor {
            segment: first,
            offset: 0,
        });
        let mut spool = Self {
            dir: dir.to_path_buf(),
            max_bytes,
            segments: segments.into(),
            active: None,
            cursor,
            disk_bytes,
            records: 0,
            oldest_ms: None,
        };
        spool.remove_before(cursor.segment)?;
        spool.records = spool.count_unsent()?;
        Ok(spool)
    }

    fn segment_path(&self, seq: u64) -> PathBuf {
        self.dir.join(format!("{seq:020}.spool"))
    }

    /// Unsent records on disk (a scan at open).
    fn count_unsent(&mut self) -> Result<u64, SpoolError> {
        let mut n = 0;
        for &seq in &self.segments {
            let path = self.segment_path(seq);
            let mut file = File::open(&path).map_err(io(&path))?;
            if seq == self.cursor.segment {
                file.seek(SeekFrom::Start(self.cursor.offset))
                    .map_err(io(&path))?;
            }
            let mut reader = BufReader::new(file);
            let mut line = Vec::new();
            loop {
                line.clear();
                let read = reader.read_until(b'\n', &mut line).map_err(io(&path))?;
                if read == 0 {
                    break;
                }
                if line.ends_with(b"\n") {
                    n += 1;
                    if self.oldest_ms.is_none() {
                        self.oldest_ms = parse_line(&line).map(|r| r.queued_ms);
                    }
                }
            }
        }
        Ok(n)
    }

    /// Removes the segments before `segment`.
    fn remove_before(&mut self, segment: u64) -> Result<(), SpoolError> {
        while let Some(&seq) = self.segments.front() {
            if seq >= segment {
                break;
            }
            let path = self.segment_path(seq);
            let len = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io(&path)(e)),
            }
            self.disk_bytes = self.disk_bytes.saturating_sub(len);
            self.segments.pop_front();
        }
        Ok(())
    }

    /// Bytes that may still be appended before the bound.
    pub fn room(&self) -> u64 {
        self.max_bytes.saturating_sub(self.disk_bytes)
    }

    /// Bytes on disk.
    pub fn disk_bytes(&self) -> u64 {
        self.disk_bytes
    }

    /// Unsent records on disk.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// When the oldest unsent record was queued (ms since the epoch), if any waits.
    pub fn oldest_ms(&self) -> Option<i64> {
        if self.records == 0 {
            None
        } else {
            self.oldest_ms
        }
    }

    /// Appends `records` (after those already spooled).
    pub fn append(&mut self, records: &[SinkRecord]) -> Result<(), SpoolError> {
        if records.is_empty() {
            return Ok(());
        }
        let mut bytes = Vec::with_capacity(records.iter().map(SinkRecord::size).sum());
        for r in records {
            bytes.extend_from_slice(r.queued_ms.to_string().as_bytes());
            bytes.push(b' ');
            bytes.extend_from_slice(r.key.as_deref().unwrap_or("-").as_bytes());
            bytes.push(b' ');
            bytes.extend_from_slice(&r.json);
            bytes.push(b'\n');
        }
        let rotate = self
            .active
            .as_ref()
            .is_none_or(|(_, _, size)| *size >= SEGMENT_MAX_BYTES);
        if rotate {
            let seq = self.segments.back().map_or(0, |s| s + 1);
            let path = self.segment_path(seq);
            let file = OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .map_err(io(&path))?;
            self.segments.push_back(seq);
            self.active = Some((seq, file, 0));
            if self.records == 0 {
                // Nothing unsent: the cursor may start at the new segment, and the older
                // ones go (a restart before the cursor is saved finds them gone and starts
                // at the oldest segment left).
                self.cursor = Cursor {
                    segment: seq,
                    offset: 0,
                };
                self.remove_before(seq)?;
            }
        }
        if let Some((seq, file, size)) = self.active.as_mut() {
            let path = self.dir.join(format!("{seq:020}.spool"));
            file.write_all(&bytes).map_err(io(&path))?;
            *size += bytes.len() as u64;
        }
        self.disk_bytes += bytes.len() as u64;
        if self.records == 0 {
            self.oldest_ms = records.first().map(|r| r.queued_ms);
        }
        self.records += records.len() as u64;
        Ok(())
    }

    /// Reads up to `max_records` unsent records of about `max_bytes` from the cursor.
    pub fn read(&self, max_records: usize, max_bytes: usize) -> Result<Unsent, SpoolError> {
        let mut out = Unsent {
            records: Vec::new(),
            next: self.cursor,
            skipped: 0,
        };
        let mut bytes = 0;
        let active = self.active.as_ref().map(|(seq, ..)| *seq);
        for &seq in self.segments.iter().filter(|s| **s >= self.cursor.segment) {
            let path = self.segment_path(seq);
            let mut file = File::open(&path).map_err(io(&path))?;
            let start = if seq == self.cursor.segment {
                self.cursor.offset
            } else {
                0
            };
            file.seek(SeekFrom::Start(start)).map_err(io(&path))?;
            let mut reader = BufReader::new(file);
            let mut offset = start;
            let mut line = Vec::new();
            loop {
                if out.records.len() >= max_records || (bytes >= max_bytes && bytes > 0) {
                    return Ok(out);
                }
                line.clear();
                let read = reader.read_until(b'\n', &mut line).map_err(io(&path))?;
                if read == 0 {
                    break;
                }
                if !line.ends_with(b"\n") {
                    // A torn last line: only a segment of an earlier run can end so (the
                    // cursor then moves to the next segment, below).
                    if Some(seq) != active {
                        out.skipped += 1;
                    }
                    break;
                }
                offset += read as u64;
                match parse_line(&line) {
                    Some(r) => {
                        bytes += r.json.len();
                        out.records.push(r);
                    }
                    None => out.skipped += 1,
                }
                out.next = Cursor {
                    segment: seq,
                    offset,
                };
            }
            if Some(seq) == active {
                break;
            }
            // This segment is read to its end: the next record is at the start of the next.
            out.next = Cursor {
                segment: seq + 1,
                offset: 0,
            };
        }
        Ok(out)
    }

    /// Moves the cursor past records that were delivered (`delivered` of them, plus `skipped`
    /// unreadable lines), persisting it and removing the segments it left.
    pub fn commit(&mut self, next: Cursor, delivered: u64, skipped: u64) -> Result<(), SpoolError> {
        // The cursor never points past the last segment: a later append starts a new one.
        let last = self.segments.back().copied().unwrap_or(0);
        let next = if next.segment > last {
            Cursor {
                segment: last,
                offset: self.segment_len(last),
            }
        } else {
            next
        };
        let path = self.dir.join("cursor");
        let tmp = self.dir.join("cursor.tmp");
        std::fs::write(&tmp, format!("{} {}\n", next.segment, next.offset)).map_err(io(&tmp))?;
        std::fs::rename(&tmp, &path).map_err(io(&path))?;
        self.cursor = next;
        self.records = self.records.saturating_sub(delivered + skipped);
        let active = self.active.as_ref().map(|(seq, ..)| *seq);
        // Segments wholly behind the cursor go, but never the one appends go to.
        let keep_from = match active {
            Some(a) => next.segment.min(a),
            None => next.segment,
        };
        self.remove_before(keep_from)?;
        self.oldest_ms = None;
        if self.records > 0 {
            self.oldest_ms = self.read(1, 1)?.records.first().map(|r| r.queued_ms);
        }
        Ok(())
    }

    fn segment_len(&self, seq: u64) -> u64 {
        std::fs::metadata(self.segment_path(seq)).map_or(0, |m| m.len())
    }
}

fn parse_cursor(text: &str) -> Option<Cursor> {
    let mut parts = text.split_whitespace();
    Some(Cursor {
        segment: parts.next()?.parse().ok()?,
        offset: parts.next()?.parse().ok()?,
    })
}

/// One spooled line (with its newline) back to a record.
fn parse_line(line: &[u8]) -> Option<SinkRecord> {
    let line = line.strip_suffix(b"\n")?;
    let mut parts = line.splitn(3, |b| *b == b' ');
    let queued_ms = std::str::from_utf8(parts.next()?).ok()?.parse().ok()?;
    let key = std::str::from_utf8(parts.next()?).ok()?;
    let json = parts.next()?;
    if json.first() != Some(&b'{') {
        return None;
    }
    Some(SinkRecord {
        queued_ms,
        key: (key != "-").then(|| key.to_owned()),
        json: json.to_vec(),
    })
}
