//! `kvtune compare` and the machinery `bench` shares with it: option sets
//! (presets or `defaults`, changed by `--set`) run side by side in rounds.

use std::path::Path;

use anyhow::{bail, Context};

use super::{check_objective, load_dataset, own_objective, pick_scale, runner};
use crate::budget::ByteSize;
use crate::cli::{Common, CompareArgs, Target};
use crate::engine::{self, Engine};
use crate::outcome::Comparison;
use crate::record::Objective;
use crate::report::text::{comparison_table, Layout};
use crate::report::Preset;
use crate::scale::Scale;
use crate::space::{Candidate, Setting};
use crate::study::compare::{measure, tabulate, ComparedOn, Sides};
use crate::study::journal;
use crate::trial::Request;

pub fn compare(args: CompareArgs) -> anyhow::Result<()> {
    let layout = if args.measuring.markdown { Layout::Markdown } else { Layout::Text };
    // `--set` changes every option set but the first, the baseline.
    let sides: Vec<Side> = args
        .sets
        .iter()
        .enumerate()
        .map(|(i, spec)| Side {
            spec: spec.clone(),
            settings: if i == 0 { vec![] } else { args.measuring.target.settings.clone() },
        })
        .collect();
    let comparison = run(&sides, &args.measuring.target, args.repeat, &args.measuring.common)?;
    print(&comparison, &args.measuring.common, layout)
}

/// An option set to measure: as named on the command line (a preset,
/// `DIR#N` or `defaults`), with parameters changed.
pub(super) struct Side {
    pub spec: String,
    pub settings: Vec<Setting>,
}

/// Prints a comparison as its table, or as JSON; fails if a side never succeeded.
pub(super) fn print(comparison: &Comparison, common: &Common, layout: Layout) -> anyhow::Result<()> {
    if common.json {
        println!("{}", serde_json::to_string_pretty(comparison)?);
    } else {
        print!("{}", comparison_table(comparison, layout));
    }
    every_side_ran(comparison)
}

/// Fails if a side of the comparison never succeeded.
pub(super) fn every_side_ran(comparison: &Comparison) -> anyhow::Result<()> {
    match comparison.sides.iter().find(|s| !s.runs.iter().any(|m| m.ok())) {
        Some(side) => bail!("no run of {} succeeded", side.label),
        None => Ok(()),
    }
}

/// An option set as named on the command line, and the engine it runs on.
#[derive(Clone)]
pub(super) struct Named {
    pub label: String,
    pub measured: Option<MeasuredAs>,
    pub engine: &'static dyn Engine,
}

/// An option set a study measured (a preset's recommendation, or one of its
/// trials), with what it was measured on: the defaults a comparison takes
/// where the command line does not say.
#[derive(Clone)]
pub(super) struct MeasuredAs {
    engine: String,
    /// As searched: memory as shares of the budget.
    pub candidate: Candidate,
    pub budget_bytes: u64,
    /// The dataset by its file where it has one, else by name.
    dataset: String,
    data_ratio: Option<f64>,
    scale: Scale,
    /// What the study maximised (its first objective).
    objective: Option<Objective>,
}

impl MeasuredAs {
    fn from_preset(path: &str) -> anyhow::Result<Self> {
        let preset = Preset::load(Path::new(path))?;
        Ok(MeasuredAs {
            scale: preset.scale.parse().with_context(|| format!("preset {path}"))?,
            dataset: preset.dataset_file.as_ref().map_or(preset.dataset, |f| f.display().to_string()),
            engine: preset.engine,
            candidate: preset.candidate,
            budget_bytes: preset.budget_bytes,
            data_ratio: preset.data_ratio,
            objective: match preset.measured {
                Some(m) => Some(m.objective.parse().with_context(|| format!("preset {path}"))?),
                None => None,
            },
        })
    }

