//! `kvtune bench`: measure one option set (a preset, or the engine's defaults
//! fitted to the budget) several times and print every metric's median and
//! spread: the machine's run-to-run noise as much as the option set.

use super::compare::{print, run, Side};
use crate::cli::BenchArgs;
use crate::report::text::Layout;

pub fn bench(args: BenchArgs) -> anyhow::Result<()> {
    let side = Side { spec: args.preset.clone(), settings: args.target.settings.clone() };
    let comparison = run(&[side], &args.target, args.repeat, &args.common)?;
    print(&comparison, &args.common, Layout::Text)
}
