//! The op source every trace format shares: a [`RecordReader`] decodes one
//! record at a time, and [`TraceSource`] packs records into batches without
//! ever joining two recorded calls into one, stops at the op limit of a
//! scaled replay, and sleeps until each record's recorded time when asked to.

use std::collections::HashMap;
use std::fmt;
use std::ops::Range;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::Pace;
use crate::dataset::ops::{Batch, OpKind, OpSource};
use crate::dataset::values::{corpus, mix64};

/// Records packed into one batch when replaying as fast as possible: enough
/// to make batch overhead vanish, few enough to keep warm-up counting fine.
pub const BATCH_OPS: usize = 1000;
/// Bytes of the synthetic corpus that sized values (`size:N`) are cut from.
const CORPUS_BYTES: usize = 1 << 20;
/// A batch is cut once its arenas pass this: far below the u32 op ranges
/// with a record of up to 1 GiB on top, and a bounded memory cost.
const ARENA_CUT: usize = 256 << 20;

/// Where in a trace a problem is: a byte offset and record number (binary
/// traces) or a line and field (text traces).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum At {
    /// `record` counts from 1, the header being record 1.
    Byte {
        offset: u64,
        record: u64,
    },
    Line {
        line: u64,
        field: Option<&'static str>,
    },
}

impl fmt::Display for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            At::Byte { offset, record } => write!(f, "byte offset {offset} (record {record})"),
            At::Line { line, field: Some(field) } => write!(f, "line {line}, field `{field}`"),
            At::Line { line, field: None } => write!(f, "line {line}"),
        }
    }
}

/// A trace that cannot be read, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{at}: {message}")]
pub struct TraceError {
    pub at: At,
    pub message: String,
}

/// The engine call a record's first op makes, which decides whether it may
/// follow the batch's last op: writes in a row are one atomic write, and
/// multi-gets in a row one call, so records of those must not touch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    Write,
    MultiGet,
    Single,
}

impl Call {
    pub fn of(kind: OpKind) -> Call {
        match kind {
            k if k.is_write() => Call::Write,
            OpKind::MultiGet => Call::MultiGet,
            _ => Call::Single,
        }
    }

    /// Whether an op of this call placed right after `last` would be merged
    /// into `last`'s call by the replay driver.
    fn joins(self, last: OpKind) -> bool {
        self == Call::of(last) && self != Call::Single
    }
}

/// What a reader knows of a record before decoding it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    /// Recorded time in microseconds, any origin.
    pub time_us: Option<u64>,
    pub call: Call,
    /// Records of one group (a text trace's `batch` column) go in one batch.
    pub group: Option<u64>,
}

/// Where a record's ops go: the batch, and the arena its values point into
/// (the synthetic corpus, then this batch's literal values).
pub struct Sink<'a> {
    pub batch: &'a mut Batch,
    values: &'a mut Vec<u8>,
    corpus_len: usize,
    synthetic: &'a mut u64,
    seed: u64,
}

impl Sink<'_> {
    /// A value holding exactly `bytes`.
    pub fn literal(&mut self, bytes: &[u8]) -> Range<u32> {
        let start = self.values.len();
        self.values.extend_from_slice(bytes);
        start as u32..self.values.len() as u32
    }

    /// A value of `len` bytes cut from the synthetic corpus at an offset
    /// drawn from the seed, so sized values compress like the corpus.
    pub fn sized(&mut self, len: usize) -> Range<u32> {
        *self.synthetic += 1;
        let draw = mix64(self.seed ^ *self.synthetic) as usize;
        if len <= self.corpus_len {
            let start = draw % (self.corpus_len - len + 1);
            return start as u32..(start + len) as u32;
        }
        // Longer than the corpus: repeat it into the arena.
        let start = self.values.len();
        while self.values.len() - start < len {
            let take = (len - (self.values.len() - start)).min(self.corpus_len);
            self.values.extend_from_within(..take);
        }
        start as u32..self.values.len() as u32
    }
}

/// Reads one trace format record by record.
pub trait RecordReader: Send {
    /// Reads the next record; `None` at the end of the trace.
    fn next(&mut self) -> Result<Option<Head>, TraceError>;
    /// Appends the ops of the record `next` just returned.
    fn decode(&mut self, sink: &mut Sink) -> Result<(), TraceError>;
    /// The time replay starts from (a RocksDB trace's header), if the
    /// format records one; else the first record's.
    fn origin_us(&self) -> Option<u64> {
        None
    }
    /// Whether a record read so far used a column family other than the default.
    fn saw_column_families(&self) -> bool {
        false
    }
    /// Records read but not replayable (block-cache and IO trace records).
    fn skipped(&self) -> u64 {
        0
    }
}

/// The corpus of sized values for a compressibility and seed, made once per
/// process: every phase and every read of a file share it.
fn shared_corpus(compressibility: f64, seed: u64) -> Arc<Vec<u8>> {
    type Corpora = Mutex<HashMap<(u64, u64), Arc<Vec<u8>>>>;
    static CORPORA: OnceLock<Corpora> = OnceLock::new();
    let mut corpora = CORPORA.get_or_init(Default::default).lock().expect("corpus lock");
    let made = corpora.entry((compressibility.to_bits(), seed));
    made.or_insert_with(|| Arc::new(corpus(CORPUS_BYTES, compressibility, seed))).clone()
}

/// Sleeps until each batch's recorded offset from the phase's start.
struct Pacer {
    started: Option<(Instant, u64)>,
}