    /// Trial `label` (`#N`) of the study in `dir`, as it ran: a contender the
    /// study did not recommend can be measured again beside the one it did.
    fn from_trial(dir: &Path, label: &str) -> anyhow::Result<Self> {
        let recorded = journal::read_study(dir)?;
        let Some(trial) = recorded.trials.iter().find(|t| t.label == label) else {
            // trials.csv numbers every run: a racing or confirmation run's
            // number is not the label of the trial it measured again.
            let number = label.trim_start_matches('#');
            if let Some(run) = recorded.trials.iter().find(|t| t.number.to_string() == number) {
                let give = match run.label.starts_with('#') {
                    true => format!("give {}{}", dir.display(), run.label),
                    false => "name the defaults `defaults`".to_string(),
                };
                bail!(
                    "run {number} of the study in {} was a {} run of {}: {give}",
                    dir.display(),
                    run.stage,
                    run.label
                );
            }
            // A search trial's label is its own number; racing and confirmation
            // runs carry the label of the trial they measure again.
            let searched: Vec<usize> = recorded
                .trials
                .iter()
                .filter(|t| t.label == format!("#{}", t.number))
                .map(|t| t.number)
                .collect();
            let range = match (searched.iter().min(), searched.iter().max()) {
                (Some(first), Some(last)) => format!("its search trials are #{first} .. #{last}"),
                _ => "it has no search trials".to_string(),
            };
            bail!("the study in {} has no trial {label}: {range}", dir.display());
        };
        let header = recorded.header;
        Ok(MeasuredAs {
            engine: header.engine,
            candidate: trial.candidate.clone(),
            budget_bytes: header.full_budget,
            dataset: header.dataset.file.map_or(header.dataset.name, |f| f.display().to_string()),
            data_ratio: header.dataset.data_ratio,
            scale: header.scale,
            objective: header.objectives.into_iter().next(),
        })
    }

