//! RocksDB's binary query trace (`DB::StartTrace`, `db_bench --trace_file`),
//! read and written exactly as facebook/rocksdb does:
//! - `trace_replay/trace_replay.cc` (`EncodeTrace`, `DecodeTrace`,
//!   `DecodeTraceRecord`, `Tracer::WriteHeader`, `Tracer::Get`...): a record is
//!   `fixed64 timestamp_us | u8 type | fixed32 payload length | payload`; the
//!   header (type 1) payload is `feedcafedeadbeef\tTrace Version: 0.2\tRocksDB
//!   Version: M.m\t...`, the footer type 2. From version 0.2 a payload starts
//!   with a fixed64 bitmask of the fields it holds (`TracePayloadType` in
//!   `trace_replay.h`), fields in bit order; version 0.1 payloads are the
//!   write batch itself, or `fixed32 cf | varint32-prefixed key`.
//! - `include/rocksdb/trace_record.h`: types Write 3, Get 4, IteratorSeek 5,
//!   IteratorSeekForPrev 6, MultiGet 13; 7-12 are block-cache and IO trace
//!   records, which the replayer skips, as kvtune does.
//! - `db/write_batch.cc` (`ReadRecordFromWriteBatch`, `Iterate`): a write
//!   batch is `fixed64 sequence | fixed32 count` then tagged records; strings
//!   are varint32 length + bytes (`util/coding.h`).
//!
//! Mapping to kvtune ops: a write batch is one batch of writes in order; a
//! merge is replayed as a put of its operand (kvtune cannot know the
//! application's merge operator); Get, MultiGet and SeekForPrev are reads of
//! the same kind; an IteratorSeek is a Scan of one entry, as RocksDB's
//! replayer only seeks. Iterator bounds become a key prefix the read stays
//! within. Where a trace uses column families other than the default, every
//! key is prefixed with its 4-byte big-endian column family id, so the
//! families stay apart in kvtune's one keyspace and seeks stay within theirs.

use std::io::{self, Read, Write};

use super::source::{At, Call, Head, RecordReader, Sink, TraceError};
use crate::dataset::ops::{call_end, Batch, Op, OpKind};

pub const MAGIC: &[u8] = b"feedcafedeadbeef";
/// `kTraceMetadataSize`: timestamp, type, payload length.
const META: usize = 13;
/// Records kvtune refuses to buffer (RocksDB's own are far smaller).
const MAX_PAYLOAD: u32 = 1 << 30;
/// What kvtune writes in the header's RocksDB version field: the RocksDB
/// its engine runs (librocksdb-sys 0.19.0+11.8.1).
const ROCKSDB_VERSION: &str = "11.8";

/// `TraceType` values.
mod kind {
    pub const BEGIN: u8 = 1;
    pub const END: u8 = 2;
    pub const WRITE: u8 = 3;
    pub const GET: u8 = 4;
    pub const SEEK: u8 = 5;
    pub const SEEK_FOR_PREV: u8 = 6;
    pub const MULTI_GET: u8 = 13;
}

/// `TracePayloadType` bits of version 0.2 payloads.
mod field {
    pub const WRITE_BATCH: u32 = 1;
    pub const GET_CF: u32 = 2;
    pub const GET_KEY: u32 = 3;
    pub const ITER_CF: u32 = 4;
    pub const ITER_KEY: u32 = 5;
    pub const ITER_LOWER: u32 = 6;
    pub const ITER_UPPER: u32 = 7;
    pub const MULTI_GET_SIZE: u32 = 8;
    pub const MULTI_GET_CFS: u32 = 9;
    pub const MULTI_GET_KEYS: u32 = 10;
}

