//! Trace readers on hand-built bytes (every record type, both RocksDB payload
//! formats, every text op), on traces RocksDB wrote, their errors, batching,
//! pace, prefix scaling, export round trips, replay through the real engine,
//! and time-bounded fuzzing (`KVTUNE_FUZZ_SECS=600 cargo test --release fuzz`).

use std::io::Cursor;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::export::export;
use super::rocksdb::{RocksdbReader, RocksdbWriter};
use super::source::{At, RecordReader, TraceError, TraceSource};
use super::text::{CsvReader, JsonlReader};
use super::*;
use crate::dataset::ops::{Batch, OpKind, OpSource, Tally};
use crate::dataset::{Dataset, Workload};

/// An op as read: kind, key, value bytes, arg, prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Row {
    kind: OpKind,
    key: Vec<u8>,
    value: Vec<u8>,
    arg: u32,
    prefix: u16,
}

fn row(kind: OpKind, key: &[u8], value: &[u8], arg: u32, prefix: u16) -> Row {
    Row { kind, key: key.to_vec(), value: value.to_vec(), arg, prefix }
}

fn reader(format: Format, bytes: &[u8], cf_keys: bool) -> Box<dyn RecordReader> {
    let input = Cursor::new(bytes.to_vec());
    match format {
        Format::RocksdbTrace => Box::new(RocksdbReader::new(input, cf_keys)),
        Format::Csv => Box::new(CsvReader::new(input)),
        Format::Jsonl => Box::new(JsonlReader::new(input)),
    }
}

fn source(format: Format, bytes: &[u8], cf_keys: bool, limit: Option<u64>, pace: Pace) -> TraceSource {
    TraceSource::new(reader(format, bytes, cf_keys), "test".into(), limit, pace, 2.0, 1)
}

/// Every batch's ops, checking that each range lies in its arena.
fn drain(source: &mut dyn OpSource) -> Result<Vec<Vec<Row>>, String> {
    let mut batches = vec![];
    let mut batch = Batch::default();
    while source.next_batch(&mut batch) {
        let corpus = source.corpus();
        let rows = batch.ops.iter().map(|op| {
            assert!(op.key.start <= op.key.end && op.key.end as usize <= batch.keys.len(), "{op:?}");
            assert!(op.value.start <= op.value.end && op.value.end as usize <= corpus.len(), "{op:?}");
            let value = corpus[op.value.start as usize..op.value.end as usize].to_vec();
            Row { kind: op.kind, key: batch.key(op).to_vec(), value, arg: op.arg, prefix: op.prefix }
        });
        batches.push(rows.collect());
    }
    match source.take_error() {
        Some(e) => Err(format!("{e:#}")),
        None => Ok(batches),
    }
}

fn read(format: Format, bytes: &[u8]) -> Result<Vec<Vec<Row>>, String> {
    drain(&mut source(format, bytes, false, None, Pace::Fast))
}

fn flat(batches: Vec<Vec<Row>>) -> Vec<Row> {
    batches.into_iter().flatten().collect()
}

// ---- RocksDB traces built by hand, byte by byte ----

fn varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn lp(out: &mut Vec<u8>, bytes: &[u8]) {
    varint(out, bytes.len() as u32);
    out.extend_from_slice(bytes);
}

/// A RocksDB trace being built: records `fixed64 ts | type | fixed32 len | payload`.
struct Built(Vec<u8>);

impl Built {
    fn new(version: &str) -> Built {
        let mut b = Built(vec![]);
        let header = format!("feedcafedeadbeef\tTrace Version: {version}\tRocksDB Version: 7.8\tFormat: x\n");
        b.record(1000, 1, header.as_bytes());
        b
    }

    fn record(&mut self, ts: u64, kind: u8, payload: &[u8]) -> &mut Built {
        self.0.extend_from_slice(&ts.to_le_bytes());
        self.0.push(kind);
        self.0.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        self.0.extend_from_slice(payload);
        self
    }
}

/// A write batch: sequence 9, `count`, then the tagged records.
fn batch_rep(count: u32, records: &[u8]) -> Vec<u8> {
    let mut rep = 9u64.to_le_bytes().to_vec();
    rep.extend_from_slice(&count.to_le_bytes());
    rep.extend_from_slice(records);
    rep
}

/// Tagged write batch records: tag, optional varint cf, then strings.
fn entry(out: &mut Vec<u8>, tag: u8, cf: Option<u32>, strings: &[&[u8]]) {
    out.push(tag);
    if let Some(cf) = cf {
        varint(out, cf);
    }
    strings.iter().for_each(|s| lp(out, s));
}

/// A version 0.2 payload: the bitmask, then the fields as given.
fn v2(bits: &[u32], fields: &[u8]) -> Vec<u8> {
    let map = bits.iter().fold(0u64, |m, b| m | 1 << b);
    let mut p = map.to_le_bytes().to_vec();
    p.extend_from_slice(fields);
    p
}

/// Every write batch record type kvtune replays, in the default family.
fn every_write() -> (Vec<u8>, Vec<Row>) {
    let mut r = vec![];
    entry(&mut r, 0x1, None, &[b"k1", b"v1"]);
    entry(&mut r, 0x5, Some(0), &[b"k2", b"value2"]);
    entry(&mut r, 0x2, None, &[b"k1", b"m1"]);
    entry(&mut r, 0x6, Some(0), &[b"k2", b"m2"]);
    entry(&mut r, 0x3, None, &[b"log data: not an entry"]);
    entry(&mut r, 0x0, None, &[b"k3"]);
    entry(&mut r, 0x4, Some(0), &[b"k4"]);
    entry(&mut r, 0x7, None, &[b"k5"]);
    entry(&mut r, 0x8, Some(0), &[b"k6"]);
    entry(&mut r, 0xD, None, &[]);
    entry(&mut r, 0xF, None, &[b"a", b"c"]);
    entry(&mut r, 0xE, Some(0), &[b"d", b"ff"]);
    entry(&mut r, 0x9, None, &[]);
    entry(&mut r, 0xA, None, &[b"xid"]);
    entry(&mut r, 0x11, None, &[b"k7", b"blobref"]);
    entry(&mut r, 0x16, None, &[b"k8", b"entity"]);
    let mut packed = b"timed".to_vec();
    packed.extend_from_slice(&77u64.to_le_bytes());
    entry(&mut r, 0x18, None, &[b"k9", &packed]);
    entry(&mut r, 0xB, None, &[b"xid"]);
    let rows = vec![
        row(OpKind::Put, b"k1", b"v1", 0, 0),
        row(OpKind::Put, b"k2", b"value2", 0, 0),
        row(OpKind::Merge, b"k1", b"m1", 0, 0),
        row(OpKind::Merge, b"k2", b"m2", 0, 0),
        row(OpKind::Delete, b"k3", b"", 0, 0),
        row(OpKind::Delete, b"k4", b"", 0, 0),
        row(OpKind::SingleDelete, b"k5", b"", 0, 0),
        row(OpKind::SingleDelete, b"k6", b"", 0, 0),
        row(OpKind::DeleteRange, b"ac", b"", 1, 0),
        row(OpKind::DeleteRange, b"dff", b"", 1, 0),
        row(OpKind::Put, b"k7", b"blobref", 0, 0),
        row(OpKind::Put, b"k8", b"entity", 0, 0),
        row(OpKind::Put, b"k9", b"timed", 0, 0),
    ];
    (batch_rep(13, &r), rows)
}

