//! End-to-end tests: the kvtune binary against real RocksDB on small budgets.

use std::path::{Path, PathBuf};
use std::process::Command;

use kvtune::engine::{rocksdb::RocksDb, Engine};
use kvtune::record::{OptionSet, Stage, Status, TrialRecord};
use kvtune::report::Preset;
use kvtune::study::journal::{self, Entry, Journal};

mod common;

use common::*;

#[test]
fn tune_writes_every_output_and_cleans_up() {
    let dir = scratch();
    let (out, work) = (dir.path().join("out"), dir.path().join("work"));
    // A 256 MiB budget measured at scale 1/4 (64 MiB trials), verified at scale 1.
    let scaled = ["--budget", "256M", "--dataset", "spork", "--scale", "1/4"];
    let run = kvtune_with(
        &[
            scaled.map(String::from).to_vec(),
            [
                "--trials",
                "3",
                "--time",
                "40m",
                "--confirm-top",
                "1",
                "--confirm-repeats",
                "2",
                "--seed",
                "7",
                "--out",
                &path_arg(&out),
                "--workdir",
                &path_arg(&work),
            ]
            .map(String::from)
            .to_vec(),
        ]
        .concat(),
    );
    assert!(run.status.success(), "{}", text(&run));
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(stdout.contains("ops/s") && stdout.contains("preset.toml"), "{stdout}");

    // preset.toml parses and holds absolute options for the full budget.
    let preset = Preset::load(&out.join("preset.toml")).unwrap();
    assert_eq!(preset.budget_bytes, 256 << 20);
    assert_eq!(preset.dataset, "spork");
    let measured = preset.measured.as_ref().unwrap();
    assert!(measured.median > 0.0);
    assert!(measured.ci95[0] <= measured.median && measured.median <= measured.ci95[1]);
    let cache = preset.options["block_cache_size"].as_f64().unwrap() as u64;
    assert!(cache > 0 && cache < 256 << 20, "{cache}");

    // The OPTIONS file loads in RocksDB, unknown options not ignored.
    let load_dir = dir.path().join("load");
    std::fs::create_dir_all(&load_dir).unwrap();
    std::fs::copy(out.join("OPTIONS"), load_dir.join("OPTIONS-000001")).unwrap();
    let cache = rocksdb::Cache::new_lru_cache(1 << 20);
    let env = rocksdb::Env::new().unwrap();
    let (_options, families) =
        rocksdb::Options::load_latest(&load_dir, env, false, cache).expect("RocksDB loads the OPTIONS file");
    assert_eq!(families.len(), 1);
    let options_text = std::fs::read_to_string(out.join("OPTIONS")).unwrap();
    assert!(
        options_text.contains(&format!("write_buffer_size={}", preset.options["write_buffer_size"])),
        "{options_text}"
    );

    // The portable file loads strictly in this RocksDB, holds no line that
    // RocksDB's defaults hold alike, and loads in an older RocksDB too.
    std::fs::copy(out.join("OPTIONS-portable"), load_dir.join("OPTIONS-000002")).unwrap();
    let (cache, env) = (rocksdb::Cache::new_lru_cache(1 << 20), rocksdb::Env::new().unwrap());
    rocksdb::Options::load_latest(&load_dir, env, false, cache).expect("RocksDB loads OPTIONS-portable");
    let portable = std::fs::read_to_string(out.join("OPTIONS-portable")).unwrap();
    assert!(portable.lines().count() < options_text.lines().count() / 3, "{portable}");
    assert!(
        portable.contains(&format!("write_buffer_size={}", preset.options["write_buffer_size"])),
        "{portable}"
    );
    python_opens_a_database_with(&out.join("OPTIONS-portable"), dir.path());

    // One CSV row per trial, as many as the journal records.
    let entries = Journal::read(&out.join("journal.jsonl")).unwrap();
    let records = journal::trials(&entries);
    let trials = records.len();
    let count = |stage: Stage| records.iter().filter(|t| t.stage == stage && t.measurement.ran()).count();
    assert_eq!(count(Stage::Search), 3, "search trials run (rejected candidates are recorded too)");
    let confirm: Vec<String> = records
        .iter()
        .filter(|t| t.stage == Stage::Confirm)
        .map(|t| format!("{} {} {:?}", t.label, t.measurement.status, t.measurement.reason))
        .collect();
    // The best search candidate (unless every one failed or lost its race),
    // the defaults and RocksDB as shipped (the baseline), twice each.
    let sides = confirmed_sides(&records);
    assert!(sides.contains("defaults") && sides.contains("stock-rocksdb"), "{confirm:?}");
    assert!(sides.len() <= 3, "{confirm:?}");
    assert_eq!(count(Stage::Confirm), 2 * sides.len(), "{confirm:?}");
    assert_eq!(count(Stage::Race) % 2, 0, "racing runs come in pairs");
    // What the preset exports is what ran: applied at the trial's scale it
    // gives the very options the recommendation's confirmation runs ran with.
    let winner = records.iter().find(|t| t.stage == Stage::Confirm && t.label == preset.recommended).unwrap();
    assert_eq!(winner.budget, 64 << 20);
    assert_eq!(RocksDb.resolve(&preset.candidate, winner.budget).unwrap().options, winner.options);
    assert_ne!(preset.options, winner.options, "the full budget's options differ from the scaled run's");
    // The contenders were re-measured at the larger scale, 256 MiB.
    // The contenders, not the baseline, were re-measured at the larger scale.
    let verified: Vec<_> = records.iter().filter(|t| t.stage == Stage::Verify).collect();
    assert_eq!(verified.len(), sides.len() - 1);
    assert!(verified.iter().all(|t| t.budget == 256 << 20));
    assert!(matches!(entries.first(), Some(Entry::Started(_))));
    assert!(matches!(entries.last(), Some(Entry::Finished { .. })));
    let mut csv = csv::Reader::from_path(out.join("trials.csv")).unwrap();
    let headers = csv.headers().unwrap().clone();
    for column in [
        "ops_per_sec",
        "serve_p99_us",
        "write_amplification",
        "peak_memory_bytes",
        "block_cache_share",
        "rocksdb.block_size",
    ] {
        assert!(headers.iter().any(|h| h == column), "no column {column}");
    }
    assert_eq!(csv.records().count(), trials);

    the_html_report_renders(&out.join("report.html"));
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    let answer = report.find("## Answer").expect("an answer section");
    for section in
        ["## Memory: where the budget went", "## Where the time goes", "## Does it hold at a larger scale?"]
    {
        let at = report.find(section).unwrap_or_else(|| panic!("no {section} in {report}"));
        assert!(answer < at && at < report.find("## Every trial").unwrap());
    }

    // The preset measures again beside a search trial named by its study
    // folder, at the scale the preset records, each with the very options it
    // ran with in the study.
    let preset_path = path_arg(&out.join("preset.toml"));
    let searched =
        records.iter().find(|t| t.stage == Stage::Search && !t.is_default && t.measurement.ran()).unwrap();
    let trial_spec = format!("{}{}", path_arg(&out), searched.label);
    let args =
        ["compare", &preset_path, &trial_spec, "--repeat", "1", "--json", "--workdir", &path_arg(&work)];
    let compared = kvtune_with(&args.map(String::from));
    assert!(compared.status.success(), "{}", text(&compared));
    matches_schema("comparison", &compared.stdout, dir.path());
    let json: serde_json::Value = serde_json::from_slice(&compared.stdout).unwrap();
    assert_eq!(json["scale"], "1/4");
    assert_eq!(json["sides"][0]["runs"].as_array().unwrap().len(), 1);
    assert_eq!(json["sides"][1]["label"], trial_spec.as_str());
    assert_eq!(json["objective"], measured.objective.as_str(), "the comparison's objective is the study's");
    let ran = |side: usize| -> OptionSet {
        serde_json::from_value(json["sides"][side]["options"].clone()).unwrap()
    };
    assert_eq!(ran(0), winner.options);
    assert_eq!(ran(1), searched.options);
    // Which of a seed's changes carry its gain: the seed, each change put
    // back alone, and the defaults, side by side.
    let seed = records.iter().find(|t| t.origin == "seed:tuning-guide").expect("the tuning-guide seed ran");
    let seed_spec = format!("{}{}", path_arg(&out), seed.label);
    let args = ["ablate", &seed_spec, "--repeat", "1", "--json", "--workdir", &path_arg(&work)];
    let ablated = kvtune_with(&args.map(String::from));
    assert!(ablated.status.success(), "{}", text(&ablated));
    matches_schema("ablation", &ablated.stdout, dir.path());
    let json: serde_json::Value = serde_json::from_slice(&ablated.stdout).unwrap();
    let changes: Vec<&str> =
        json["changes"].as_array().unwrap().iter().map(|c| c["param"].as_str().unwrap()).collect();
    assert!(changes.contains(&"bloom_bits") && changes.contains(&"block_size"), "{changes:?}");
    assert!(!changes.contains(&"compression"), "lz4 is the defaults' own: nothing to put back: {changes:?}");
    let labels: Vec<&str> = json["comparison"]["sides"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels.len(), changes.len() + 2, "{labels:?}");
    assert_eq!((labels[0], labels[labels.len() - 1]), (seed_spec.as_str(), "defaults@rocksdb"));
    assert_eq!(labels[1], format!("{seed_spec}+{}={}", changes[0], json["changes"][0]["default"]));
    fails_with(&["ablate", "defaults", "--budget", "64M"], &["ablate takes a preset.toml or DIR#N"]);
    fails_with(
        &["compare", "defaults", &format!("{}#999", path_arg(&out))],
        &["has no trial #999", "its search trials are #"],
    );
    // The preset explained: what it changes, what sets it, what was measured.
    let explained = kvtune_with(&["explain".to_string(), preset_path.clone()]);
    assert!(explained.status.success(), "{}", text(&explained));
    let said = String::from_utf8_lossy(&explained.stdout);
    assert!(said.contains("block_cache_size") && said.contains("as shipped"), "{said}");
    assert!(said.contains("What the search measured") && said.contains("importance"), "{said}");
    fails_with(&["explain", "no/such/preset.toml"], &["no/such/preset.toml", "preset.toml kvtune wrote"]);

    // The study's reports again from its journal, the verdict as JSON.
    let again = kvtune_with(&["report".to_string(), path_arg(&out), "--json".into()]);
    assert!(again.status.success(), "{}", text(&again));
    matches_schema("report", &again.stdout, dir.path());
    let reported: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(
        (reported["finished"].as_bool(), reported["verdict"]["recommended"].is_u64()),
        (Some(true), true)
    );

    // Every trial's database is gone.
    let left: Vec<PathBuf> = std::fs::read_dir(&work).unwrap().map(|e| e.unwrap().path()).collect();
    assert!(left.is_empty(), "left in the work directory: {left:?}");

    resume_after_a_crash(dir.path(), &out, &work);
}