/// Write batch record tags (`ValueType` in `db/dbformat.h`).
mod tag {
    pub const DELETION: u8 = 0x0;
    pub const VALUE: u8 = 0x1;
    pub const MERGE: u8 = 0x2;
    pub const LOG_DATA: u8 = 0x3;
    pub const CF_DELETION: u8 = 0x4;
    pub const CF_VALUE: u8 = 0x5;
    pub const CF_MERGE: u8 = 0x6;
    pub const SINGLE_DELETION: u8 = 0x7;
    pub const CF_SINGLE_DELETION: u8 = 0x8;
    pub const BEGIN_PREPARE_XID: u8 = 0x9;
    pub const END_PREPARE_XID: u8 = 0xA;
    pub const COMMIT_XID: u8 = 0xB;
    pub const ROLLBACK_XID: u8 = 0xC;
    pub const NOOP: u8 = 0xD;
    pub const CF_RANGE_DELETION: u8 = 0xE;
    pub const RANGE_DELETION: u8 = 0xF;
    pub const CF_BLOB_INDEX: u8 = 0x10;
    pub const BLOB_INDEX: u8 = 0x11;
    pub const BEGIN_PERSISTED_PREPARE_XID: u8 = 0x12;
    pub const BEGIN_UNPREPARE_XID: u8 = 0x13;
    pub const COMMIT_XID_AND_TIMESTAMP: u8 = 0x15;
    pub const WIDE_COLUMN_ENTITY: u8 = 0x16;
    pub const CF_WIDE_COLUMN_ENTITY: u8 = 0x17;
    pub const VALUE_PREFERRED_SEQNO: u8 = 0x18;
    pub const CF_VALUE_PREFERRED_SEQNO: u8 = 0x19;
}

/// A write batch's header: sequence number and entry count.
const BATCH_HEADER: usize = 12;

/// Decoding within a payload; errors carry the payload position.
struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
}

type Decoded<T> = Result<T, (usize, String)>;

impl<'a> Cursor<'a> {
    fn fail<T>(&self, message: String) -> Decoded<T> {
        Err((self.pos, message))
    }

    fn take(&mut self, n: usize, what: &str) -> Decoded<&'a [u8]> {
        if self.data.len() - self.pos < n {
            return self
                .fail(format!("{what}: needs {n} bytes but only {} are left", self.data.len() - self.pos));
        }
        self.pos += n;
        Ok(&self.data[self.pos - n..self.pos])
    }

    fn fixed32(&mut self, what: &str) -> Decoded<u32> {
        Ok(u32::from_le_bytes(self.take(4, what)?.try_into().expect("4 bytes")))
    }

    fn fixed64(&mut self, what: &str) -> Decoded<u64> {
        Ok(u64::from_le_bytes(self.take(8, what)?.try_into().expect("8 bytes")))
    }

    /// `GetVarint32Ptr`: at most 5 bytes, 7 bits each, low first.
    fn varint32(&mut self, what: &str) -> Decoded<u32> {
        let mut value = 0u32;
        for shift in (0..=28).step_by(7) {
            let Some(&byte) = self.data.get(self.pos) else {
                return self.fail(format!("{what}: varint runs past the end"));
            };
            self.pos += 1;
            value |= ((byte & 0x7F) as u32) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        self.fail(format!("{what}: varint longer than 5 bytes"))
    }

    /// `GetLengthPrefixedSlice`: varint32 length, then the bytes.
    fn prefixed(&mut self, what: &str) -> Decoded<&'a [u8]> {
        let len = self.varint32(what)? as usize;
        self.take(len, what)
    }

    fn at_end(&self) -> bool {
        self.pos == self.data.len()
    }
}

/// The fields of a version 0.2 payload, as a bitmask checked against the
/// bits its record type may have; read them in bit order with [`bits`].
fn fields(c: &mut Cursor, allowed: &[u32], what: &str) -> Decoded<u64> {
    let map = c.fixed64("field bitmask")?;
    match bits(map).find(|b| !allowed.contains(b)) {
        Some(b) => c.fail(format!("field bit {b} is not one a {what} record has (bits {allowed:?})")),
        None => Ok(map),
    }
}

/// The set bits of `map`, lowest first (`DecodeTraceRecord`'s order).
fn bits(map: u64) -> impl Iterator<Item = u32> {
    (0..64).filter(move |b| map >> b & 1 == 1)
}