/// A version 0.2 trace of every record type, and what it replays as.
fn v2_trace() -> (Vec<u8>, Vec<Row>) {
    let (rep, mut rows) = every_write();
    let mut t = Built::new("0.2");
    let mut write = vec![];
    lp(&mut write, &rep);
    t.record(1001, 3, &v2(&[1], &write));
    let mut get = 0u32.to_le_bytes().to_vec();
    lp(&mut get, b"g1");
    t.record(1002, 4, &v2(&[2, 3], &get));
    let mut multi = 3u32.to_le_bytes().to_vec();
    lp(&mut multi, &[0u8; 12]);
    let mut keys = vec![];
    [&b"m1"[..], b"m2", b""].iter().for_each(|k| lp(&mut keys, k));
    lp(&mut multi, &keys);
    t.record(1003, 13, &v2(&[8, 9, 10], &multi));
    // A prefix iteration over "pre": lower "pre", upper "prf".
    let mut seek = 0u32.to_le_bytes().to_vec();
    [&b"prefix-key"[..], b"pre", b"prf"].iter().for_each(|s| lp(&mut seek, s));
    t.record(1004, 5, &v2(&[4, 5, 6, 7], &seek));
    // SeekForPrev with only a lower bound of 2 shared bytes, then none.
    let mut back = 0u32.to_le_bytes().to_vec();
    [&b"row9"[..], b"roa"].iter().for_each(|s| lp(&mut back, s));
    t.record(1005, 6, &v2(&[4, 5, 6], &back));
    let mut plain = 0u32.to_le_bytes().to_vec();
    lp(&mut plain, b"row1");
    t.record(1006, 6, &v2(&[4, 5], &plain));
    // A block cache trace record: skipped, as RocksDB's replayer does.
    t.record(1007, 9, b"whatever");
    t.record(1008, 2, b"");
    t.record(1009, 4, b"after the footer: never read");
    rows.extend([
        row(OpKind::Get, b"g1", b"", 0, 0),
        row(OpKind::MultiGet, b"m1", b"", 0, 0),
        row(OpKind::MultiGet, b"m2", b"", 0, 0),
        row(OpKind::MultiGet, b"", b"", 0, 0),
        row(OpKind::Scan, b"prefix-key", b"", 1, 3),
        row(OpKind::SeekForPrev, b"row9", b"", 1, 2),
        row(OpKind::SeekForPrev, b"row1", b"", 1, 0),
    ]);
    (t.0, rows)
}

#[test]
fn rocksdb_reads_every_record_type_in_version_0_2() {
    let (bytes, expected) = v2_trace();
    let batches = read(Format::RocksdbTrace, &bytes).unwrap();
    assert_eq!(flat(batches.clone()), expected);
    // The write batch, then the reads: one batch, the Write record's writes one run.
    assert_eq!(batches.len(), 1);
    let mut s = source(Format::RocksdbTrace, &bytes, false, None, Pace::Fast);
    drain(&mut s).unwrap();
    assert_eq!((s.records, s.skipped(), s.span_us), (6, 1, Some((1001, 1006))));
}

#[test]
fn rocksdb_reads_version_0_1_payloads() {
    let (rep, mut expected) = every_write();
    let mut t = Built::new("0.1");
    t.record(1, 3, &rep);
    let mut get = 0u32.to_le_bytes().to_vec();
    lp(&mut get, b"g");
    t.record(2, 4, &get);
    t.record(3, 5, &get);
    t.record(4, 6, &get);
    expected.extend([
        row(OpKind::Get, b"g", b"", 0, 0),
        row(OpKind::Scan, b"g", b"", 1, 0),
        row(OpKind::SeekForPrev, b"g", b"", 1, 0),
    ]);
    assert_eq!(flat(read(Format::RocksdbTrace, &t.0).unwrap()), expected);
    // Version 0.1 has no MultiGet records (RocksDB: "MultiGet is not supported").
    let mut t = Built::new("0.1");
    let header_len = t.0.len();
    t.record(5, 13, &[0; 8]);
    let err = read(Format::RocksdbTrace, &t.0).unwrap_err();
    assert!(
        err.contains(&format!("byte offset {} (record 2)", header_len + 13)) && err.contains("0.2"),
        "{err}"
    );
}

#[test]
fn rocksdb_keys_carry_their_column_family_where_the_trace_has_several() {
    let mut r = vec![];
    entry(&mut r, 0x1, None, &[b"k", b"v0"]);
    entry(&mut r, 0x5, Some(300), &[b"k", b"v300"]);
    entry(&mut r, 0xE, Some(2), &[b"a", b"b"]);
    let mut write = vec![];
    lp(&mut write, &batch_rep(3, &r));
    let mut t = Built::new("0.2");
    t.record(1, 3, &v2(&[1], &write));
    let mut seek = 7u32.to_le_bytes().to_vec();
    [&b"key"[..], b"k", b"l"].iter().for_each(|s| lp(&mut seek, s));
    t.record(2, 5, &v2(&[4, 5, 6, 7], &seek));
    let mut s = source(Format::RocksdbTrace, &t.0, true, None, Pace::Fast);
    let rows = flat(drain(&mut s).unwrap());
    assert!(s.saw_column_families());
    let cf = |id: u32, key: &[u8]| [&id.to_be_bytes()[..], key].concat();
    assert_eq!(
        rows,
        vec![
            row(OpKind::Put, &cf(0, b"k"), b"v0", 0, 0),
            row(OpKind::Put, &cf(300, b"k"), b"v300", 0, 0),
            row(OpKind::DeleteRange, &[cf(2, b"a"), cf(2, b"b")].concat(), b"", 5, 0),
            row(OpKind::Scan, &cf(7, b"key"), b"", 1, 5),
        ]
    );
    // Read from a file, the summary finds the families and the replay follows it.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cf.trace");
    std::fs::write(&file, &t.0).unwrap();
    let whole = summary(&file, Format::RocksdbTrace, None).unwrap();
    assert!(whole.column_families);
    assert_eq!(whole.write_bytes, (5 + 2) + (5 + 4) + 10);
    let trace = Trace::new(single(&file, Format::RocksdbTrace), 1 << 30, 1.0);
    let mut phases = trace.phases(1);
    assert_eq!(flat(drain(phases[0].source.as_mut()).unwrap()), rows);
    assert!(trace.notes().iter().any(|n| n.contains("column family id")), "{:?}", trace.notes());
}

