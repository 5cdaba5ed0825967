//! What users hand kvtune (search spaces, dataset files, presets, journals,
//! CSV and JSON-lines traces), valid files mutated at random: every loader
//! returns a value or an error, and never panics. Seeded, so a failure
//! repeats; the input that broke a loader is printed.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use kvtune::dataset::trace::{summary, Format};
use kvtune::dataset::Dataset;
use kvtune::engine::{rocksdb::RocksDb, Engine};
use kvtune::report::Preset;
use kvtune::space::Space;
use kvtune::study::journal::Journal;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Mutated copies of each input tried.
const MUTANTS: usize = 1000;

/// `seed` with one to four random edits: a byte changed, a range deleted or
/// repeated, random bytes inserted, the end cut off.
fn mutate(seed: &[u8], rng: &mut StdRng) -> Vec<u8> {
    let mut bytes = seed.to_vec();
    for _ in 0..rng.random_range(1..=4) {
        let len = bytes.len().max(1);
        let at = rng.random_range(0..len).min(bytes.len());
        match rng.random_range(0..5) {
            0 if !bytes.is_empty() => {
                let last = bytes.len() - 1;
                bytes[at.min(last)] = rng.random();
            }
            1 => {
                let end = (at + rng.random_range(1..16)).min(bytes.len());
                bytes.drain(at..end);
            }
            2 => {
                let end = (at + rng.random_range(1..32)).min(bytes.len());
                let copy = bytes[at..end].to_vec();
                bytes.splice(at..at, copy);
            }
            3 => {
                let noise: Vec<u8> = (0..rng.random_range(1..8)).map(|_| rng.random()).collect();
                bytes.splice(at..at, noise);
            }
            _ => bytes.truncate(at),
        }
    }
    bytes
}

/// Runs `load` on `MUTANTS` mutations of `seed` (and on `seed` itself, which
/// must load), failing on the first panic with the input that caused it.
fn survives(name: &str, seed: &[u8], load: impl Fn(&[u8]) -> bool) {
    assert!(load(seed), "{name}: the unmutated input does not load");
    let mut rng = StdRng::seed_from_u64(name.len() as u64 * 7919);
    let mut refused = 0;
    for _ in 0..MUTANTS {
        let input = mutate(seed, &mut rng);
        match catch_unwind(AssertUnwindSafe(|| load(&input))) {
            Ok(loaded) => refused += usize::from(!loaded),
            Err(_) => panic!("{name} panicked on:\n{}", String::from_utf8_lossy(&input)),
        }
    }
    eprintln!("{name}: {MUTANTS} mutants, {refused} refused with an error, none panicked");
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn in_file(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn search_spaces_survive_mutation() {
    let seed = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/search-spaces/rocksdb.toml")).unwrap();
    let names = RocksDb.param_names();
    survives("search space", &seed, |bytes| {
        Space::parse("fuzz", &text(bytes), &names).is_ok_and(|s| RocksDb.check_space(&s, 1 << 30).is_ok())
    });
}

#[test]
fn dataset_files_survive_mutation() {
    let seed = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/tsdb.toml")).unwrap();
    survives("dataset file", &seed, |bytes| {
        Dataset::parse("fuzz.toml", &text(bytes)).is_ok_and(|d| {
            let workload = d.workload(64 << 20);
            !workload.phase_names().is_empty() && workload.shape().keys > 0
        })
    });
}

#[test]
fn presets_survive_mutation() {
    let seed =
        std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/spork-128GiB.preset.toml")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    survives("preset", &seed, |bytes| {
        Preset::load(&in_file(dir.path(), "preset.toml", bytes)).is_ok_and(|p| {
            RocksDb.resolve(&RocksDb.complete(&p.candidate, p.budget_bytes), p.budget_bytes).is_ok()
        })
    });
}

#[test]
fn journals_survive_mutation() {
    let entry = r##"{"event":"finished","recommended":"#3","beats_defaults":true}"##;
    let seed = format!("{entry}\n{entry}\n{entry}\n").into_bytes();
    let dir = tempfile::tempdir().unwrap();
    survives("journal", &seed, |bytes| Journal::read(&in_file(dir.path(), "journal.jsonl", bytes)).is_ok());
}

#[test]
fn traces_survive_mutation() {
    let csv = "op,key,arg,time_us,batch,prefix\nput,user:42,size:120,1700000000000000,1\nput,user:43,0x00ff17,1700000000000100,1\n\
               merge,user:42,+1\ndelete,user:7\ndelete_range,user:0,user:5\nget,user:42\nmulti_get,user:1,,,2\n\
               multi_get,user:2,,,2\nseek,user:4\nseek_for_prev,user:9\nscan,user:4,100,,,5\n";
    let json = "{\"op\":\"put\",\"key\":\"user:42\",\"value_size\":120,\"time_us\":1700000000000000}\n\
                {\"op\":\"multi_get\",\"keys\":[\"user:1\",\"0x0102\"]}\n{\"op\":\"scan\",\"key\":\"user:4\",\"limit\":100,\"prefix\":5}\n";
    let dir = tempfile::tempdir().unwrap();
    for (name, seed, file) in [("CSV trace", csv, "t.csv"), ("JSON-lines trace", json, "t.jsonl")] {
        survives(name, seed.as_bytes(), |bytes| {
            let path = in_file(dir.path(), file, bytes);
            summary(&path, Format::detect(&path), None).is_ok()
        });
    }
}