/// Appends `key`, behind its column family id where keys carry one.
fn push_key(out: &mut Vec<u8>, cf: u32, cf_keys: bool, key: &[u8]) {
    if cf_keys {
        out.extend_from_slice(&cf.to_be_bytes());
    }
    out.extend_from_slice(key);
}

/// The key bytes a seek bounded by `lower..upper` stays within: the bound
/// that is the key's own prefix (`lower`, with `upper` its successor, as a
/// prefix iteration sets them), else the bytes the key shares with the bound
/// that limits the direction of travel. 0: unbounded.
pub fn bounds_prefix(key: &[u8], lower: &[u8], upper: &[u8], backward: bool) -> usize {
    let shared = |b: &[u8]| key.iter().zip(b).take_while(|(x, y)| x == y).count();
    if !lower.is_empty() && key.starts_with(lower) && (upper.is_empty() || successor(lower) == upper) {
        return lower.len();
    }
    match (backward, lower.is_empty(), upper.is_empty()) {
        (true, false, _) => shared(lower),
        (false, _, false) => shared(upper),
        _ => 0,
    }
}

/// The smallest string above every string starting with `prefix`: its last
/// byte below 0xFF incremented, the rest dropped; empty if there is none.
pub fn successor(prefix: &[u8]) -> Vec<u8> {
    let mut out = prefix.to_vec();
    while let Some(last) = out.pop() {
        if last < 0xFF {
            out.push(last + 1);
            return out;
        }
    }
    out
}

/// Reads a RocksDB trace.
pub struct RocksdbReader<R> {
    input: R,
    /// Offset of the next record.
    offset: u64,
    /// Records read, the header included.
    records: u64,
    version: u32,
    header_us: Option<u64>,
    /// The record `next` returned: its offset, type and payload.
    record_offset: u64,
    record_kind: u8,
    payload: Vec<u8>,
    cf_keys: bool,
    saw_cf: bool,
    skipped: u64,
    ended: bool,
}

impl<R: Read + Send> RocksdbReader<R> {
    /// A reader of `input`; keys carry their column family id where `cf_keys`.
    pub fn new(input: R, cf_keys: bool) -> Self {
        RocksdbReader {
            input,
            offset: 0,
            records: 0,
            version: 0,
            header_us: None,
            record_offset: 0,
            record_kind: 0,
            payload: Vec::new(),
            cf_keys,
            saw_cf: false,
            skipped: 0,
            ended: false,
        }
    }

    fn error(&self, offset: u64, message: String) -> TraceError {
        TraceError { at: At::Byte { offset, record: self.records.max(1) }, message }
    }

    /// Error at byte `pos` of the current payload.
    fn payload_error(&self, (pos, message): (usize, String)) -> TraceError {
        let what = match self.record_kind {
            kind::WRITE => "Write",
            kind::GET => "Get",
            kind::SEEK => "IteratorSeek",
            kind::SEEK_FOR_PREV => "IteratorSeekForPrev",
            kind::MULTI_GET => "MultiGet",
            _ => "header",
        };
        TraceError {
            at: At::Byte { offset: self.record_offset + (META + pos) as u64, record: self.records },
            message: format!("{what} record: {message}"),
        }
    }

    /// Reads up to `buf.len()` bytes; fewer only at the end of the input.
    fn read_full(&mut self, buf: &mut [u8]) -> Result<usize, TraceError> {
        let mut got = 0;
        while got < buf.len() {
            match self.input.read(&mut buf[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.error(self.offset + got as u64, format!("cannot read: {e}"))),
            }
        }
        Ok(got)
    }