    /// `DIR#N` (trial N of the study in DIR), else a preset file.
    fn from_spec(spec: &str) -> anyhow::Result<Self> {
        match spec.rsplit_once('#') {
            Some((dir, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                Self::from_trial(Path::new(dir), &format!("#{n}"))
            }
            _ => Self::from_preset(spec),
        }
    }
}

/// `defaults` (of `--engine`, else RocksDB), `defaults@ENGINE`, a preset
/// or a study's trial `DIR#N` (of its own engine, which `--engine` must not
/// contradict).
pub(super) fn load(spec: &str, asked: Option<&str>) -> anyhow::Result<Named> {
    let (measured, engine) = match spec.strip_prefix("defaults") {
        Some("") => (None, asked.unwrap_or("rocksdb").to_string()),
        Some(at) if at.starts_with('@') => (None, at[1..].to_string()),
        _ => {
            let measured = MeasuredAs::from_spec(spec)?;
            if let Some(asked) = asked.filter(|a| *a != measured.engine) {
                bail!(
                    "--engine {asked}: option set {spec} is for {}; options do not carry over between engines",
                    measured.engine
                );
            }
            let engine = measured.engine.clone();
            (Some(measured), engine)
        }
    };
    let engine = engine::find(&engine).with_context(|| format!("option set {spec}"))?;
    engine.prepare()?;
    Ok(Named { label: spec.to_string(), measured, engine })
}

/// `named`'s candidate at the full budget, with `settings` applied.
fn candidate(
    named: &Named,
    settings: &[Setting],
    engine: &dyn Engine,
    full_budget: u64,
) -> anyhow::Result<Candidate> {
    let mut candidate = match &named.measured {
        Some(m) => engine.complete(&m.candidate, full_budget),
        None => engine.defaults(full_budget),
    };
    candidate.extend(settings.iter().map(|s| (s.name.clone(), s.value.clone())));
    engine
        .resolve(&candidate, full_budget)
        .with_context(|| format!("option set {}", label_with(&named.label, settings)))?;
    Ok(candidate)
}

/// Changes a side's label lists before it names only their number, the list
/// then printed once, so that columns stay readable.
const LABELLED_CHANGES: usize = 3;

/// `label` with the `--set` changes made to it.
fn label_with(label: &str, settings: &[Setting]) -> String {
    match settings.len() {
        0 => label.to_string(),
        n if n > LABELLED_CHANGES => format!("{label}+{n} changes"),
        _ => {
            let changes: Vec<String> = settings.iter().map(|s| s.to_string()).collect();
            format!("{label}+{}", changes.join(","))
        }
    }
}

/// Runs the option sets `sides` side by side, `repeat` rounds (`target`'s
/// `--set` is the callers' to apply: each side carries its own changes).
pub(super) fn run(
    sides: &[Side],
    target: &Target,
    repeat: usize,
    common: &Common,
) -> anyhow::Result<Comparison> {
    if repeat == 0 {
        bail!("--repeat 0: give at least 1");
    }
    let asked_engine = common.engine.as_deref();
    // Each spec read once: an ablation names the same study's trial on every side.
    let mut named: Vec<Named> = Vec::with_capacity(sides.len());
    for side in sides {
        let same = named.iter().zip(sides).find(|(_, s)| s.spec == side.spec).map(|(n, _)| n.clone());
        named.push(match same {
            Some(n) => n,
            None => load(&side.spec, asked_engine)?,
        });
    }
    let first_measured = named.iter().find_map(|n| n.measured.as_ref());
    // The first side's engine calibrates the scale.
    let engine = named[0].engine;
    let full_budget = match (target.budget, first_measured) {
        (Some(b), _) => b.0,
        (None, Some(m)) => m.budget_bytes,
        (None, None) => bail!("--budget is required when no preset or trial is given"),
    };
    let dataset_name = target.dataset.clone().or_else(|| first_measured.map(|m| m.dataset.clone()));
    let dataset = load_dataset(
        &dataset_name.context("--dataset is required when no preset or trial is given")?,
        target.data_ratio.or(first_measured.and_then(|m| m.data_ratio)),
        common.pace,
    )?;
    let objective = match (&target.objective, first_measured.and_then(|m| m.objective.as_ref())) {
        (Some(asked), _) | (None, Some(asked)) => asked.clone(),
        (None, None) => own_objective(&dataset)?,
    };
    check_objective(&objective, &dataset).with_context(|| match &target.objective {
        Some(_) => "--objective".to_string(),
        None => format!(
            "the objective of the first preset's or trial's study, on {}; give --objective",
            dataset.name
        ),
    })?;
    let mut labels = vec![];
    let mut candidates = vec![];
    for (n, side) in named.iter().zip(sides) {
        candidates.push((n.engine, candidate(n, &side.settings, n.engine, full_budget)?));
        labels.push(label_with(&n.label, &side.settings));
    }
    let runner = runner(common)?;
    let asked = match (common.scale, first_measured) {
        (Some(scale), _) => Some((scale, "as asked (--scale)")),
        (None, Some(m)) => Some((m.scale, "the first preset or trial was measured at (--scale changes it)")),
        (None, None) => None,
    };
    let choice = pick_scale(common, asked, engine, &dataset, full_budget, &runner)?;
    let budget = choice.scale.apply(full_budget);
    if !common.json {
        eprintln!(
            "kvtune: {} at budget {} (scale {}, {}): {repeat} rounds",
            labels.join(" vs "),
            ByteSize(full_budget),
            choice.scale,
            choice.reason
        );
        for (label, side) in labels.iter().zip(sides).filter(|(_, s)| s.settings.len() > LABELLED_CHANGES) {
            let changes: Vec<String> = side.settings.iter().map(|s| s.to_string()).collect();
            eprintln!("{label}: {}", changes.join(", "));
        }
    }
    let requests = candidates
        .iter()
        .map(|(engine, candidate)| Request {
            engine: *engine,
            candidate,
            dataset: &dataset,
            budget,
            seed: common.seed,
        })
        .collect();
    let sides = Sides { labels, requests };
    let json = common.json;
    let mut log = |round: usize, label: &str, m: &crate::record::Measurement| {
        if !json {
            let detail = m.reason.as_deref().unwrap_or("");
            eprintln!(
                "round {}: {label}: {} {:.0} ops/s in {:.1} s {detail}",
                round + 1,
                m.status,
                m.ops_per_sec,
                m.wall_secs
            );
        }
    };
    let runs = measure(&runner, &sides, repeat, common.seed, &mut log)?;
    let on = ComparedOn {
        dataset: &dataset.name,
        budget: full_budget,
        scale: choice.scale,
        seed: common.seed,
        objective: &objective,
    };
    Ok(tabulate(runs, &on))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_lists_a_few_changes_and_counts_many() {
        let settings = |names: &[&str]| -> Vec<Setting> {
            names.iter().map(|n| format!("{n}=1").parse().unwrap()).collect()
        };
        assert_eq!(label_with("defaults", &[]), "defaults");
        assert_eq!(
            label_with("defaults", &settings(&["bloom_bits", "block_size"])),
            "defaults+bloom_bits=1,block_size=1"
        );
        let many = settings(&["a", "b", "c", "d"]);
        assert_eq!(label_with("p.toml", &many), "p.toml+4 changes");
    }
}