fn fixture(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rocksdb-7.8.3").join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn rocksdb_reads_traces_rocksdb_wrote() {
    let kinds = |name: &str, cf_keys: bool| {
        let mut s = source(Format::RocksdbTrace, &fixture(name), cf_keys, None, Pace::Fast);
        let batches = drain(&mut s).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut tally = Tally::default();
        for rows in &batches {
            for r in rows {
                tally.ops[r.kind as usize] += 1;
                tally.key_bytes[r.kind as usize] += r.key.len() as u64;
            }
        }
        (tally, batches, s)
    };
    let count = |t: &Tally, k: OpKind| t.ops[k as usize];
    let (t, batches, s) = kinds("fillrandom.trace", false);
    assert_eq!((count(&t, OpKind::Put), count(&t, OpKind::DeleteRange), s.records), (40, 2, 10));
    // Each Write record (4 puts, some with a range deletion) is its own atomic write.
    assert_eq!(batches.len(), 10);
    assert!(batches
        .iter()
        .flatten()
        .all(|r| r.key.len() == 12 + 12 * (r.kind == OpKind::DeleteRange) as usize));
    assert_eq!(count(&kinds("readrandom.trace", false).0, OpKind::Get), 10);
    let (t, batches, _) = kinds("multireadrandom.trace", false);
    assert_eq!((count(&t, OpKind::MultiGet), batches.len()), (8, 2));
    let (t, batches, _) = kinds("seekrandom.trace", false);
    assert_eq!(count(&t, OpKind::Scan), 10);
    assert!(batches.iter().flatten().all(|r| r.arg == 1 && r.prefix == 0));
    // Upper-bounded seeks: the read stays within the bytes key and bound share.
    let (_, batches, _) = kinds("seekrandom-bounded.trace", false);
    assert!(batches.iter().flatten().all(|r| r.kind == OpKind::Scan && r.prefix > 0), "{batches:?}");
    assert_eq!(count(&kinds("deleterandom.trace", false).0, OpKind::Delete), 40);
    assert_eq!(count(&kinds("mergerandom.trace", false).0, OpKind::Merge), 10);
    let (t, batches, s) = kinds("fillrandom-cf.trace", true);
    assert!(s.saw_column_families());
    assert_eq!(count(&t, OpKind::Put), 40);
    let families: std::collections::BTreeSet<Vec<u8>> =
        batches.iter().flatten().map(|r| r.key[..4].to_vec()).collect();
    assert!(families.len() >= 2 && families.iter().all(|f| f[..3] == [0, 0, 0]), "{families:?}");
}

/// `(offset, record)` of a reader's error.
fn located(format: Format, bytes: &[u8]) -> (At, String) {
    let mut r = reader(format, bytes, false);
    let mut batch = Batch::default();
    let mut values = vec![];
    loop {
        match r.next() {
            Ok(Some(_)) => {}
            Ok(None) => panic!("no error in {bytes:?}"),
            Err(TraceError { at, message }) => return (at, message),
        }
        let mut synthetic = 0;
        let mut sink = source::tests_sink(&mut batch, &mut values, &mut synthetic);
        if let Err(TraceError { at, message }) = r.decode(&mut sink) {
            return (at, message);
        }
    }
}

#[test]
fn rocksdb_errors_name_the_byte_offset_and_record() {
    let (good, _) = v2_trace();
    let header_len = 13 + u32::from_le_bytes(good[9..13].try_into().unwrap()) as u64;
    let at = |offset: u64, record: u64| At::Byte { offset, record };
    let check = |bytes: &[u8], expected: At, words: &str| {
        let (found, message) = located(Format::RocksdbTrace, bytes);
        assert_eq!(found, expected, "{message}");
        assert!(message.contains(words), "`{message}` lacks `{words}`");
        let err = read(Format::RocksdbTrace, bytes).unwrap_err();
        assert!(err.starts_with("test: ") && err.contains(&expected.to_string()), "{err}");
    };
    check(b"", at(0, 1), "empty file");
    check(&good[..5], at(0, 1), "13-byte head has only 5 bytes");
    check(&good[..40], at(13, 1), "the payload should have");
    let mut bad_magic = good.clone();
    bad_magic[13] = b'X';
    check(&bad_magic, at(0, 1), "not a RocksDB trace");
    let mut no_version = Built(vec![]);
    no_version.record(0, 1, b"feedcafedeadbeef\tTrace Version: x.2\tRocksDB Version: 7.8\t\n");
    check(&no_version.0, at(13, 1), "Trace Version");
    // Truncated in the second record's payload.
    check(&good[..header_len as usize + 20], at(header_len + 13, 2), "file ends after 7");
    // A field bit a Get record does not have.
    let mut t = Built::new("0.2");
    t.record(1, 4, &v2(&[2, 3, 9], &[0; 8]));
    check(&t.0, at(header_len + 13 + 8, 2), "field bit 9");
    // A key length past the payload: the error points at the key.
    let mut t = Built::new("0.2");
    let mut get = 0u32.to_le_bytes().to_vec();
    get.push(50);
    t.record(1, 4, &v2(&[2, 3], &get));
    check(&t.0, at(header_len + 13 + 8 + 4 + 1, 2), "key: needs 50 bytes");
    // Write batches: wrong count, unknown tag, too short, each in record 3.
    let write = |rep: &[u8]| {
        let mut t = Built::new("0.2");
        t.record(1, 4, &v2(&[2, 3], &[0, 0, 0, 0, 1, b'k']));
        let mut payload = vec![];
        lp(&mut payload, rep);
        t.record(2, 3, &v2(&[1], &payload));
        t.0
    };
    let second = header_len + 13 + 14;
    let rep_at = second + 13 + 8 + 1;
    let mut r = vec![];
    entry(&mut r, 0x1, None, &[b"k", b"v"]);
    check(&write(&batch_rep(2, &r)), at(rep_at + 8, 3), "holds 2 entries but has 1");
    check(&write(&batch_rep(1, &[0x14, 1, b'k'])), at(rep_at + 12, 3), "unknown write batch tag 0x14");
    check(&write(&[0; 5]), at(rep_at, 3), "shorter than its 12-byte header");
    entry(&mut r, 0x1, None, &[b"k"]);
    check(&write(&batch_rep(2, &r)), at(rep_at + 12 + 5 + 3, 3), "value: varint runs past the end");
    // A MultiGet of no keys, as RocksDB refuses it.
    let mut t = Built::new("0.2");
    t.record(1, 13, &v2(&[8], &0u32.to_le_bytes()));
    check(&t.0, at(header_len + 13 + 12, 2), "MultiGet of no keys");
}

