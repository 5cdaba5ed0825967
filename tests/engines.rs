//! One contract every engine passes through the `Engine` trait, on real
//! stores: writes, point reads, multi-gets, reverse seeks in a prefix,
//! prefix scans, deletes and range deletes, batched calls, flush, settle,
//! sizes on disk; and each engine's built-in search space is one it takes.
//! The Go engines need Go to build their driver: without it they are
//! skipped, unless KVTUNE_REQUIRE_GO is set (CI sets it).

use kvtune::budget::MIB;
use kvtune::dataset::ops::{calls, Batch, OpKind};
use kvtune::engine::{Engine, KvStore, Read, ENGINES};
use kvtune::space::Space;

const BUDGET: u64 = 64 * MIB;

/// Values are slices of this corpus: the n-th key's value is n + 10 bytes.
fn corpus() -> Vec<u8> {
    (0..255u8).collect()
}

fn put(batch: &mut Batch, key: &str, len: u32) {
    batch.push(OpKind::Put, |k| k.extend_from_slice(key.as_bytes()), 0..len, 0);
}

/// Whether the engine can run here; a Go engine without Go is skipped
/// unless the run requires Go.
fn available(engine: &dyn Engine) -> bool {
    match engine.prepare() {
        Ok(()) => true,
        Err(e) if std::env::var_os("KVTUNE_REQUIRE_GO").is_none() => {
            eprintln!("skipping {}: {e:#}", engine.name());
            false
        }
        Err(e) => panic!("{} cannot run and KVTUNE_REQUIRE_GO is set: {e:#}", engine.name()),
    }
}

fn scratch(name: &str) -> tempfile::TempDir {
    let root = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    tempfile::Builder::new().prefix(name).tempdir_in(root).unwrap()
}

fn open(engine: &dyn Engine, dir: &std::path::Path) -> Box<dyn KvStore> {
    engine.open(&engine.defaults(BUDGET), BUDGET, dir).unwrap_or_else(|e| panic!("{}: {e:#}", engine.name()))
}

fn found(entries: u64, bytes: u64) -> Read {
    Read { entries, bytes }
}

fn contract(engine: &dyn Engine) {
    let name = engine.name();
    let dir = scratch(name);
    let mut store = open(engine, &dir.path().join("db"));
    let corpus = corpus();
    let mut batch = Batch::default();
    for i in 1..=9u32 {
        put(&mut batch, &format!("a/{i}"), 10 + i);
    }
    for i in 1..=5u32 {
        put(&mut batch, &format!("b/{i}"), 20 + i);
    }
    batch.push(OpKind::Delete, |k| k.extend_from_slice(b"a/3"), 0..0, 0);
    batch.push_range(OpKind::DeleteRange, b"b/2", b"b/4");
    let writes = batch.ops.clone();
    store.write(&batch, &writes, &corpus).unwrap();

    assert_eq!(store.get(b"a/1").unwrap(), found(1, 11), "{name}: get");
    assert_eq!(store.get(b"a/3").unwrap(), found(0, 0), "{name}: a deleted key");
    assert_eq!(store.get(b"b/2").unwrap(), found(0, 0), "{name}: a key in a deleted range");
    assert_eq!(store.get(b"b/4").unwrap(), found(1, 24), "{name}: the range's end stays");
    assert_eq!(store.multi_get(&[b"a/1", b"a/2", b"zz"]).unwrap(), found(2, 23), "{name}: multi get");

    assert_eq!(store.seek_for_prev(b"a/5x", 2).unwrap(), found(1, 15), "{name}: reverse seek");
    assert_eq!(store.seek_for_prev(b"a/0", 2).unwrap(), found(0, 0), "{name}: nothing below in the prefix");
    assert_eq!(store.seek_for_prev(b"b/3", 2).unwrap(), found(1, 21), "{name}: reverse seek past deletes");
    assert_eq!(store.seek_for_prev(b"b/0", 0).unwrap(), found(1, 19), "{name}: unbounded reverse seek");

    let a: u64 = (1..=9u64).filter(|i| *i != 3).map(|i| 10 + i).sum();
    assert_eq!(store.scan(b"a/", 100, 2).unwrap(), found(8, a), "{name}: prefix scan");
    assert_eq!(store.scan(b"a/", 3, 2).unwrap(), found(3, 11 + 12 + 14), "{name}: scan limit");
    assert_eq!(
        store.scan(b"b/", 100, 2).unwrap(),
        found(3, 21 + 24 + 25),
        "{name}: scan past a range delete"
    );

    // A batch of calls, as the replay makes them: one result per call.
    let mut reads = Batch::default();
    reads.push_read(OpKind::Get, |k| k.extend_from_slice(b"a/9"), 0, 0);
    reads.push_read(OpKind::MultiGet, |k| k.extend_from_slice(b"a/1"), 0, 0);
    reads.push_read(OpKind::MultiGet, |k| k.extend_from_slice(b"b/5"), 0, 0);
    reads.push_read(OpKind::Scan, |k| k.extend_from_slice(b"b/"), 2, 2);
    put(&mut reads, "c/1", 30);
    reads.push_range(OpKind::CompactRange, b"a", b"z");
    let calls = calls(&reads.ops);
    let mut out = vec![];
    store.run_calls(&reads, &corpus, &calls, &mut out).unwrap();
    let got: Vec<Option<Read>> = out.iter().map(|t| t.read).collect();
    assert_eq!(
        got,
        vec![Some(found(1, 19)), Some(found(2, 36)), Some(found(2, 45)), None, None],
        "{name}: batched calls"
    );
    assert_eq!(store.get(b"c/1").unwrap(), found(1, 30), "{name}: a batched write");

    store.flush().unwrap();
    store.settle().unwrap();
    assert!(store.disk_bytes() > 0, "{name}: nothing on disk after a flush");
    let _ = (store.metrics(), store.memory());
    drop(store);

    // The engine's own forms of its defaults, and its built-in space.
    let files = engine.options_file(&engine.defaults(BUDGET), BUDGET, dir.path()).unwrap();
    assert!(files.iter().all(|f| !f.text.is_empty()), "{name}: an empty options file");
    if name == "pebble" {
        let written = files.iter().find(|f| f.name == "OPTIONS").expect("Pebble's own OPTIONS file");
        assert!(
            written.text.contains("[Options]") && written.text.contains("mem_table_size="),
            "{}",
            written.text
        );
    }
    let space = Space::find(name, &engine.param_names()).unwrap();
    engine.check_space(&space, 128 * 1024 * MIB).unwrap();
}

#[test]
fn every_engine_keeps_the_contract() {
    let ran: Vec<&str> = ENGINES
        .iter()
        .filter(|e| available(**e))
        .map(|e| {
            contract(*e);
            e.name()
        })
        .collect();
    assert!(ran.contains(&"rocksdb"));
    eprintln!("engines that kept the contract: {}", ran.join(", "));
}