/// `report.html` stands alone (no scripts, nothing fetched), holds its
/// figures, and headless Chromium draws it as a page that is not blank. The
/// screenshot is kept in the test's target folder. Without Chromium this
/// part is skipped, unless KVTUNE_REQUIRE_CHROMIUM is set (CI sets it).
fn the_html_report_renders(html: &Path) {
    let page = std::fs::read_to_string(html).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>") && page.contains("<h2>Answer</h2>"), "{page}");
    assert!(page.matches("<svg").count() >= 3, "the history, confirmation and memory figures at least");
    assert!(
        !page.contains("<script") && !page.contains("http-equiv=\"refresh\""),
        "a finished report is still"
    );
    assert!(!page.contains("src=\"http") && !page.contains("href=\"http"), "nothing is fetched");
    let Some(chromium) = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|c| Command::new(c).arg("--version").output().is_ok_and(|o| o.status.success()))
    else {
        assert!(
            std::env::var_os("KVTUNE_REQUIRE_CHROMIUM").is_none(),
            "KVTUNE_REQUIRE_CHROMIUM: no chromium"
        );
        eprintln!("skipped: no chromium to render report.html in");
        return;
    };
    let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-html.png");
    let _ = std::fs::remove_file(&shot);
    let run = Command::new(chromium)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1000,2400"])
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", html.canonicalize().unwrap().display()))
        .output()
        .expect("chromium runs");
    assert!(shot.exists(), "no screenshot: {}", text(&run));
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut pixels).unwrap();
    let step = info.color_type.samples();
    let rgb: Vec<&[u8]> = pixels[..info.buffer_size()].chunks(step).map(|p| &p[..3]).collect();
    let inked = rgb.iter().filter(|p| p.iter().any(|c| *c < 200)).count() as f64 / rgb.len() as f64;
    let colours: std::collections::HashSet<&[u8]> = rgb.iter().copied().collect();
    eprintln!(
        "report.html rendered to {} ({:.1}% inked, {} colours)",
        shot.display(),
        inked * 100.0,
        colours.len()
    );
    assert!(inked > 0.02 && colours.len() > 20, "a blank or broken page: {}", shot.display());
}

/// README's Python example (`examples/load_options.py`: rocksdict, a
/// RocksDB binding from PyPI built on an older RocksDB, unknown options
/// refused) opens a database with `options`.
fn python_opens_a_database_with(options: &Path, scratch: &Path) {
    let Some(python) = python_with("rocksdict") else { return };
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/load_options.py");
    let run =
        Command::new(&python).arg(example).arg(options).arg(scratch.join("python-db")).output().unwrap();
    assert!(run.status.success() && text(&run).contains("opened"), "{}", text(&run));
}