#[test]
fn rocksdb_writer_round_trips_every_kind() {
    let mut batch = Batch::default();
    let corpus = b"0123456789abcdef".to_vec();
    let key = |k: &'static [u8]| move |out: &mut Vec<u8>| out.extend_from_slice(k);
    batch.push(OpKind::Put, key(b"p"), 0..4, 0);
    batch.push(OpKind::Merge, key(b"m"), 4..6, 0);
    batch.push(OpKind::Delete, key(b"d"), 0..0, 0);
    batch.push(OpKind::SingleDelete, key(b"s"), 0..0, 0);
    batch.push_range(OpKind::DeleteRange, b"a", b"b");
    batch.push_read(OpKind::Get, key(b"g"), 1, 0);
    batch.push_read(OpKind::MultiGet, key(b"x"), 0, 0);
    batch.push_read(OpKind::MultiGet, key(b"y"), 0, 0);
    batch.push_read(OpKind::Scan, key(b"pre\xff\xffz"), 100, 5);
    batch.push_read(OpKind::SeekForPrev, key(b"reg:12"), 1, 4);
    batch.push_read(OpKind::Scan, key(b"open"), 7, 0);
    batch.push_range(OpKind::CompactRange, b"a", b"z");
    batch.push(OpKind::Put, key(b"q"), 6..16, 0);
    let mut w = RocksdbWriter::new(vec![]).unwrap();
    w.write_batch(&batch, &corpus).unwrap();
    assert_eq!(w.dropped, 1);
    let bytes = w.finish().unwrap();
    let rows = flat(read(Format::RocksdbTrace, &bytes).unwrap());
    assert_eq!(
        rows,
        vec![
            row(OpKind::Put, b"p", b"0123", 0, 0),
            row(OpKind::Merge, b"m", b"45", 0, 0),
            row(OpKind::Delete, b"d", b"", 0, 0),
            row(OpKind::SingleDelete, b"s", b"", 0, 0),
            row(OpKind::DeleteRange, b"ab", b"", 1, 0),
            row(OpKind::Get, b"g", b"", 0, 0),
            row(OpKind::MultiGet, b"x", b"", 0, 0),
            row(OpKind::MultiGet, b"y", b"", 0, 0),
            // RocksDB's trace has no entry limit: its replayer reads one.
            row(OpKind::Scan, b"pre\xff\xffz", b"", 1, 5),
            row(OpKind::SeekForPrev, b"reg:12", b"", 1, 4),
            row(OpKind::Scan, b"open", b"", 1, 0),
            row(OpKind::Put, b"q", b"6789abcdef", 0, 0),
        ]
    );
}

#[test]
fn text_writers_round_trip_every_kind_and_awkward_keys() {
    let mut batch = Batch::default();
    let key = |k: &'static [u8]| move |out: &mut Vec<u8>| out.extend_from_slice(k);
    batch.push(OpKind::Put, key(b"a,b"), 0..4, 0);
    batch.push(OpKind::Merge, key(b" \"quoted\" "), 4..6, 0);
    batch.push(OpKind::Delete, key(b"0x12"), 0..0, 0);
    batch.push(OpKind::SingleDelete, key(b"\x00\xff\n"), 0..0, 0);
    batch.push_range(OpKind::DeleteRange, b"a", b"b");
    batch.push_read(OpKind::Get, key(b"#not a comment"), 0, 0);
    batch.push_read(OpKind::MultiGet, key(b"x"), 0, 0);
    batch.push_read(OpKind::MultiGet, key(b"y"), 0, 0);
    batch.push_read(OpKind::Scan, key(b"pre"), 100, 2);
    batch.push_read(OpKind::SeekForPrev, key(b"reg"), 0, 1);
    batch.push_range(OpKind::CompactRange, b"a", b"z");
    let expected: Vec<(OpKind, Vec<u8>, usize, u32, u16)> = batch
        .ops
        .iter()
        .map(|op| (op.kind, batch.key(op).to_vec(), op.value.len(), op.arg, op.prefix))
        .collect();
    for format in [Format::Csv, Format::Jsonl] {
        let mut w = match format {
            Format::Csv => text::TextWriter::csv(vec![]).unwrap(),
            _ => text::TextWriter::jsonl(vec![]),
        };
        w.write_batch(&batch).unwrap();
        w.write_batch(&batch).unwrap();
        let bytes = w.finish().unwrap();
        let batches = read(format, &bytes).unwrap();
        assert_eq!(batches.len(), 2, "{format:?}: {}", String::from_utf8_lossy(&bytes));
        for rows in batches {
            let got: Vec<_> =
                rows.iter().map(|r| (r.kind, r.key.clone(), r.value.len(), r.arg, r.prefix)).collect();
            assert_eq!(got, expected, "{format:?}");
        }
    }
}

#[test]
fn bounds_become_the_key_prefix_they_keep_to() {
    use super::rocksdb::{bounds_prefix, successor};
    assert_eq!(successor(b"ab\xff"), b"ac");
    assert_eq!(successor(b"\xff\xff"), b"");
    assert_eq!(bounds_prefix(b"abcd", b"ab", b"ac", false), 2);
    assert_eq!(bounds_prefix(b"abcd", b"ab", b"", true), 2);
    assert_eq!(bounds_prefix(b"abcd", b"", b"abd", false), 2);
    assert_eq!(bounds_prefix(b"abcd", b"aa", b"", true), 1);
    assert_eq!(bounds_prefix(b"abcd", b"", b"", false), 0);
    assert_eq!(bounds_prefix(b"abcd", b"aa", b"", false), 0);
}

// ---- Text traces ----