    /// Reads one record into `payload`: its type and timestamp, or `None`
    /// at the end of the input.
    fn read_record(&mut self) -> Result<Option<(u8, u64)>, TraceError> {
        let mut meta = [0u8; META];
        let got = self.read_full(&mut meta)?;
        if got == 0 {
            return Ok(None);
        }
        self.records += 1;
        self.record_offset = self.offset;
        if got < META {
            return Err(self.error(
                self.offset,
                format!("truncated: the record's {META}-byte head has only {got} bytes before the end of the file"),
            ));
        }
        let time = u64::from_le_bytes(meta[..8].try_into().expect("8 bytes"));
        let len = u32::from_le_bytes(meta[9..].try_into().expect("4 bytes"));
        if len > MAX_PAYLOAD {
            return Err(self.error(self.offset, format!("payload of {len} bytes: over kvtune's 1 GiB limit")));
        }
        self.payload.clear();
        let read = (&mut self.input).take(len as u64).read_to_end(&mut self.payload);
        let payload_at = self.offset + META as u64;
        read.map_err(|e| self.error(payload_at, format!("cannot read: {e}")))?;
        if self.payload.len() < len as usize {
            return Err(self.error(
                payload_at,
                format!(
                    "truncated: the payload should have {len} bytes but the file ends after {}",
                    self.payload.len()
                ),
            ));
        }
        self.offset = payload_at + len as u64;
        Ok(Some((meta[8], time)))
    }

    /// Checks the header record and takes its trace version.
    fn read_header(&mut self, kind: u8, time: u64) -> Result<(), TraceError> {
        if kind != kind::BEGIN || !self.payload.starts_with(MAGIC) {
            return Err(self.error(
                0,
                "not a RocksDB trace: it does not begin with a header record (type 1, payload `feedcafedeadbeef...`)"
                    .into(),
            ));
        }
        let text = String::from_utf8_lossy(&self.payload);
        let version = text.split('\t').nth(1).and_then(|f| f.strip_prefix("Trace Version: "));
        let number = version
            .filter(|v| v.matches('.').count() == 1 && v.chars().all(|c| c == '.' || c.is_ascii_digit()));
        // `ParseVersionStr`: the digits without the dot ("0.2" is 2).
        let Some(number) = number.and_then(|v| v.replace('.', "").parse::<u32>().ok()) else {
            return Err(self.error(
                META as u64,
                format!(
                    "header: no `Trace Version: MAJOR.MINOR` field after the magic (found {:?})",
                    version
                ),
            ));
        };
        self.version = number;
        self.header_us = Some(time);
        Ok(())
    }

    fn decode_write(&mut self, sink: &mut Sink) -> Decoded<()> {
        let payload = std::mem::take(&mut self.payload);
        let mut c = Cursor { data: &payload, pos: 0 };
        let result = (|| {
            let (rep, base) = if self.version < 2 {
                (&payload[..], 0)
            } else {
                let mut rep: &[u8] = &[];
                if fields(&mut c, &[field::WRITE_BATCH], "Write")? != 0 {
                    rep = c.prefixed("write batch")?;
                }
                (rep, c.pos - rep.len())
            };
            self.write_batch(rep, sink).map_err(|(pos, m)| (base + pos, m))
        })();
        self.payload = payload;
        result
    }