/// `stdout` is JSON of the `kind` the schema in `schema/` describes.
fn matches_schema(kind: &str, stdout: &[u8], scratch: &Path) {
    let Some(python) = python_with("jsonschema") else { return };
    let file = scratch.join(format!("{kind}.json"));
    std::fs::write(&file, stdout).unwrap();
    let validate = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/validate.py");
    let run = Command::new(&python).arg(validate).arg(kind).arg(&file).output().unwrap();
    assert!(run.status.success(), "{}", text(&run));
}

/// The labels of the sides that ran confirmation rounds.
fn confirmed_sides<'a>(records: &[&'a TrialRecord]) -> std::collections::BTreeSet<&'a str> {
    records.iter().filter(|t| t.stage == Stage::Confirm).map(|t| t.label.as_str()).collect()
}

/// A copy of the study cut off after four trials, mid-write, resumes to the same shape of result.
fn resume_after_a_crash(dir: &Path, finished: &Path, work: &Path) {
    let crashed = dir.join("crashed");
    std::fs::create_dir_all(&crashed).unwrap();
    let journal = std::fs::read_to_string(finished.join("journal.jsonl")).unwrap();
    // The start, then everything up to the fourth trial (the claims before them too).
    let mut trials_seen = 0;
    let mut cut: String = journal
        .lines()
        .take_while(|l| {
            let keep = trials_seen < 4;
            trials_seen += usize::from(l.contains("\"event\":\"trial\""));
            keep
        })
        .map(|l| format!("{l}\n"))
        .collect();
    cut.push_str("{\"event\":\"tri");
    std::fs::write(crashed.join("journal.jsonl"), cut).unwrap();

    // The stopped study's reports, from its journal: how far it got, no preset.
    let report = kvtune_with(&["report".to_string(), path_arg(&crashed)]);
    assert!(report.status.success(), "{}", text(&report));
    let md = std::fs::read_to_string(crashed.join("report.md")).unwrap();
    assert!(md.contains("stopped before it finished") && md.contains("search trials so far"), "{md}");
    assert!(!md.contains("## Answer") && !crashed.join("preset.toml").exists());
    assert!(std::fs::read_to_string(crashed.join("report.html")).unwrap().contains("<svg"));

    // Resumed with one trial more than it began with: the new limit is
    // recorded and applies; one the search has already reached is refused.
    fails_with(&["--resume", &path_arg(&crashed), "--trials", "1"], &["--trials 1", "search trials already"]);
    // Recorded for the study's workers (--create-only runs nothing), the
    // limit holds on a plain resume.
    let recorded =
        kvtune_with(&["--resume", &path_arg(&crashed), "--trials", "4", "--create-only"].map(String::from));
    assert!(recorded.status.success(), "{}", text(&recorded));
    assert!(text(&recorded).contains("limits are now 4 trials, --time 40m"), "{}", text(&recorded));
    assert!(text(&recorded).contains("kvtune worker"), "{}", text(&recorded));
    let run = kvtune_with(&["--resume", &path_arg(&crashed), "--workdir", &path_arg(work)].map(String::from));
    assert!(run.status.success(), "{}", text(&run));
    let entries = Journal::read(&crashed.join("journal.jsonl")).unwrap();
    let trials = journal::trials(&entries);
    let ran = |stage: Stage| {
        trials.iter().filter(|t| t.stage == stage && t.measurement.status != Status::Rejected).count()
    };
    // Confirmed twice each: the search's best (if one succeeded and kept its
    // races: the resumed runs measure afresh), the defaults and the
    // baseline; the contenders once more at the larger scale.
    let sides = confirmed_sides(&trials).len();
    assert_eq!((ran(Stage::Search), ran(Stage::Confirm), ran(Stage::Verify)), (4, 2 * sides, sides - 1));
    assert_eq!(entries.iter().filter(|e| matches!(e, Entry::Limits(l) if l.trials == 4)).count(), 1);
    let md = std::fs::read_to_string(crashed.join("report.md")).unwrap();
    assert!(
        md.contains("its limits, 3 trials, --time 40m at the start, were changed on a resume to 4 trials, --time 40m."),
        "{md}"
    );
    // The recorded trials are kept as they were. (What follows depends on
    // what the new runs measure, so it need not match the first study; the
    // study's unit tests check that the sampler is replayed exactly.)
    let original = Journal::read(&finished.join("journal.jsonl")).unwrap();
    let kept = |entries: &[Entry]| -> Vec<String> {
        journal::trials(entries).iter().take(4).map(|t| serde_json::to_string(t).unwrap()).collect()
    };
    assert_eq!(kept(&entries), kept(&original), "the recorded trials are kept");
    assert!(matches!(entries.last(), Some(Entry::Finished { .. })));
    assert!(crashed.join("preset.toml").exists() && crashed.join("OPTIONS").exists());
    assert_eq!(csv::Reader::from_path(crashed.join("trials.csv")).unwrap().records().count(), trials.len());

    fails_with(&["--resume", &path_arg(&crashed)], &["finished already"]);
    fails_with(
        &["--resume", &path_arg(&crashed), "--time", "2h"],
        &["has finished", "cannot reopen", "kvtune compare"],
    );
    // Cut off in its confirmation, its search is over: new limits are
    // refused, whether a confirmation run is recorded or only claimed.
    let confirming = dir.join("confirming");
    std::fs::create_dir_all(&confirming).unwrap();
    let lines: Vec<&str> = journal.lines().collect();
    let is_confirmation = |l: &&str| l.contains("\"event\":\"trial\"") && l.contains("\"stage\":\"confirm\"");
    let cut = lines.iter().position(is_confirmation).unwrap() + 1;
    std::fs::write(confirming.join("journal.jsonl"), lines[..cut].join("\n") + "\n").unwrap();
    fails_with(
        &["--resume", &path_arg(&confirming), "--trials", "9"],
        &["ended its search after 3 search trials", "would change nothing"],
    );
    let is_claim = |l: &&str| l.contains("\"event\":\"claimed\"") && l.contains("\"task\":\"confirm:0\"");
    let cut = lines.iter().position(is_claim).unwrap() + 1;
    std::fs::write(confirming.join("journal.jsonl"), lines[..cut].join("\n") + "\n").unwrap();
    fails_with(
        &["--resume", &path_arg(&confirming), "--time", "2h"],
        &["ended its search and its confirmation has begun"],
    );

    // The two studies side by side.
    let versus =
        kvtune_with(&["report", &path_arg(finished), "--compare", &path_arg(&crashed)].map(String::from));
    assert!(versus.status.success(), "{}", text(&versus));
    let table = String::from_utf8_lossy(&versus.stdout);
    assert!(
        table.contains("| search trials | 3 | 4 |") && table.contains("| state | finished | finished |"),
        "{table}"
    );
    let page = std::fs::read_to_string(finished.join("versus.html")).unwrap();
    assert!(page.contains("<table>") && page.contains("<svg"), "{page}");
}