const CSV_EVERY_OP: &str = "\
# a comment
put,user:1,size:5,100,7
put,0x00ff,0x0102,,7
merge,user:1,hello,,
delete,user:2
single_delete,user:3
delete_range,a,0x63
get,user:1
multi_get,k1,,,9
multi_get,k2,,,9
seek,user:,,,,5
seek_for_prev,user:9,,,,5
scan,user:,100,,,5
compact_range,a,z
";

fn every_op_rows(sized: &[u8]) -> Vec<Row> {
    vec![
        row(OpKind::Put, b"user:1", sized, 0, 0),
        row(OpKind::Put, b"\x00\xff", b"\x01\x02", 0, 0),
        row(OpKind::Merge, b"user:1", b"hello", 0, 0),
        row(OpKind::Delete, b"user:2", b"", 0, 0),
        row(OpKind::SingleDelete, b"user:3", b"", 0, 0),
        row(OpKind::DeleteRange, b"ac", b"", 1, 0),
        row(OpKind::Get, b"user:1", b"", 0, 0),
        row(OpKind::MultiGet, b"k1", b"", 0, 0),
        row(OpKind::MultiGet, b"k2", b"", 0, 0),
        row(OpKind::Scan, b"user:", b"", 1, 5),
        row(OpKind::SeekForPrev, b"user:9", b"", 0, 5),
        row(OpKind::Scan, b"user:", b"", 100, 5),
        row(OpKind::CompactRange, b"az", b"", 1, 0),
    ]
}

#[test]
fn csv_reads_every_op() {
    let batches = read(Format::Csv, CSV_EVERY_OP.as_bytes()).unwrap();
    let rows = flat(batches.clone());
    assert_eq!(rows[0].value.len(), 5);
    assert_eq!(rows, every_op_rows(&rows[0].value.clone()));
    // Lines of batch 7 are one atomic write, the unbatched merge its own; the
    // two multi-gets of batch 9 are one batch (one call), apart from the rest.
    let sizes: Vec<usize> = batches.iter().map(|b| b.len()).collect();
    assert_eq!(sizes, [2, 1, 1, 1, 2, 2, 4]);
    // The same lines with their columns named in another order.
    let reordered = "prefix,batch,key,op,arg\n,,user:1,put,size:3\n5,,user:,scan,10\n";
    let rows = flat(read(Format::Csv, reordered.as_bytes()).unwrap());
    assert_eq!(rows[1], row(OpKind::Scan, b"user:", b"", 10, 5));
    assert_eq!(rows[0].value.len(), 3);
    // A byte order mark and Windows line ends are no trouble.
    let rows = flat(read(Format::Csv, "\u{feff}op,key\r\nget,k\r\n".as_bytes()).unwrap());
    assert_eq!(rows, [row(OpKind::Get, b"k", b"", 0, 0)]);
}

#[test]
fn jsonl_reads_every_op() {
    let text = r#"{"op":"put","key":"user:1","value_size":5,"time_us":100,"batch":7}
{"op":"put","key":"0x00ff","value":"0x0102","batch":7}

{"op":"merge","key":"user:1","value":"hello"}
{"op":"delete","key":"user:2"}
{"op":"single_delete","key":"user:3"}
{"op":"delete_range","key":"a","end":"0x63"}
{"op":"get","key":"user:1"}
{"op":"multi_get","keys":["k1","k2"]}
{"op":"seek","key":"user:","prefix":5}
{"op":"seek_for_prev","key":"user:9","prefix":5}
{"op":"scan","key":"user:","limit":100,"prefix":5}
{"op":"compact_range","key":"a","end":"z"}
{"op":"get","key":"esc\"aped\u0001"}
"#;
    let batches = read(Format::Jsonl, text.as_bytes()).unwrap();
    let mut rows = flat(batches.clone());
    assert_eq!(rows.pop().unwrap(), row(OpKind::Get, b"esc\"aped\x01", b"", 0, 0));
    assert_eq!(rows, every_op_rows(&rows[0].value.clone()));
    assert_eq!(batches.len(), 5);
}

#[test]
fn text_errors_name_the_line_and_field() {
    let line = |line: u64, field: Option<&'static str>| At::Line { line, field };
    let cases: [(Format, &str, At, &str); 16] = [
        (Format::Csv, "op,key\nget,k,,\nget,k,5\n", line(3, None), "3 fields, but the lines have 2 columns"),
        (Format::Csv, "get,\"k\nget,k\n", line(1, None), "quoted field is never closed"),
        (
            Format::Csv,
            "put,k,size:1\nfrobnicate,k\n",
            line(2, Some("op")),
            "unknown op `frobnicate`: ops are put",
        ),
        (Format::Csv, "put,k\n", line(1, Some("arg")), "put needs a value"),
        (Format::Csv, "get,k,5\n", line(1, Some("arg")), "get takes no arg"),
        (Format::Csv, "#c\n\nput,0xZZ,size:1\n", line(3, Some("key")), "`0xZZ` is not hex"),
        (Format::Csv, "put,k,size:x\n", line(1, Some("arg")), "`x` is not a size"),
        (Format::Csv, "scan,k,0\n", line(1, Some("arg")), "entry limit of 1 or more"),
        (Format::Csv, "get,k,,soon\n", line(1, Some("time_us")), "`soon` is not a time"),
        (Format::Csv, "op,key,when\n", line(1, None), "unknown column `when`"),
        (Format::Csv, "scan,k,1,,,70000\n", line(1, Some("prefix")), "at most 65535"),
        (
            Format::Jsonl,
            "{\"op\":\"get\",\"key\":\"k\"}\n{\"op\":\"get\",\"kye\":\"k\"}\n",
            line(2, None),
            "unknown field `kye`",
        ),
        (
            Format::Jsonl,
            "{\"op\":\"put\",\"key\":\"k\",\"value_size\":\"9\"}\n",
            line(1, Some("value_size")),
            "expected a whole number",
        ),
        (Format::Jsonl, "{\"key\":\"k\"}\n", line(1, Some("op")), "missing"),
        (Format::Jsonl, "{\"op\":\"put\",\"key\":\"k\"\n", line(1, None), "not JSON"),
        (
            Format::Jsonl,
            "{\"op\":\"get\",\"key\":\"k\",\"limit\":3}\n",
            line(1, Some("limit")),
            "get takes no limit",
        ),
    ];
    for (format, text, at, words) in cases {
        let (found, message) = located(format, text.as_bytes());
        assert_eq!(found, at, "{text}: {message}");
        assert!(message.contains(words), "{text}: `{message}` lacks `{words}`");
    }
}

