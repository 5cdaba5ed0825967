//! `kvtune table`: measures every point of a small space's grid several
//! times and writes them as a CSV table, so search strategies can be
//! compared on look-ups of real measurements (`cargo bench --bench search`).
//! Rounds run every point once in a random order; a table already written
//! is continued, so an interrupted recording loses nothing. `--top K`
//! continues only the table's K best points: its leaders are measured again
//! until the best mean is not a lucky draw.

use std::collections::HashMap;
use std::io::Write;

use anyhow::{bail, Context};

use super::{load_dataset, pick_scale, runner};
use crate::cli::TableArgs;

use crate::engine;
use crate::space::{Candidate, Space};
use crate::trial::{self, Request};

pub fn table(args: TableArgs) -> anyhow::Result<()> {
    let engine = engine::find(args.common.engine.as_deref().unwrap_or("rocksdb"))?;
    engine.prepare()?;
    let space = Space::find(&args.space, &engine.param_names())?;
    let points: Vec<Candidate> = (0..space.grid_size()).map(|i| space.grid_point(i)).collect();
    if points.len() > 10_000 {
        bail!(
            "the space's grid has {} points: a table needs a small grid (e.g. 200-500 points)",
            points.len()
        );
    }
    let names: Vec<String> = space.params.iter().map(|p| p.name.clone()).collect();
    let recorded = read_recorded(&args.out, &names)?;
    let points = match args.top {
        Some(k) => leaders(points, &names, &recorded, k, &args.out)?,
        None => points,
    };
    let dataset = load_dataset(&args.dataset, None, args.common.pace)?;
    let runner = runner(&args.common)?;
    let asked = args.common.scale.map(|s| (s, "as asked (--scale)"));
    let choice = pick_scale(&args.common, asked, engine, &dataset, args.budget.0, &runner)?;
    let budget = choice.scale.apply(args.budget.0);
    let mut done: HashMap<Vec<String>, usize> = recorded.into_iter().map(|(k, r)| (k, r.runs)).collect();
    for (round, index) in trial::rounds(points.len(), args.repeat, args.common.seed) {
        let key = key(&names, &points[index]);
        if done.get(&key).copied().unwrap_or(0) > round {
            continue;
        }
        let candidate = engine.complete(&points[index], args.budget.0);
        let request =
            Request { engine, candidate: &candidate, dataset: &dataset, budget, seed: args.common.seed };
        let m = trial::attempt(&runner, &request, &format!("table{index}"), None)?.measurement;
        eprintln!("round {} point {index}: {} {:.0} ops/s", round + 1, m.status, m.ops_per_sec);
        append(&args.out, &names, &points[index], round, m.status.to_string(), m.ops_per_sec)?;
        *done.entry(key).or_default() += 1;
    }
    Ok(())
}

/// A point's values in column order, as the table writes them.
fn key(names: &[String], point: &Candidate) -> Vec<String> {
    names.iter().map(|n| point[n].to_string()).collect()
}

/// What the table holds of one point.
#[derive(Default)]
struct Recorded {
    /// Its runs, failed ones included.
    runs: usize,
    /// The throughput of its runs that finished.
    ok: Vec<f64>,
}

/// What the table at `path` already holds of each point.
fn read_recorded(path: &std::path::Path, names: &[String]) -> anyhow::Result<HashMap<Vec<String>, Recorded>> {
    let mut recorded: HashMap<Vec<String>, Recorded> = HashMap::new();
    if !path.exists() {
        return Ok(recorded);
    }
    let mut reader = csv::Reader::from_path(path).with_context(|| format!("reading {}", path.display()))?;
    for row in reader.records() {
        let row = row.with_context(|| format!("reading {}", path.display()))?;
        let point = recorded.entry(row.iter().take(names.len()).map(String::from).collect()).or_default();
        point.runs += 1;
        if row.get(names.len() + 1) == Some("ok") {
            point.ok.extend(row.get(names.len() + 2).and_then(|ops| ops.parse::<f64>().ok()));
        }
    }
    Ok(recorded)
}

/// The `k` points with the best mean throughput in the table so far (`--top`).
fn leaders(
    points: Vec<Candidate>,
    names: &[String],
    recorded: &HashMap<Vec<String>, Recorded>,
    k: usize,
    path: &std::path::Path,
) -> anyhow::Result<Vec<Candidate>> {
    if k == 0 {
        bail!(
            "--top 0 would measure nothing: give the number of leading points to measure again, e.g. --top 8"
        );
    }
    let mean = |point: &Candidate| {
        let ok = &recorded.get(&key(names, point))?.ok;
        (!ok.is_empty()).then(|| ok.iter().sum::<f64>() / ok.len() as f64)
    };
    let mut ranked: Vec<(f64, Candidate)> = points.into_iter().filter_map(|p| Some((mean(&p)?, p))).collect();
    if ranked.is_empty() {
        bail!(
            "--top continues a table's best points, and {} holds no finished run of this space's points: \
             record the table first without --top",
            path.display()
        );
    }
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
    Ok(ranked.into_iter().take(k).map(|(_, p)| p).collect())
}

/// Appends one run (writing the header first into a new file).
fn append(
    path: &std::path::Path,
    names: &[String],
    point: &Candidate,
    round: usize,
    status: String,
    ops: f64,
) -> anyhow::Result<()> {
    let new = !path.exists();
    let file = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
    let mut out = csv::Writer::from_writer(file);
    if new {
        let mut header = names.to_vec();
        header.extend(["round".to_string(), "status".into(), "ops_per_sec".into()]);
        out.write_record(&header)?;
    }
    let mut row = key(names, point);
    row.extend([round.to_string(), status, format!("{ops:.1}")]);
    out.write_record(&row)?;
    out.flush()?;
    out.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?.flush()?;
    Ok(())
}