/// kill -9 of kvtune mid-trial: while it runs, a second kvtune on its folder
/// is refused with its pid; after the kill, `--resume` keeps every finished
/// trial as it was, runs none of them again, and leaves no trial directory
/// or cgroup behind.
#[test]
fn a_study_killed_mid_trial_resumes_with_nothing_lost_or_left_behind() {
    let dir = scratch();
    let (out, work) = (dir.path().join("out"), dir.path().join("work"));
    let (out_arg, work_arg) = (path_arg(&out), path_arg(&work));
    let args = small(&[
        "--trials",
        "4",
        "--no-racing",
        "--confirm-top",
        "1",
        "--confirm-repeats",
        "2",
        "--verify-scale",
        "off",
        "--out",
        &out_arg,
        "--workdir",
        &work_arg,
    ]);
    let mut study = spawn(&args);
    let pid = study.id();
    let journal_path = out.join("journal.jsonl");
    let recorded = || Journal::read(&journal_path).map(|e| journal::trials(&e).len()).unwrap_or(0);
    let trial_running = || std::fs::read_dir(&work).is_ok_and(|mut d| d.next().is_some());
    let started = std::time::Instant::now();
    while recorded() < 2 || !trial_running() {
        assert!(started.elapsed().as_secs() < 300, "no trial under way after 5 minutes");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    fails_with(
        &["--resume", &out_arg, "--workdir", &work_arg],
        &["in use by another kvtune", &format!("pid {pid}")],
    );
    study.kill().unwrap();
    study.wait().unwrap();
    let before: Vec<String> = journal::trials(&Journal::read(&journal_path).unwrap())
        .iter()
        .map(|t| serde_json::to_string(t).unwrap())
        .collect();

    let resumed = kvtune_with(&["--resume", &out_arg, "--workdir", &work_arg].map(String::from));
    assert!(resumed.status.success(), "{}", text(&resumed));
    let entries = Journal::read(&journal_path).unwrap();
    let after = journal::trials(&entries);
    let kept: Vec<String> =
        after.iter().take(before.len()).map(|t| serde_json::to_string(t).unwrap()).collect();
    assert_eq!(kept, before, "every finished trial kept as it was");
    let searched: Vec<&str> =
        after.iter().filter(|t| t.stage == Stage::Search).map(|t| t.label.as_str()).collect();
    let distinct: std::collections::BTreeSet<&&str> = searched.iter().collect();
    assert_eq!((searched.len(), distinct.len()), (4, 4), "each search trial once: {searched:?}");
    assert!(matches!(entries.last(), Some(Entry::Finished { .. })));
    assert_eq!(std::fs::read_dir(&work).unwrap().count(), 0, "a trial directory left behind");
    let leftovers = cgroups_named(&format!("kvtune-{pid}-"));
    assert!(leftovers.is_empty(), "cgroups of the killed kvtune left behind: {leftovers:?}");
}

/// A trial worker killed from outside (kill -9) and one that aborts
/// (SIGABRT): each is recorded failed with its signal, and the study goes on
/// to its end with nothing left behind.
#[test]
fn trial_workers_killed_or_aborted_are_failed_trials_and_the_study_goes_on() {
    let dir = scratch();
    let (out, work) = (dir.path().join("out"), dir.path().join("work"));
    let args = small(&[
        "--trials",
        "4",
        "--no-racing",
        "--confirm-top",
        "1",
        "--confirm-repeats",
        "2",
        "--verify-scale",
        "off",
        "--out",
        &path_arg(&out),
        "--workdir",
        &path_arg(&work),
    ]);
    let study = spawn(&args);
    let mut signalled = vec![];
    for signal in [libc::SIGKILL, libc::SIGABRT] {
        let started = std::time::Instant::now();
        let worker = loop {
            assert!(started.elapsed().as_secs() < 300, "no trial worker after 5 minutes");
            if let Some(w) = worker_of(study.id()).filter(|w| !signalled.contains(w)) {
                break w;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        // SAFETY: a signal to a process this test's kvtune started.
        unsafe { libc::kill(worker, signal) };
        signalled.push(worker);
    }
    let finished = study.wait_with_output().unwrap();
    assert!(finished.status.success(), "{}", text(&finished));
    let entries = Journal::read(&out.join("journal.jsonl")).unwrap();
    let failed: Vec<String> = journal::trials(&entries)
        .iter()
        .filter(|t| t.measurement.status == Status::Failed)
        .filter_map(|t| t.measurement.reason.clone())
        .collect();
    for signal in [libc::SIGKILL, libc::SIGABRT] {
        assert!(
            failed.iter().any(|r| r.contains(&format!("signal {signal}"))),
            "no signal {signal} in {failed:?}"
        );
    }
    assert!(matches!(entries.last(), Some(Entry::Finished { .. })));
    assert_eq!(std::fs::read_dir(&work).unwrap().count(), 0, "a trial directory left behind");
}

/// The output folder turning unwritable mid-study (its file system filled
/// up): the study stops with an error that names what it could not write,
/// and the journal holds every trial recorded before, readable.
/// Mounting needs root; without it the test is skipped, unless
/// KVTUNE_REQUIRE_CGROUPS is set (CI runs as root).
#[test]
fn an_output_folder_that_fills_up_stops_the_study_with_the_journal_intact() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        assert!(std::env::var_os("KVTUNE_REQUIRE_CGROUPS").is_none(), "needs root to mount");
        eprintln!("skipped: mounting a file system needs root");
        return;
    }
    let dir = scratch();
    let fs = dir.path().join("fs");
    std::fs::create_dir_all(&fs).unwrap();
    let mounted = Command::new("mount").args(["-t", "tmpfs", "-o", "size=64m", "tmpfs"]).arg(&fs).output();
    if !mounted.is_ok_and(|m| m.status.success()) {
        eprintln!("skipped: no tmpfs could be mounted here");
        return;
    }
    let (out, work) = (fs.join("study"), dir.path().join("work"));
    let args =
        small(&["--trials", "8", "--no-racing", "--out", &path_arg(&out), "--workdir", &path_arg(&work)]);
    let study = spawn(&args);
    let journal_path = out.join("journal.jsonl");
    let recorded = || Journal::read(&journal_path).map(|e| journal::trials(&e).len()).unwrap_or(0);
    let started = std::time::Instant::now();
    while recorded() < 2 {
        assert!(started.elapsed().as_secs() < 300, "no trials recorded after 5 minutes");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // Fill what is left of the output's file system.
    let mut filler = std::fs::File::create(fs.join("filler")).unwrap();
    while std::io::Write::write_all(&mut filler, &[0u8; 1 << 20]).is_ok() {}
    let ended = study.wait_with_output().unwrap();
    let entries = Journal::read(&journal_path);
    drop(filler);
    let _ = Command::new("umount").arg("-l").arg(&fs).output();
    assert!(!ended.status.success(), "the study went on without its outputs");
    let said = text(&ended);
    assert!(said.contains("No space left on device") && said.contains(&path_arg(&out)), "{said}");
    assert!(!said.contains("panicked"), "{said}");
    assert!(journal::trials(&entries.unwrap()).len() >= 2, "the journal lost trials");
    assert_eq!(std::fs::read_dir(&work).unwrap().count(), 0, "a trial directory left behind");
}

/// Ctrl-C during `kvtune bench` stops the running trial and leaves nothing
/// behind, as it does during a study, and exits with 130.
#[test]
fn ctrl_c_during_bench_cleans_up_and_exits_130() {
    let dir = scratch();
    let work = dir.path().join("work");
    let args = [
        vec!["bench".to_string(), "--preset".into(), "defaults".into()],
        small(&["--repeat", "3", "--workdir", &path_arg(&work)]),
    ]
    .concat();
    let bench = spawn(&args);
    let started = std::time::Instant::now();
    while worker_of(bench.id()).is_none() {
        assert!(started.elapsed().as_secs() < 300, "no trial worker after 5 minutes");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SAFETY: a signal to the kvtune this test started.
    unsafe { libc::kill(bench.id() as i32, libc::SIGINT) };
    let pid = bench.id();
    let ended = bench.wait_with_output().unwrap();
    assert_eq!(ended.status.code(), Some(130), "{}", text(&ended));
    assert_eq!(std::fs::read_dir(&work).unwrap().count(), 0, "a trial directory left behind");
    let leftovers = cgroups_named(&format!("kvtune-{pid}-"));
    assert!(leftovers.is_empty(), "cgroups left behind: {leftovers:?}");
}

/// The trial worker kvtune `pid` is running, if any.
fn worker_of(pid: u32) -> Option<i32> {
    let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).ok()?;
    children.split_whitespace().filter_map(|c| c.parse().ok()).find(|c: &i32| {
        std::fs::read(format!("/proc/{c}/cmdline"))
            .is_ok_and(|cmd| String::from_utf8_lossy(&cmd).contains("trial-worker"))
    })
}

/// Cgroups (under /sys/fs/cgroup, a few levels down) whose name starts with `prefix`.
fn cgroups_named(prefix: &str) -> Vec<PathBuf> {
    let mut found = vec![];
    let mut level = vec![PathBuf::from("/sys/fs/cgroup")];
    for _ in 0..6 {
        let mut next = vec![];
        for dir in level {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    if entry.file_name().to_string_lossy().starts_with(prefix) {
                        found.push(entry.path());
                    }
                    next.push(entry.path());
                }
            }
        }
        level = next;
    }
    found
}