// ---- Batching, pace, scaling, caching ----

#[test]
fn batches_never_join_two_recorded_calls() {
    // Three writes, two multi-gets, then gets: without batch numbers each
    // line is its own call, so writes and multi-gets each end a batch.
    let text = "put,a,x\nput,b,x\nput,c,x\nmulti_get,a\nmulti_get,b\nget,a\nget,b\n";
    let sizes: Vec<usize> = read(Format::Csv, text.as_bytes()).unwrap().iter().map(Vec::len).collect();
    assert_eq!(sizes, [1, 1, 2, 3]);
    // Gets alone pack up to the batch size.
    let gets = "get,k\n".repeat(source::BATCH_OPS + 5);
    let sizes: Vec<usize> = read(Format::Csv, gets.as_bytes()).unwrap().iter().map(Vec::len).collect();
    assert_eq!(sizes, [source::BATCH_OPS, 5]);
}

#[test]
fn recorded_pace_waits_for_each_records_time_and_fast_does_not() {
    let text = "get,a,,5000000\nget,b,,5100000\nget,c,,5250000\n";
    let started = Instant::now();
    let batches = drain(&mut source(Format::Csv, text.as_bytes(), false, None, Pace::Recorded)).unwrap();
    let took = started.elapsed();
    assert_eq!(batches.len(), 3, "one record a batch at the recorded pace");
    assert!(took >= Duration::from_millis(250) && took < Duration::from_millis(1000), "{took:?}");
    let started = Instant::now();
    let batches = drain(&mut source(Format::Csv, text.as_bytes(), false, None, Pace::Fast)).unwrap();
    assert!(started.elapsed() < Duration::from_millis(100) && batches.len() == 1);
}

fn write_file(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn recorded_budget_replays_that_share_of_each_phase() {
    let dir = tempfile::tempdir().unwrap();
    let load: String = (0..1000).map(|i| format!("put,key{i:04},size:100\n")).collect();
    write_file(dir.path(), "load.csv", &load);
    write_file(dir.path(), "run.jsonl", &"{\"op\":\"get\",\"key\":\"key0001\"}\n".repeat(400));
    let toml = "name = \"mine\"\ngenerator = \"trace\"\n[trace]\nrecorded_budget = \"64M\"\nwarmup_share = 0.1\n\
                phases = [{ name = \"load\", file = \"load.csv\" }, { name = \"run\", file = \"run.jsonl\", warmup_ops = 40 }]\n";
    let toml_path = write_file(dir.path(), "mine.toml", toml);
    let dataset = Dataset::find(toml_path.to_str().unwrap()).unwrap();
    let whole = dataset.workload(64 << 20);
    let quarter = dataset.workload(16 << 20);
    assert_eq!(whole.shape().keys, 1000);
    assert_eq!(whole.shape().user_bytes, 1000 * 107);
    assert_eq!(quarter.shape().keys, 250);
    let mut phases = quarter.phases(1);
    let counts: Vec<usize> =
        phases.iter_mut().map(|p| flat(drain(p.source.as_mut()).unwrap()).len()).collect();
    assert_eq!(counts, [250, 100]);
    assert_eq!(phases.iter().map(|p| p.warmup_ops).collect::<Vec<_>>(), [25, 10]);
    assert!(quarter.notes()[0].contains("first 25.000%"), "{:?}", quarter.notes());
    // A larger budget than recorded replays it all, never more.
    let mut phases = dataset.workload(1 << 30).phases(1);
    assert_eq!(flat(drain(phases[0].source.as_mut()).unwrap()).len(), 1000);
    // A data ratio asks for a share of the data, capped at the whole trace.
    let half = dataset.clone().with_data_ratio(107_000.0 / 2.0 / (64 << 20) as f64).unwrap();
    assert_eq!(half.workload(64 << 20).shape().keys, 500);
}

#[test]
fn a_trace_deletes_ranges_at_every_budget_if_its_whole_file_does() {
    let dir = tempfile::tempdir().unwrap();
    let plain = write_file(dir.path(), "p.csv", "put,a,size:10\nput,b,size:10\n");
    assert!(!Trace::new(single(&plain, Format::Csv), 1 << 30, 1.0).deletes_ranges());
    let drops = write_file(dir.path(), "d.csv", "put,a,size:10\nput,b,size:10\ndelete_range,a,c\n");
    let mut params = single(&drops, Format::Csv);
    params.recorded_budget = Some(2 << 30);
    // Half the budget it was recorded at replays the first half, before the range delete.
    let half = Trace::new(params, 1 << 30, 1.0);
    assert!(half.fraction < 1.0);
    assert!(half.deletes_ranges());
}

#[test]
fn shape_is_read_once_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(dir.path(), "t.csv", "put,a,size:10\nput,b,size:10\n");
    let trace = Trace::new(single(&path, Format::Csv), 1 << 30, 1.0);
    assert_eq!(trace.shape().keys, 2);
    // Same length and modification time, other content: the kept summary answers.
    let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
    std::fs::write(&path, "put,c,size:10\nput,c,size:10\n").unwrap();
    std::fs::File::options().write(true).open(&path).unwrap().set_modified(modified).unwrap();
    let again = Trace::new(single(&path, Format::Csv), 1 << 30, 1.0);
    assert_eq!(again.shape().keys, 2);
    // A changed file is read again.
    std::fs::write(&path, "put,c,size:10\n").unwrap();
    assert_eq!(Trace::new(single(&path, Format::Csv), 1 << 30, 1.0).shape().keys, 1);
}

#[test]
fn a_trace_file_is_a_one_phase_dataset_and_a_bad_one_fails_when_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(dir.path(), "orders", "op,key,arg\nput,o:1,size:10\nget,o:1\n");
    let d = Dataset::find(path.to_str().unwrap()).unwrap();
    assert_eq!((d.name.as_str(), d.generator.as_str()), ("orders", "trace"));
    let w = d.workload(1 << 30);
    assert_eq!(w.phase_names(), ["replay"]);
    // Relative phase files are found beside the dataset file, from anywhere.
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let toml = write_file(&sub, "d.toml", "name = \"d\"\ngenerator = \"trace\"\n[trace]\nphases = [{ name = \"p\", file = \"../orders\", format = \"csv\" }]\n");
    let d = Dataset::find(toml.to_str().unwrap()).unwrap();
    assert!(d.trace.as_ref().unwrap().phases[0].file.is_absolute());
    assert_eq!(d.workload(1 << 30).shape().keys, 1);
    // A corrupt trace fails at `find`, naming the phase, file, line and field.
    write_file(dir.path(), "orders", "put,o:1,size:10\nget,o:1,9\n");
    let err = Dataset::find(toml.to_str().unwrap()).unwrap_err().to_string();
    assert!(err.contains("phase `p`") && err.contains("orders: line 2, field `arg`"), "{err}");
    let missing = write_file(
        &sub,
        "m.toml",
        "name = \"m\"\ngenerator = \"trace\"\n[trace]\nphases = [{ name = \"p\", file = \"nope.csv\" }]\n",
    );
    let err = Dataset::find(missing.to_str().unwrap()).unwrap_err().to_string();
    assert!(err.contains("nope.csv"), "{err}");
}