    /// `WriteBatch::Iterate` over `rep`, each entry an op of the batch.
    fn write_batch(&mut self, rep: &[u8], sink: &mut Sink) -> Decoded<()> {
        let mut c = Cursor { data: rep, pos: 0 };
        if rep.len() < BATCH_HEADER {
            return c.fail(format!(
                "write batch of {} bytes is shorter than its {BATCH_HEADER}-byte header",
                rep.len()
            ));
        }
        c.pos = 8;
        let count = c.fixed32("entry count")?;
        let mut found = 0u32;
        while !c.at_end() {
            let at = c.pos;
            let t = c.take(1, "tag")?[0];
            let cf = match t {
                tag::CF_DELETION
                | tag::CF_VALUE
                | tag::CF_MERGE
                | tag::CF_SINGLE_DELETION
                | tag::CF_RANGE_DELETION
                | tag::CF_BLOB_INDEX
                | tag::CF_WIDE_COLUMN_ENTITY
                | tag::CF_VALUE_PREFERRED_SEQNO => c.varint32("column family")?,
                _ => 0,
            };
            self.saw_cf |= cf != 0;
            let cf_keys = self.cf_keys;
            let key_op = |kind: OpKind, key: &[u8], value, sink: &mut Sink| {
                sink.batch.push(kind, |k| push_key(k, cf, cf_keys, key), value, 0);
            };
            match t {
                tag::VALUE | tag::CF_VALUE | tag::MERGE | tag::CF_MERGE => {
                    let key = c.prefixed("key")?;
                    let value = sink.literal(c.prefixed("value")?);
                    let kind =
                        if matches!(t, tag::MERGE | tag::CF_MERGE) { OpKind::Merge } else { OpKind::Put };
                    key_op(kind, key, value, sink);
                }
                // A blob reference or a wide-column entity: what the batch
                // writes, though not the application's value.
                tag::BLOB_INDEX
                | tag::CF_BLOB_INDEX
                | tag::WIDE_COLUMN_ENTITY
                | tag::CF_WIDE_COLUMN_ENTITY => {
                    let key = c.prefixed("key")?;
                    let value = sink.literal(c.prefixed("value")?);
                    key_op(OpKind::Put, key, value, sink);
                }
                // TimedPut: the value with its fixed64 write time after it.
                tag::VALUE_PREFERRED_SEQNO | tag::CF_VALUE_PREFERRED_SEQNO => {
                    let key = c.prefixed("key")?;
                    let packed = c.prefixed("value")?;
                    if packed.len() < 8 {
                        return Err((at, "TimedPut value shorter than its 8-byte write time".into()));
                    }
                    let value = sink.literal(&packed[..packed.len() - 8]);
                    key_op(OpKind::Put, key, value, sink);
                }
                tag::DELETION | tag::CF_DELETION => key_op(OpKind::Delete, c.prefixed("key")?, 0..0, sink),
                tag::SINGLE_DELETION | tag::CF_SINGLE_DELETION => {
                    key_op(OpKind::SingleDelete, c.prefixed("key")?, 0..0, sink)
                }
                tag::RANGE_DELETION | tag::CF_RANGE_DELETION => {
                    let (start, end) = (c.prefixed("begin key")?, c.prefixed("end key")?);
                    let start_len = start.len() as u32 + if cf_keys { 4 } else { 0 };
                    let keys = |k: &mut Vec<u8>| {
                        push_key(k, cf, cf_keys, start);
                        push_key(k, cf, cf_keys, end);
                    };
                    sink.batch.push(OpKind::DeleteRange, keys, 0..0, start_len);
                }
                tag::LOG_DATA => {
                    c.prefixed("log data")?;
                    continue;
                }
                tag::END_PREPARE_XID | tag::COMMIT_XID | tag::ROLLBACK_XID => {
                    c.prefixed("transaction id")?;
                    continue;
                }
                tag::COMMIT_XID_AND_TIMESTAMP => {
                    c.prefixed("commit timestamp")?;
                    c.prefixed("transaction id")?;
                    continue;
                }
                tag::NOOP
                | tag::BEGIN_PREPARE_XID
                | tag::BEGIN_PERSISTED_PREPARE_XID
                | tag::BEGIN_UNPREPARE_XID => continue,
                other => return Err((at, format!("unknown write batch tag 0x{other:02X}"))),
            }
            found += 1;
        }
        if found != count {
            return Err((8, format!("write batch says it holds {count} entries but has {found}")));
        }
        Ok(())
    }

    fn decode_get(&mut self, sink: &mut Sink) -> Decoded<()> {
        let c = &mut Cursor { data: &self.payload, pos: 0 };
        let (mut cf, mut key) = (0, &[][..]);
        if self.version < 2 {
            cf = c.fixed32("column family")?;
            key = c.prefixed("key")?;
        } else {
            for bit in bits(fields(c, &[field::GET_CF, field::GET_KEY], "Get")?) {
                match bit {
                    field::GET_CF => cf = c.fixed32("column family")?,
                    _ => key = c.prefixed("key")?,
                }
            }
        }
        self.saw_cf |= cf != 0;
        let cf_keys = self.cf_keys;
        sink.batch.push_read(OpKind::Get, |k| push_key(k, cf, cf_keys, key), 0, 0);
        Ok(())
    }