#[test]
fn grid_over_the_badger_thread_space() {
    let dir = scratch();
    let out = dir.path().join("out");
    let run = kvtune_with(
        &[
            vec!["tune".to_string()],
            small(&[
                "--strategy",
                "grid",
                "--no-racing",
                "--space",
                "badger-thread",
                "--trials",
                "3",
                "--confirm-top",
                "0",
                "--confirm-repeats",
                "1",
                "--out",
                &path_arg(&out),
                "--workdir",
                &path_arg(&dir.path().join("work")),
                "--json",
            ]),
        ]
        .concat(),
    );
    assert!(run.status.success(), "{}", text(&run));
    matches_schema("tune", &run.stdout, dir.path());
    let mut csv = csv::Reader::from_path(out.join("trials.csv")).unwrap();
    let headers = csv.headers().unwrap().clone();
    let column = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = csv.records().map(|r| r.unwrap()).collect();
    let ran: Vec<&csv::StringRecord> = rows.iter().filter(|r| &r[column("status")] != "rejected").collect();
    // Three search trials, then one confirmation round: the defaults and
    // RocksDB as shipped (measured even where the memory model would reject it).
    assert_eq!(ran.len(), 3 + 2, "three search trials and one confirmation round");
    let stock = ran.iter().find(|r| &r[column("label")] == "stock-rocksdb").expect("the baseline ran");
    assert!(["ok", "infeasible"].contains(&&stock[column("status")]), "{stock:?}");
    let grid: Vec<&str> = ran[1..3].iter().map(|r| &r[column("load_mode")]).collect();
    assert!(grid.iter().all(|mode| ["pread", "mmap"].contains(mode)), "{grid:?}");
}

#[test]
fn bench_prints_medians_as_json() {
    let dir = scratch();
    let work = path_arg(&dir.path().join("work"));
    // Another kvtune running trials on the machine, as the bench sees it:
    // a lock held on its file, which names its pid (this test's).
    let running = dir.path().join("running");
    std::fs::create_dir(&running).unwrap();
    let registration = running.join(format!("0-{}", std::process::id()));
    let entry = format!(r#"{{"pid":{},"study":null,"command":"kvtune --dataset tbs"}}"#, std::process::id());
    std::fs::write(&registration, entry).unwrap();
    let neighbour = std::fs::File::open(&registration).unwrap();
    assert_eq!(unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&neighbour), libc::LOCK_EX) }, 0);
    let run = Command::new(env!("CARGO_BIN_EXE_kvtune"))
        .args(["bench", "--preset", "defaults"])
        .args(small(&["--repeat", "2", "--json", "--workdir", &work]))
        .env("KVTUNE_RUNNING_DIR", &running)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", text(&run));
    matches_schema("comparison", &run.stdout, dir.path());
    let json: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(json["sides"][0]["runs"].as_array().unwrap().len(), 2);
    let beside = &json["sides"][0]["runs"][0]["beside"];
    assert_eq!(beside[0]["pid"], std::process::id(), "the run records the kvtune beside it: {beside}");
    let warned = String::from_utf8_lossy(&run.stderr);
    assert_eq!(warned.matches("another kvtune is running trials on this machine").count(), 1, "{warned}");
    let metrics = json["metrics"].as_array().unwrap();
    let ops = metrics.iter().find(|m| m["name"] == "ops/s (whole replay)").unwrap();
    assert!(ops["sides"][0]["median"]["point"].as_f64().unwrap() > 0.0);
    for name in ["serve p99 us", "index settle s", "CPU us/op", "peak anon MiB"] {
        assert!(metrics.iter().any(|m| m["name"] == name), "no {name}");
    }
}