#[test]
fn pace_recorded_needs_a_trace() {
    let spork = Dataset::find("spork").unwrap();
    assert!(spork.clone().with_pace(Pace::Fast).is_ok());
    let err = spork.with_pace(Pace::Recorded).unwrap_err().to_string();
    assert!(err.contains("needs a trace dataset"), "{err}");
}

// ---- Export ----

/// Ops, key and value bytes by kind, batches, and hashes of every key and
/// value in order, of each phase.
fn fingerprint(workload: &dyn Workload, seed: u64) -> Vec<(String, Tally, u64, u64, u64)> {
    let hash =
        |h: u64, bytes: &[u8]| bytes.iter().fold(h, |h, &b| crate::dataset::values::mix64(h ^ b as u64));
    let mut out = vec![];
    for mut phase in workload.phases(seed) {
        let (mut tally, mut keys, mut values) = (Tally::default(), 0, 0);
        let mut batch = Batch::default();
        while phase.source.next_batch(&mut batch) {
            tally.add(&batch);
            for op in &batch.ops {
                keys = hash(keys, batch.key(op));
                values = hash(values, &phase.source.corpus()[op.value.start as usize..op.value.end as usize]);
            }
        }
        assert!(phase.source.take_error().is_none());
        out.push((phase.name, tally, keys, values, phase.warmup_ops));
    }
    out
}

#[test]
fn export_round_trip_keeps_ops_keys_and_values() {
    let spork = Dataset::find("spork").unwrap();
    let budget = 16 << 20;
    let generated = fingerprint(spork.workload(budget).as_ref(), 3);
    let dir = tempfile::tempdir().unwrap();
    for format in [Format::RocksdbTrace, Format::Csv, Format::Jsonl] {
        let out = dir.path().join(format!("{format:?}/x.toml"));
        let exported = export(&spork, budget, 3, format, &out).unwrap();
        assert_eq!(exported.phases.len(), 3);
        let back = Dataset::find(out.to_str().unwrap()).unwrap();
        assert_eq!(back.prefix_len, spork.prefix_len);
        let read = fingerprint(back.workload(budget).as_ref(), 99);
        for (g, r) in generated.iter().zip(&read) {
            assert_eq!(
                (&g.0, &g.1, g.2, g.4),
                (&r.0, &r.1, r.2, r.4),
                "{format:?}: ops, bytes or warm-up differ"
            );
            // Values: the bytes themselves in a RocksDB trace; sizes in text.
            if g.1.value_bytes.iter().sum::<u64>() > 0 {
                assert_eq!(g.3 == r.3, format == Format::RocksdbTrace, "{format:?} {}", g.0);
            }
        }
        // Exported at a budget, replayed at a quarter of it: a quarter of each phase.
        let quarter = fingerprint(back.workload(budget / 4).as_ref(), 1);
        for (g, q) in generated.iter().zip(&quarter) {
            assert_eq!(q.1.total_ops(), g.1.total_ops().div_ceil(4), "{}", g.0);
        }
    }
}

#[test]
fn exported_traces_replay_through_rocksdb_with_the_generated_counts() {
    use crate::engine::Engine;
    use crate::trial::{replay_workload, TrialSpec};
    let budget = 16 << 20;
    let spork = Dataset::find("spork").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run = |dataset: Dataset, name: &str| {
        let engine = crate::engine::rocksdb::RocksDb;
        let spec = TrialSpec {
            engine: "rocksdb".into(),
            candidate: engine.defaults(budget),
            dataset,
            budget,
            seed: 5,
        };
        let report = replay_workload(&spec, &dir.path().join(name)).unwrap();
        report.phases.iter().map(|p| (p.name.clone(), p.ops, p.write_bytes)).collect::<Vec<_>>()
    };
    let generated = run(spork.clone(), "spork");
    for format in [Format::RocksdbTrace, Format::Csv] {
        let out = dir.path().join(format!("x-{format:?}.toml"));
        export(&spork, budget, 5, format, &out).unwrap();
        let replayed = run(Dataset::find(out.to_str().unwrap()).unwrap(), &format!("{format:?}"));
        assert_eq!(replayed, generated, "{format:?}");
    }
}