    fn decode_seek(&mut self, sink: &mut Sink) -> Decoded<()> {
        let c = &mut Cursor { data: &self.payload, pos: 0 };
        let (mut cf, mut key, mut lower, mut upper) = (0, &[][..], &[][..], &[][..]);
        if self.version < 2 {
            cf = c.fixed32("column family")?;
            key = c.prefixed("key")?;
        } else {
            let allowed = [field::ITER_CF, field::ITER_KEY, field::ITER_LOWER, field::ITER_UPPER];
            for bit in bits(fields(c, &allowed, "IteratorSeek")?) {
                match bit {
                    field::ITER_CF => cf = c.fixed32("column family")?,
                    field::ITER_KEY => key = c.prefixed("key")?,
                    field::ITER_LOWER => lower = c.prefixed("lower bound")?,
                    _ => upper = c.prefixed("upper bound")?,
                }
            }
        }
        self.saw_cf |= cf != 0;
        let backward = self.record_kind == kind::SEEK_FOR_PREV;
        let cf_keys = self.cf_keys;
        let cf_bytes = if cf_keys { 4 } else { 0 };
        let prefix = (cf_bytes + bounds_prefix(key, lower, upper, backward)).min(u16::MAX as usize) as u16;
        let write = |k: &mut Vec<u8>| push_key(k, cf, cf_keys, key);
        match backward {
            true => sink.batch.push_read(OpKind::SeekForPrev, write, 1, prefix),
            false => sink.batch.push_read(OpKind::Scan, write, 1, prefix),
        }
        Ok(())
    }

    fn decode_multi_get(&mut self, sink: &mut Sink) -> Decoded<()> {
        let c = &mut Cursor { data: &self.payload, pos: 0 };
        if self.version < 2 {
            return c.fail(
                "MultiGet records need trace version 0.2 (RocksDB: \"MultiGet is not supported\")".into(),
            );
        }
        let allowed = [field::MULTI_GET_SIZE, field::MULTI_GET_CFS, field::MULTI_GET_KEYS];
        let (mut size, mut cfs, mut keys) = (0, &[][..], &[][..]);
        for bit in bits(fields(c, &allowed, "MultiGet")?) {
            match bit {
                field::MULTI_GET_SIZE => size = c.fixed32("key count")?,
                field::MULTI_GET_CFS => cfs = c.prefixed("column families")?,
                _ => keys = c.prefixed("keys")?,
            }
        }
        if size == 0 {
            return c.fail("MultiGet of no keys (RocksDB: \"Empty MultiGet cf_ids or keys\")".into());
        }
        let base = c.pos;
        let (cfs, keys) = (&mut Cursor { data: cfs, pos: 0 }, &mut Cursor { data: keys, pos: 0 });
        for i in 0..size {
            let cf =
                cfs.fixed32("column family").map_err(|(_, m)| (base, format!("{m} (key {i} of {size})")))?;
            let key = keys.prefixed("key").map_err(|(_, m)| (base, format!("{m} (key {i} of {size})")))?;
            self.saw_cf |= cf != 0;
            let cf_keys = self.cf_keys;
            sink.batch.push_read(OpKind::MultiGet, |k| push_key(k, cf, cf_keys, key), 0, 0);
        }
        Ok(())
    }
}

