//! `kvtune table`: measures every point of a small space's grid several
//! times and writes them as a CSV table, so search strategies can be
//! compared on look-ups of real measurements (`cargo bench --bench search`).
//! Rounds run every point once in a random order; a table already written
//! is continued, so an interrupted recording loses nothing.

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
    let dataset = load_dataset(&args.dataset, None, args.common.pace)?;
    let runner = runner(&args.common)?;
    let asked = args.common.scale.map(|s| (s, "as asked (--scale)"));
    let choice = pick_scale(&args.common, asked, engine, &dataset, args.budget.0, &runner)?;
    let budget = choice.scale.apply(args.budget.0);
    let names: Vec<String> = space.params.iter().map(|p| p.name.clone()).collect();
    let mut done = read_done(&args.out, &names)?;
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

/// How many runs of each point the table at `path` already holds.
fn read_done(path: &std::path::Path, names: &[String]) -> anyhow::Result<HashMap<Vec<String>, usize>> {
    let mut done = HashMap::new();
    if !path.exists() {
        return Ok(done);
    }
    let mut reader = csv::Reader::from_path(path).with_context(|| format!("reading {}", path.display()))?;
    for row in reader.records() {
        let row = row?;
        *done.entry(row.iter().take(names.len()).map(String::from).collect()).or_default() += 1;
    }
    Ok(done)
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