/// RocksDB's own `db_bench` replays an exported trace and holds every key
/// it wrote (skipped where db_bench is not installed: Debian's rocksdb-tools).
#[test]
fn db_bench_replays_an_exported_trace() {
    let path = std::env::var_os("PATH").unwrap_or_default();
    if !std::env::split_paths(&path).any(|dir| dir.join("db_bench").is_file()) {
        eprintln!("db_bench not installed (apt-get install rocksdb-tools): skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let spork = Dataset::find("spork").unwrap();
    let out = dir.path().join("x.toml");
    let exported = export(&spork, 16 << 20, 2, Format::RocksdbTrace, &out).unwrap();
    let db = dir.path().join("db");
    for (i, phase) in exported.phases.iter().enumerate() {
        let run = std::process::Command::new("db_bench")
            .arg("--benchmarks=replay")
            .arg(format!("--trace_file={}", phase.file.display()))
            .arg(format!("--db={}", db.display()))
            // db_bench hands the replayer column family handles only with 2 or more.
            .arg("--num_column_families=2")
            .arg(format!("--use_existing_db={}", (i > 0) as u8))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&run.stdout);
        assert!(text.contains("Replay completed"), "{}{}", text, String::from_utf8_lossy(&run.stderr));
    }
    let scan = std::process::Command::new("ldb")
        .arg(format!("--db={}", db.display()))
        .args(["--hex", "scan"])
        .output();
    let Ok(scan) = scan else { return };
    let keys = String::from_utf8_lossy(&scan.stdout).lines().count() as u64;
    let written = Dataset::find(out.to_str().unwrap()).unwrap().workload(16 << 20).shape().keys;
    assert_eq!(keys, written);
}

// ---- Fuzzing: random and mutated bytes never panic a reader ----

fn fuzz_secs() -> f64 {
    std::env::var("KVTUNE_FUZZ_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(3.0)
}

/// A mutation of one of `seeds`: bit flips, a truncation, a splice of two,
/// inserted or repeated bytes, or fresh random bytes.
fn mutate(rng: &mut StdRng, seeds: &[Vec<u8>], alphabet: &[u8]) -> Vec<u8> {
    let pick = |rng: &mut StdRng| seeds[rng.random_range(0..seeds.len())].clone();
    let mut bytes = pick(rng);
    for _ in 0..rng.random_range(1..=3) {
        let at = |rng: &mut StdRng, len: usize| rng.random_range(0..=len);
        match rng.random_range(0..10) {
            0 | 1 if !bytes.is_empty() => {
                let i = rng.random_range(0..bytes.len());
                bytes[i] ^= 1 << rng.random_range(0..8);
            }
            2 => bytes.truncate(at(rng, bytes.len())),
            3 | 4 => {
                let other = pick(rng);
                let (a, b) = (at(rng, bytes.len()), at(rng, other.len()));
                bytes = [&bytes[..a], &other[b..]].concat();
            }
            5 => {
                let i = at(rng, bytes.len());
                let n = rng.random_range(1..16);
                let noise: Vec<u8> = (0..n).map(|_| alphabet[rng.random_range(0..alphabet.len())]).collect();
                bytes.splice(i..i, noise);
            }
            6 if bytes.len() > 4 => {
                let (a, b) = (at(rng, bytes.len() - 1), at(rng, bytes.len() - 1));
                let chunk = bytes[a.min(b)..a.max(b)].to_vec();
                let i = at(rng, bytes.len());
                bytes.splice(i..i, chunk);
            }
            7 | 8 if !bytes.is_empty() => {
                let i = rng.random_range(0..bytes.len());
                bytes[i] = rng.random();
            }
            9 => {
                bytes = (0..rng.random_range(0..300))
                    .map(|_| alphabet[rng.random_range(0..alphabet.len())])
                    .collect()
            }
            _ => {}
        }
    }
    bytes
}

/// Feeds mutations of `seeds` to the `format` reader for the fuzz time;
/// a panic saves its input and fails with the seed to reproduce it.
fn fuzz(format: Format, seeds: Vec<Vec<u8>>, alphabet: &[u8]) {
    let seed = std::env::var("KVTUNE_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64)
    });
    let mut rng = StdRng::seed_from_u64(seed);
    let deadline = Instant::now() + Duration::from_secs_f64(fuzz_secs());
    let (mut runs, mut failed) = (0u64, 0u64);
    while Instant::now() < deadline {
        let input = mutate(&mut rng, &seeds, alphabet);
        let limit = rng.random_bool(0.2).then(|| rng.random_range(0..50));
        let cf_keys = rng.random_bool(0.5);
        let outcome =
            catch_unwind(AssertUnwindSafe(|| drain(&mut source(format, &input, cf_keys, limit, Pace::Fast))));
        match outcome {
            Ok(result) => failed += result.is_err() as u64,
            Err(_) => {
                let path = std::env::temp_dir().join(format!("kvtune-fuzz-{format:?}-{seed}.bin"));
                let _ = std::fs::write(&path, &input);
                panic!("{format:?} reader panicked on {} (KVTUNE_FUZZ_SEED={seed})", path.display());
            }
        }
        runs += 1;
    }
    eprintln!("fuzz {format:?}: {runs} inputs, {failed} rejected with an error, no panic (seed {seed})");
    assert!(runs > 100, "{runs}");
}

fn all_bytes() -> Vec<u8> {
    (0..=255).collect()
}

#[test]
fn fuzz_rocksdb_reader() {
    let (v2, _) = v2_trace();
    let mut v1 = Built::new("0.1");
    v1.record(1, 3, &every_write().0).record(2, 4, &[0, 0, 0, 0, 1, b'k']);
    let mut w = RocksdbWriter::new(vec![]).unwrap();
    let mut batch = Batch::default();
    batch.push(OpKind::Put, |k| k.extend_from_slice(b"key"), 0..3, 0);
    batch.push_read(OpKind::MultiGet, |k| k.extend_from_slice(b"a"), 0, 0);
    batch.push_read(OpKind::Scan, |k| k.extend_from_slice(b"abc"), 3, 2);
    w.write_batch(&batch, b"val").unwrap();
    let written = w.finish().unwrap();
    let fixtures =
        ["fillrandom.trace", "multireadrandom.trace", "seekrandom-bounded.trace", "fillrandom-cf.trace"];
    let mut seeds = vec![v2, v1.0, written];
    seeds.extend(fixtures.iter().map(|f| fixture(f)));
    fuzz(Format::RocksdbTrace, seeds, &all_bytes());
}

/// Bytes text traces are made of, so mutations stay near-valid.
const TEXT_ALPHABET: &[u8] = b"0123456789abcdefx:,\n\"{}[]#size_opkeyvaluelimitprefixbatchtime -\\";

#[test]
fn fuzz_csv_reader() {
    let seeds = vec![
        CSV_EVERY_OP.as_bytes().to_vec(),
        b"prefix,batch,key,op,arg\n,,user:1,put,size:3\n5,,user:,scan,10\n".to_vec(),
        b"\"quoted,key\",x\nput,\"a\"\"b\",size:99999999999\nget,\"multi\nline\"\n".to_vec(),
    ];
    let mut alphabet = TEXT_ALPHABET.to_vec();
    alphabet.extend(all_bytes().iter().step_by(17));
    fuzz(Format::Csv, seeds, &alphabet);
}

#[test]
fn fuzz_jsonl_reader() {
    let seeds = vec![
        br#"{"op":"put","key":"user:1","value_size":5,"time_us":100,"batch":7}
{"op":"multi_get","keys":["k1","0x6b32"]}
{"op":"scan","key":"user:","limit":100,"prefix":5}
{"op":"delete_range","key":"a","end":"0x63"}
"#
        .to_vec(),
        b"{\"op\":\"get\",\"key\":\"\\u00e9\\\"\"}\n{\"op\":\"put\",\"key\":\"k\",\"value\":\"0x00\"}\n"
            .to_vec(),
    ];
    let mut alphabet = TEXT_ALPHABET.to_vec();
    alphabet.extend(all_bytes().iter().step_by(17));
    fuzz(Format::Jsonl, seeds, &alphabet);
}