impl<R: Read + Send> RecordReader for RocksdbReader<R> {
    fn next(&mut self) -> Result<Option<Head>, TraceError> {
        while !self.ended {
            let Some((kind, time)) = self.read_record()? else {
                if self.records == 0 {
                    return Err(
                        self.error(0, "empty file: a RocksDB trace begins with a header record".into())
                    );
                }
                return Ok(None);
            };
            if self.records == 1 {
                self.read_header(kind, time)?;
                continue;
            }
            self.record_kind = kind;
            let call = match kind {
                kind::END => {
                    self.ended = true;
                    break;
                }
                kind::WRITE => Call::Write,
                kind::MULTI_GET => Call::MultiGet,
                kind::GET | kind::SEEK | kind::SEEK_FOR_PREV => Call::Single,
                _ => {
                    // RocksDB's replayer skips what it does not support.
                    self.skipped += 1;
                    continue;
                }
            };
            return Ok(Some(Head { time_us: Some(time), call, group: None }));
        }
        Ok(None)
    }

    fn decode(&mut self, sink: &mut Sink) -> Result<(), TraceError> {
        let decoded = match self.record_kind {
            kind::WRITE => self.decode_write(sink),
            kind::GET => self.decode_get(sink),
            kind::SEEK | kind::SEEK_FOR_PREV => self.decode_seek(sink),
            _ => self.decode_multi_get(sink),
        };
        decoded.map_err(|e| self.payload_error(e))
    }

    fn origin_us(&self) -> Option<u64> {
        self.header_us
    }

    fn saw_column_families(&self) -> bool {
        self.saw_cf
    }

    fn skipped(&self) -> u64 {
        self.skipped
    }
}