#[test]
fn table_measures_every_point_then_its_leaders_again() {
    let dir = scratch();
    let space = dir.path().join("two.toml");
    std::fs::write(&space, "[params.bloom_bits]\nkind = \"choice\"\nvalues = [0, 10]\n").unwrap();
    let out = dir.path().join("table.csv");
    let table = |rest: &[&str]| {
        let args = [
            vec!["table".to_string(), "--space".into(), path_arg(&space), "--out".into(), path_arg(&out)],
            small(&[&["--workdir", &path_arg(&dir.path().join("work"))], rest].concat()),
        ]
        .concat();
        let run = kvtune_with(&args);
        assert!(run.status.success(), "{}", text(&run));
    };
    let runs_of = || -> Vec<(String, f64)> {
        let mut reader = csv::Reader::from_path(&out).unwrap();
        reader.records().map(|r| r.unwrap()).map(|r| (r[0].to_string(), r[3].parse().unwrap())).collect()
    };
    table(&["--repeat", "2"]);
    let first = runs_of();
    assert_eq!(first.iter().filter(|(bloom, _)| bloom == "0").count(), 2, "{first:?}");
    assert_eq!(first.len(), 4, "{first:?}");
    let mean = |bloom: &str| first.iter().filter(|(b, _)| b == bloom).map(|(_, ops)| ops).sum::<f64>() / 2.0;
    let leader = if mean("0") >= mean("10") { "0" } else { "10" };
    // Only the leader gets the third round; the rows already there stay as they were.
    table(&["--repeat", "3", "--top", "1"]);
    let then = runs_of();
    assert_eq!(then[..4], first[..], "{then:?}");
    assert_eq!(then.len(), 5, "{then:?}");
    assert_eq!(then[4].0, leader, "{then:?}");
}