impl Pacer {
    fn wait(&mut self, time_us: u64, origin: Option<u64>) {
        let (start, origin) = *self.started.get_or_insert((Instant::now(), origin.unwrap_or(time_us)));
        // A time past what `Instant` holds (a corrupt record) is not waited for.
        let Some(due) = start.checked_add(Duration::from_micros(time_us.saturating_sub(origin))) else {
            return;
        };
        let now = Instant::now();
        if due > now {
            std::thread::sleep(due - now);
        }
    }
}

/// One phase of a trace: records in order, packed into batches.
pub struct TraceSource {
    reader: Box<dyn RecordReader>,
    /// The file, for errors.
    label: String,
    values: Vec<u8>,
    corpus_len: usize,
    synthetic: u64,
    seed: u64,
    /// A record read but left for the next batch.
    pending: Option<Head>,
    last_group: Option<u64>,
    /// Ops to replay at most (a scaled study replays a prefix).
    limit: u64,
    emitted: u64,
    pacer: Option<Pacer>,
    error: Option<anyhow::Error>,
    /// First and last recorded times seen.
    pub span_us: Option<(u64, u64)>,
    pub records: u64,
}

impl TraceSource {
    pub fn new(
        reader: Box<dyn RecordReader>,
        label: String,
        limit: Option<u64>,
        pace: Pace,
        compressibility: f64,
        seed: u64,
    ) -> Self {
        let values = shared_corpus(compressibility, seed).to_vec();
        TraceSource {
            reader,
            label,
            corpus_len: values.len(),
            values,
            synthetic: 0,
            seed,
            pending: None,
            last_group: None,
            limit: limit.unwrap_or(u64::MAX),
            emitted: 0,
            pacer: (pace == Pace::Recorded).then_some(Pacer { started: None }),
            error: None,
            span_us: None,
            records: 0,
        }
    }

    pub fn saw_column_families(&self) -> bool {
        self.reader.saw_column_families()
    }

    pub fn skipped(&self) -> u64 {
        self.reader.skipped()
    }

    /// Whether `head` must start a new batch after what `batch` holds.
    fn cuts(&self, batch: &Batch, head: &Head) -> bool {
        let Some(last) = batch.ops.last() else { return false };
        // Numbered records: each number is one batch, exactly.
        if head.group.is_some() || self.last_group.is_some() {
            return head.group != self.last_group;
        }
        self.pacer.is_some()
            || batch.ops.len() >= BATCH_OPS
            || batch.keys.len().max(self.values.len()) >= ARENA_CUT
            || head.call.joins(last.kind)
    }

    fn next_head(&mut self) -> Result<Option<Head>, TraceError> {
        match self.pending.take() {
            Some(head) => Ok(Some(head)),
            None => self.reader.next(),
        }
    }

    /// Fills `batch`; the recorded time of its first record, if any.
    fn fill(&mut self, batch: &mut Batch) -> Result<Option<u64>, TraceError> {
        let mut first_time = None;
        while self.emitted + (batch.ops.len() as u64) < self.limit {
            let Some(head) = self.next_head()? else { break };
            if self.cuts(batch, &head) {
                self.pending = Some(head);
                break;
            }
            if let Some(t) = head.time_us {
                first_time = first_time.or(Some(t));
                let (lo, hi) = self.span_us.get_or_insert((t, t));
                (*lo, *hi) = ((*lo).min(t), (*hi).max(t));
            }
            self.records += 1;
            self.last_group = head.group;
            let mut sink = Sink {
                batch: &mut *batch,
                values: &mut self.values,
                corpus_len: self.corpus_len,
                synthetic: &mut self.synthetic,
                seed: self.seed,
            };
            self.reader.decode(&mut sink)?;
        }
        let room = self.limit - self.emitted;
        if batch.ops.len() as u64 > room {
            batch.ops.truncate(room as usize);
        }
        Ok(first_time)
    }
}

impl OpSource for TraceSource {
    fn next_batch(&mut self, batch: &mut Batch) -> bool {
        batch.clear();
        self.values.truncate(self.corpus_len);
        if self.error.is_some() {
            return false;
        }
        match self.fill(batch) {
            Ok(time) => {
                if let (Some(pacer), Some(time)) = (self.pacer.as_mut(), time) {
                    pacer.wait(time, self.reader.origin_us());
                }
                self.emitted += batch.ops.len() as u64;
                !batch.ops.is_empty()
            }
            Err(e) => {
                self.error = Some(anyhow::anyhow!("{}: {e}", self.label));
                batch.clear();
                false
            }
        }
    }

    fn corpus(&self) -> &[u8] {
        &self.values
    }

    fn take_error(&mut self) -> Option<anyhow::Error> {
        self.error.take()
    }
}

/// A sink for a reader under test, over a corpus of 1 KiB.
#[cfg(test)]
pub fn tests_sink<'a>(batch: &'a mut Batch, values: &'a mut Vec<u8>, synthetic: &'a mut u64) -> Sink<'a> {
    values.resize(values.len().max(1024), 7);
    Sink { batch, values, corpus_len: 1024, synthetic, seed: 0 }
}

/// A phase whose trace could not be opened: no ops, and the reason.
pub struct Failed(pub Option<anyhow::Error>);

impl OpSource for Failed {
    fn next_batch(&mut self, batch: &mut Batch) -> bool {
        batch.clear();
        false
    }

    fn corpus(&self) -> &[u8] {
        &[]
    }

    fn take_error(&mut self) -> Option<anyhow::Error> {
        self.0.take()
    }
}