fn put_fixed32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// `PutVarint32`.
fn put_varint32(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// `PutLengthPrefixedSlice`.
fn put_prefixed(out: &mut Vec<u8>, bytes: &[u8]) {
    put_varint32(out, bytes.len() as u32);
    out.extend_from_slice(bytes);
}

/// Writes kvtune batches as a version 0.2 RocksDB trace, as `Tracer` does:
/// each run of writes one Write record, each run of multi-gets one MultiGet,
/// each other read its own record; Scan and SeekForPrev become iterator seeks
/// bounded to their key prefix (a Scan's entry limit is not in the format:
/// RocksDB's replayer reads one entry). CompactRange has no record type and
/// is left out (counted in `dropped`). Timestamps count up one microsecond a
/// record from 0: a recorded-pace replay of it runs as fast as it can.
pub struct RocksdbWriter<W: Write> {
    out: W,
    time: u64,
    payload: Vec<u8>,
    scratch: Vec<u8>,
    pub dropped: u64,
}

impl<W: Write> RocksdbWriter<W> {
    /// Writes the header.
    pub fn new(out: W) -> io::Result<Self> {
        let mut w = RocksdbWriter { out, time: 0, payload: Vec::new(), scratch: Vec::new(), dropped: 0 };
        w.payload.extend_from_slice(MAGIC);
        let rest = format!(
            "\tTrace Version: 0.2\tRocksDB Version: {ROCKSDB_VERSION}\tFormat: Timestamp OpType Payload\n"
        );
        w.payload.extend_from_slice(rest.as_bytes());
        w.record(kind::BEGIN)?;
        Ok(w)
    }

    /// `EncodeTrace` of `payload` as a record of `kind`.
    fn record(&mut self, kind: u8) -> io::Result<()> {
        let mut head = [0u8; META];
        head[..8].copy_from_slice(&self.time.to_le_bytes());
        head[8] = kind;
        head[9..].copy_from_slice(&(self.payload.len() as u32).to_le_bytes());
        self.out.write_all(&head)?;
        self.out.write_all(&self.payload)?;
        self.payload.clear();
        self.time += 1;
        Ok(())
    }

    fn bitmask(&mut self, bits: &[u32]) {
        let map = bits.iter().fold(0u64, |m, b| m | 1 << b);
        self.payload.extend_from_slice(&map.to_le_bytes());
    }

    pub fn write_batch(&mut self, batch: &Batch, corpus: &[u8]) -> io::Result<()> {
        let mut i = 0;
        while i < batch.ops.len() {
            let end = call_end(&batch.ops, i);
            let run = &batch.ops[i..end];
            match run[0].kind {
                k if k.is_write() => self.writes(batch, run, corpus)?,
                OpKind::MultiGet => self.multi_get(batch, run)?,
                OpKind::Get => {
                    self.bitmask(&[field::GET_CF, field::GET_KEY]);
                    put_fixed32(&mut self.payload, 0);
                    put_prefixed(&mut self.payload, batch.key(&run[0]));
                    self.record(kind::GET)?;
                }
                OpKind::Scan => self.seek(kind::SEEK, batch, &run[0])?,
                OpKind::SeekForPrev => self.seek(kind::SEEK_FOR_PREV, batch, &run[0])?,
                _ => self.dropped += 1,
            }
            i = end;
        }
        Ok(())
    }

    /// One Write record: a write batch of the run, sequence 0.
    fn writes(&mut self, batch: &Batch, run: &[Op], corpus: &[u8]) -> io::Result<()> {
        let rep = &mut self.scratch;
        rep.clear();
        rep.extend_from_slice(&0u64.to_le_bytes());
        put_fixed32(rep, run.len() as u32);
        for op in run {
            let value = &corpus[op.value.start as usize..op.value.end as usize];
            match op.kind {
                OpKind::Put | OpKind::Merge => {
                    rep.push(if op.kind == OpKind::Put { tag::VALUE } else { tag::MERGE });
                    put_prefixed(rep, batch.key(op));
                    put_prefixed(rep, value);
                }
                OpKind::Delete | OpKind::SingleDelete => {
                    rep.push(if op.kind == OpKind::Delete { tag::DELETION } else { tag::SINGLE_DELETION });
                    put_prefixed(rep, batch.key(op));
                }
                _ => {
                    let (start, end) = batch.range(op);
                    rep.push(tag::RANGE_DELETION);
                    put_prefixed(rep, start);
                    put_prefixed(rep, end);
                }
            }
        }
        self.bitmask(&[field::WRITE_BATCH]);
        put_prefixed(&mut self.payload, &self.scratch);
        self.record(kind::WRITE)
    }

    fn multi_get(&mut self, batch: &Batch, run: &[Op]) -> io::Result<()> {
        self.bitmask(&[field::MULTI_GET_SIZE, field::MULTI_GET_CFS, field::MULTI_GET_KEYS]);
        put_fixed32(&mut self.payload, run.len() as u32);
        // Every key in the default column family: fixed32 0 each.
        put_varint32(&mut self.payload, 4 * run.len() as u32);
        self.payload.resize(self.payload.len() + 4 * run.len(), 0);
        self.scratch.clear();
        for op in run {
            put_prefixed(&mut self.scratch, batch.key(op));
        }
        put_prefixed(&mut self.payload, &self.scratch);
        self.record(kind::MULTI_GET)
    }

    /// An iterator seek bounded to the op's key prefix, as a prefix
    /// iteration sets `iterate_lower_bound` and `iterate_upper_bound`.
    fn seek(&mut self, kind: u8, batch: &Batch, op: &Op) -> io::Result<()> {
        let key = batch.key(op);
        let lower = &key[..(op.prefix as usize).min(key.len())];
        let upper = successor(lower);
        let (lower_bit, upper_bit) = (!lower.is_empty() as u32, !upper.is_empty() as u32);
        let map = 1 << field::ITER_CF
            | 1 << field::ITER_KEY
            | (lower_bit << field::ITER_LOWER)
            | (upper_bit << field::ITER_UPPER);
        self.payload.extend_from_slice(&(map as u64).to_le_bytes());
        put_fixed32(&mut self.payload, 0);
        put_prefixed(&mut self.payload, key);
        if !lower.is_empty() {
            put_prefixed(&mut self.payload, lower);
        }
        if !upper.is_empty() {
            put_prefixed(&mut self.payload, &upper);
        }
        self.record(kind)
    }

    /// Writes the footer and hands back the output.
    pub fn finish(mut self) -> io::Result<W> {
        self.record(kind::END)?;
        self.out.flush()?;
        Ok(self.out)
    }
}