#[test]
fn compare_pairs_a_change_with_its_baseline() {
    let dir = scratch();
    let work = path_arg(&dir.path().join("work"));
    let args = [
        vec![
            "compare".to_string(),
            "defaults".into(),
            "defaults".into(),
            "--set".into(),
            "bloom_bits=10".into(),
        ],
        small(&["--repeat", "2", "--workdir", &work]),
    ]
    .concat();
    let run = kvtune_with(&[args.clone(), vec!["--json".into()]].concat());
    assert!(run.status.success(), "{}", text(&run));
    matches_schema("comparison", &run.stdout, dir.path());
    let json: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let labels: Vec<&str> =
        json["sides"].as_array().unwrap().iter().map(|s| s["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["defaults", "defaults+bloom_bits=10"]);
    let ops =
        json["metrics"].as_array().unwrap().iter().find(|m| m["name"] == "ops/s (whole replay)").unwrap();
    assert_eq!(ops["vs_first"][1]["n"], 2, "{ops}");
    // The table a person reads, as Markdown.
    let run = kvtune_with(&[args, vec!["--markdown".into()]].concat());
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(stdout.contains("| defaults+bloom_bits=10 vs defaults |"), "{stdout}");
    fails_with(
        &[
            "compare",
            "defaults",
            "defaults",
            "--set",
            "bloom_bitz=3",
            "--budget",
            "64M",
            "--dataset",
            "spork",
            "--scale",
            "1",
        ],
        &["bloom_bitz", "known are"],
    );
    fails_with(
        &["compare", "defaults", "defaults", "--set", "bloom_bits", "--budget", "64M"],
        &["NAME=VALUE"],
    );
}

/// Runs kvtune expecting it to fail with every one of `expected` in its output.
fn fails_with(args: &[&str], expected: &[&str]) {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    fails_with_args(&args, expected);
}

fn fails_with_args(args: &[String], expected: &[&str]) {
    let run = kvtune_with(args);
    assert!(!run.status.success(), "{args:?} succeeded");
    assert!(!text(&run).contains("panicked"), "{args:?} panicked: {}", text(&run));
    for e in expected {
        assert!(text(&run).contains(e), "{args:?}: no `{e}` in {}", text(&run));
    }
}

/// Bad input across budgets, scales, objectives, spaces, presets, journals
/// and flag combinations: each exits non-zero before any trial runs, naming
/// the input and what would be accepted.
#[test]
fn every_bad_input_names_itself_and_what_would_do() {
    let dir = scratch();
    let journal = dir.path().join("study");
    std::fs::create_dir_all(&journal).unwrap();
    std::fs::write(
        journal.join("journal.jsonl"),
        "{\"event\":\"finished\",\"recommended\":\"a\",\"beats_defaults\":true}\nnot json\n{}\n",
    )
    .unwrap();
    let not_a_preset = dir.path().join("preset.toml");
    std::fs::write(&not_a_preset, "budget = \"a lot\"\n").unwrap();
    let (journal, not_a_preset) = (path_arg(&journal), path_arg(&not_a_preset));
    let tune = |rest: &[&str]| -> Vec<String> {
        ["--budget", "64M", "--dataset", "spork"].iter().chain(rest).map(|s| s.to_string()).collect()
    };
    let compare = |set: &str| -> Vec<String> {
        ["compare", "defaults", "defaults", "--set", set, "--dataset", "spork", "--budget", "64M"]
            .map(String::from)
            .to_vec()
    };
    let cases: Vec<(Vec<String>, &[&str])> = vec![
        (
            [
                "table",
                "--space",
                "table-spork",
                "--dataset",
                "spork",
                "--budget",
                "64M",
                "--out",
                "t.csv",
                "--top",
                "0",
            ]
            .map(String::from)
            .to_vec(),
            &["--top 0", "e.g. --top 8"],
        ),
        (
            vec!["--budget".into(), "0".into(), "--dataset".into(), "spork".into()],
            &["`0` is not a size", "128G"],
        ),
        (
            vec!["--budget".into(), "1.5Q".into(), "--dataset".into(), "spork".into()],
            &["`1.5Q`", "K, M, G or T"],
        ),
        (tune(&["--scale", "3"]), &["`3` is not a scale", "power-of-two"]),
        (tune(&["--scale", "1/3"]), &["`1/3` is not a scale", "1/256"]),
        (tune(&["--data-ratio", "abc"]), &["'abc'", "--data-ratio"]),
        (tune(&["--time", "5parsecs"]), &["`5parsecs` is not a duration", "30m"]),
        (tune(&["--strategy", "annealing"]), &["'annealing'", "bayes, tpe, random, grid"]),
        (tune(&["--objective", "speed"]), &["`speed` is not an objective", "phase:NAME"]),
        (tune(&["--objective", "latency:serve:p42"]), &["`latency:serve:p42`", "p99.9"]),
        (tune(&["--objective", "phase:nosuch"]), &["no phase `nosuch`", "bootstrap, index, serve"]),
        (tune(&["--objective", "throughput,bytes_per_key,phase:index"]), &["one or two objectives, not 3"]),
        (tune(&["--space", "nosuch"]), &["`nosuch` is neither a file nor a built-in space", "rocksdb"]),
        (tune(&["--trials", "0"]), &["--trials 0", "at least 1"]),
        (tune(&["--engine", "leveldb"]), &["unknown engine `leveldb`", "rocksdb, pebble, badger, bbolt"]),
        (
            tune(&["--engines", "rocksdb,leveldb"]),
            &["unknown engine `leveldb`", "rocksdb, pebble, badger, bbolt"],
        ),
        (tune(&["--verify-scale", "3x"]), &["`3x` is not a scale", "4x"]),
        (tune(&["--cpus", "1023"]), &["CPU 1023", "usable"]),
        (tune(&["--cpus", "one"]), &["`one` is not a CPU list", "2-3"]),
        (["bench", "--preset", "/no/such.toml"].map(String::from).to_vec(), &["/no/such.toml", "`defaults`"]),
        (["bench", "--preset", "defaults"].map(String::from).to_vec(), &["--budget is required"]),
        (["bench", "--preset", &not_a_preset].map(String::from).to_vec(), &["preset.toml is not valid"]),
        (["compare", "defaults"].map(String::from).to_vec(), &["2 values required"]),
        (
            ["compare", "defaults", "defaults@leveldb", "--budget", "64M", "--dataset", "spork"]
                .map(String::from)
                .to_vec(),
            &["option set defaults@leveldb", "unknown engine `leveldb`"],
        ),
        (compare("nosuch=1"), &["`nosuch`", "known are", "bloom_bits"]),
        (compare("bloom_bits"), &["`bloom_bits` is not a setting", "NAME=VALUE"]),
        (compare("bloom_bits=many"), &["`bloom_bits` must be a number, not many"]),
        (["report", "/no/such/study"].map(String::from).to_vec(), &["/no/such/study/journal.jsonl"]),
        (["report", &journal].map(String::from).to_vec(), &["journal.jsonl line 2"]),
        (["--resume", &journal].map(String::from).to_vec(), &["journal.jsonl line 2"]),
        (["explain", &not_a_preset].map(String::from).to_vec(), &["preset.toml is not valid"]),
        (["datasets", "nosuch"].map(String::from).to_vec(), &["unknown dataset `nosuch`", "ycsb-a"]),
        (tune(&["--workers", "0"]), &["--workers 0", "at least 1"]),
        (
            ["worker", "/no/such/study"].map(String::from).to_vec(),
            &["/no/such/study holds no kvtune study", "--out"],
        ),
        (
            ["launch", "slurm", "/no/such/study", "--workers", "2"].map(String::from).to_vec(),
            &["/no/such/study holds no study", "--create-only"],
        ),
        (["launch", "k8s", "/no/such", "--workers", "0"].map(String::from).to_vec(), &["--workers 0"]),
        (
            ["launch", "nomad", "/no/such", "--workers", "2"].map(String::from).to_vec(),
            &["'nomad'", "slurm, k8s"],
        ),
        (tune(&["--create-only"]), &["--out"]),
        (["--resume", "out/x", "--create-only"].map(String::from).to_vec(), &["give --trials N or --time T"]),
    ];
    for (args, expected) in &cases {
        fails_with_args(args, expected);
    }
    eprintln!("{} bad inputs refused, each naming itself", cases.len());
}

/// A study over a space file with this text fails naming what is wrong.
fn space_fails_with(dir: &Path, space_text: &str, expected: &[&str]) {
    let space = dir.join("bad.toml");
    std::fs::write(&space, space_text).unwrap();
    let space = path_arg(&space);
    fails_with_args(&small(&["--space", &space]), expected);
}

#[test]
fn bad_input_is_named_and_fails() {
    fails_with(&["--budget", "64M", "--dataset", "nosuch"], &["unknown dataset `nosuch`", "spork"]);
    fails_with(&["--budget", "12X", "--dataset", "spork"], &["K, M, G or T"]);
    // A resumed study goes on with its own settings: one given again is refused, not ignored.
    fails_with(&["--resume", "out/x", "--trial-seconds", "5"], &["takes no --trial-seconds", "--workdir"]);
    fails_with(
        &["tune", "--resume", "out/x", "--cooldown", "2", "--trial-seconds", "5"],
        &["takes no --trial-seconds, --cooldown: leave them out"],
    );
    // A mistyped flag gets the nearest good one.
    fails_with(
        &["--budgett", "64M", "--dataset", "spork"],
        &["'--budgett'", "similar argument exists: '--budget'"],
    );
    fails_with(&["report", "--compair", "x"], &["similar argument exists: '--compare'"]);

    let dir = scratch();
    space_fails_with(
        dir.path(),
        "[params.bloom_bits]\nkind = \"int\"\nmin = 0\nmax = oops\n",
        &["bad.toml", "line 4"],
    );
    space_fails_with(
        dir.path(),
        "[params.bloom_bitz]\nkind = \"int\"\nmin = 0\nmax = 3\n",
        &["`bloom_bitz`", "known are"],
    );
    space_fails_with(
        dir.path(),
        "[params.compression]\nkind = \"choice\"\nvalues = [\"lz4\", \"zlib\"]\n",
        &["`compression`", "zlib"],
    );

    // An output folder that holds files is not mixed into.
    let out = path_arg(dir.path());
    fails_with(
        &["--budget", "64M", "--dataset", "spork", "--scale", "1", "--out", &out],
        &["already holds files"],
    );
    fails_with(&["--budget", "64M", "--dataset", "spork", "--scale", "1/4"], &["smallest"]);
    fails_with(&["--budget", "100T", "--dataset", "spork", "--scale", "1"], &["--scale"]);
    fails_with(&["--budget", "64M", "--dataset", "spork", "--confirm-repeats", "0"], &["--confirm-repeats"]);
}

/// Ops `run_phase` counts of each phase (those of batches that begin after
/// the warm-up), without running an engine.
fn counted_ops(dataset: &kvtune::dataset::Dataset, budget: u64, seed: u64) -> Vec<(String, u64)> {
    let mut out = vec![];
    for mut phase in dataset.workload(budget).phases(seed) {
        let (mut applied, mut counted) = (0u64, 0u64);
        let mut batch = kvtune::dataset::ops::Batch::default();
        while phase.source.next_batch(&mut batch) {
            if applied >= phase.warmup_ops {
                counted += batch.ops.len() as u64;
            }
            applied += batch.ops.len() as u64;
        }
        out.push((phase.name, counted));
    }
    out
}

#[test]
fn an_exported_trace_benches_with_the_generated_op_counts() {
    let dir = scratch();
    let toml = path_arg(&dir.path().join("x.toml"));
    let export =
        ["dataset", "export", "spork", "--format", "rocksdb-trace", "--out", &toml, "--budget", "64M"];
    let run = kvtune_with(&export.map(String::from));
    assert!(run.status.success(), "{}", text(&run));
    assert!(text(&run).contains("x.bootstrap.trace") && text(&run).contains("x.toml"), "{}", text(&run));

    // Described at a quarter of the budget it was exported at: a quarter of each phase.
    let describe = kvtune_with(&["datasets", &toml, "--budget", "16M"].map(String::from));
    assert!(text(&describe).contains("replays the first 25.000%"), "{}", text(&describe));

    let work = path_arg(&dir.path().join("work"));
    let bench = [
        "bench",
        "--preset",
        "defaults",
        "--dataset",
        &toml,
        "--budget",
        "64M",
        "--scale",
        "1",
        "--repeat",
        "1",
        "--json",
        "--workdir",
        &work,
    ];
    let run = kvtune_with(&bench.map(String::from));
    assert!(run.status.success(), "{}", text(&run));
    let json: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let phases = json["sides"][0]["runs"][0]["phases"].as_array().unwrap();
    let measured: Vec<(String, u64)> = phases
        .iter()
        .map(|p| (p["name"].as_str().unwrap().to_string(), p["ops"].as_u64().unwrap()))
        .collect();
    let spork = kvtune::dataset::Dataset::find("spork").unwrap();
    assert_eq!(measured, counted_ops(&spork, 64 << 20, 1));

    // Bad input names what is wrong.
    let corrupt = dir.path().join("bad.trace");
    let mut bytes = std::fs::read(dir.path().join("x.serve.trace")).unwrap();
    bytes.truncate(500);
    std::fs::write(&corrupt, bytes).unwrap();
    fails_with(&["datasets", &path_arg(&corrupt)], &["bad.trace", "byte offset", "(record ", "truncated"]);
    fails_with(&["--budget", "64M", "--dataset", "spork", "--pace", "recorded"], &["needs a trace dataset"]);
    fails_with(
        &["dataset", "export", "spork", "--format", "csv", "--out", &work],
        &["give the path of the dataset .toml"],
    );
}

/// Each Go engine runs one small study end to end through its driver: the
/// defaults, its seeds, a search trial, a confirmation round, and its
/// options exported as Go code. Skipped without Go unless KVTUNE_REQUIRE_GO
/// is set (CI sets it).
#[test]
fn a_small_study_on_each_go_engine() {
    if let Err(e) = kvtune::engine::find("pebble").unwrap().prepare() {
        assert!(std::env::var_os("KVTUNE_REQUIRE_GO").is_none(), "KVTUNE_REQUIRE_GO: {e:#}");
        eprintln!("skipping: {e:#}");
        return;
    }
    for engine in ["pebble", "badger", "bbolt"] {
        let dir = scratch();
        let out = dir.path().join("out");
        let run = kvtune_with(
            &[
                "tune",
                "--engine",
                engine,
                "--budget",
                "256M",
                "--dataset",
                "spork",
                "--data-ratio",
                "0.2",
                "--scale",
                "1",
                "--trials",
                "2",
                "--confirm-top",
                "1",
                "--confirm-repeats",
                "1",
                "--verify-scale",
                "off",
                "--no-racing",
                "--out",
                &path_arg(&out),
                "--workdir",
                &path_arg(&dir.path().join("work")),
            ]
            .map(String::from),
        );
        assert!(run.status.success(), "{engine}: {}", text(&run));
        let recorded = journal::read_study(&out).unwrap();
        assert_eq!(recorded.header.engine, engine);
        let ok = recorded.trials.iter().filter(|t| t.measurement.status == Status::Ok).count();
        let why: Vec<String> = recorded
            .trials
            .iter()
            .map(|t| format!("{} {:?}", t.measurement.status, t.measurement.reason))
            .collect();
        assert!(ok >= 2, "{engine}: {ok} runs succeeded: {why:?}");
        for file in ["report.md", "report.html", "trials.csv"] {
            assert!(out.join(file).exists(), "{engine}: no {file}");
        }
        if out.join("preset.toml").exists() {
            let preset = Preset::load(&out.join("preset.toml")).unwrap();
            assert_eq!(preset.engine, engine);
            let code = std::fs::read_to_string(out.join("options.go")).unwrap();
            assert!(code.contains("Open("), "{engine}: {code}");
        }
    }
    // Which engine: each tuned alone, then side by side in paired rounds.
    let dir = scratch();
    let out = dir.path().join("out");
    let run = kvtune_with(
        &[
            "--engines",
            "rocksdb,pebble",
            "--budget",
            "256M",
            "--dataset",
            "spork",
            "--data-ratio",
            "0.1",
            "--scale",
            "1",
            "--trials",
            "1",
            "--confirm-top",
            "0",
            "--confirm-repeats",
            "1",
            "--verify-scale",
            "off",
            "--out",
            &path_arg(&out),
            "--workdir",
            &path_arg(&dir.path().join("work")),
        ]
        .map(String::from),
    );
    assert!(run.status.success(), "{}", text(&run));
    let answer = std::fs::read_to_string(out.join("engines.md")).unwrap();
    assert!(answer.contains("rocksdb with") && answer.contains("pebble with"), "{answer}");
    assert!(answer.contains("| ops/s (whole replay) |"), "{answer}");
    assert!(out.join("rocksdb/report.md").exists() && out.join("pebble/report.md").exists());
}

/// Without Go, a Go engine is named as unavailable with what to install,
/// and RocksDB runs as before (a PATH without Go, and an empty driver cache).
#[test]
fn a_go_engine_without_go_says_what_to_install() {
    let dir = scratch();
    let path = "/usr/sbin:/usr/bin:/sbin:/bin";
    let go_on_path =
        Command::new("go").env("PATH", path).arg("version").output().is_ok_and(|o| o.status.success());
    if go_on_path {
        eprintln!("skipping: Go is installed in {path}");
        return;
    }
    let run = |engine: &str| {
        Command::new(env!("CARGO_BIN_EXE_kvtune"))
            .args(small(&[
                "--engine",
                engine,
                "--trials",
                "1",
                "--workdir",
                &path_arg(&dir.path().join("work")),
            ]))
            .args([
                "--out",
                &path_arg(&dir.path().join(engine)),
                "--confirm-top",
                "0",
                "--verify-scale",
                "off",
            ])
            .env("PATH", path)
            .env("KVTUNE_CACHE", dir.path().join("cache"))
            .output()
            .unwrap()
    };
    let pebble = run("pebble");
    assert!(!pebble.status.success());
    let said = text(&pebble);
    assert!(said.contains("`go` was not found") && said.contains("install Go"), "{said}");
    let rocksdb = run("rocksdb");
    assert!(rocksdb.status.success(), "{}", text(&rocksdb));
}
