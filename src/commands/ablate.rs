//! `kvtune ablate`: which of an option set's changes gave its gain. The set
//! runs beside itself with each change to the defaults put back alone, and
//! beside the defaults, in paired rounds: a measured answer where a model's
//! importance can mislead (on mixgraph it gave the block cache's share 0%
//! while the gain came from it).

use anyhow::bail;

use super::compare::{every_side_ran, load, run, Side};
use crate::cli::AblateArgs;
use crate::engine::Engine;
use crate::outcome::{Ablation, PutBack};
use crate::report::text::{ablation_table, Layout};
use crate::search::one_change_back;
use crate::space::{Candidate, Setting};

pub fn ablate(args: AblateArgs) -> anyhow::Result<()> {
    if !args.measuring.target.settings.is_empty() {
        bail!("--set: ablate measures the option set as it is; to change it, `kvtune compare SET SET --set NAME=VALUE`");
    }
    let named = load(&args.set, args.measuring.common.engine.as_deref())?;
    let Some(measured) = &named.measured else {
        bail!("{}: ablate takes a preset.toml or DIR#N; the defaults have no changes to put back", args.set);
    };
    let full_budget = args.measuring.target.budget.map_or(measured.budget_bytes, |b| b.0);
    let changes = changes(named.engine, &measured.candidate, full_budget);
    if changes.is_empty() {
        bail!("{} runs the defaults fitted to the budget: it has no change to put back", args.set);
    }
    let as_is = |settings| Side { spec: args.set.clone(), settings };
    let mut sides = vec![as_is(vec![])];
    sides.extend(
        changes.iter().map(|c| as_is(vec![Setting { name: c.param.clone(), value: c.default.clone() }])),
    );
    sides.push(Side { spec: format!("defaults@{}", named.engine.name()), settings: vec![] });
    let comparison = run(&sides, &args.measuring.target, args.repeat, &args.measuring.common)?;
    let ablation = Ablation { set: args.set.clone(), changes, comparison };
    if args.measuring.common.json {
        println!("{}", serde_json::to_string_pretty(&ablation)?);
    } else {
        let layout = if args.measuring.markdown { Layout::Markdown } else { Layout::Text };
        print!("{}", ablation_table(&ablation, layout));
    }
    every_side_ran(&ablation.comparison)
}

/// The parameters `candidate` sets differently from the defaults fitted to
/// `budget` whose putting back changes an option the engine runs (one whose
/// value the engine overrode would only cost runs). `budget` is the full one,
/// the size the user's system runs at: a change that moves options only at
/// the measured scale is not a change to the user's preset.
fn changes(engine: &dyn Engine, candidate: &Candidate, budget: u64) -> Vec<PutBack> {
    let set = engine.complete(candidate, budget);
    let defaults = engine.defaults(budget);
    let options = |c: &Candidate| engine.resolve(c, budget).ok().map(|r| r.options);
    one_change_back(&set, &defaults, |a, b| options(a) == options(b))
        .into_iter()
        .map(|(param, _)| PutBack { value: set[&param].clone(), default: defaults[&param].clone(), param })
        .collect()
}
