//! `kvtune bench`: measure one option set (a preset, or the engine's defaults
//! fitted to the budget) several times and print every metric's median and
//! spread: the machine's run-to-run noise as much as the option set.

use super::compare::{print, run};
use crate::cli::BenchArgs;
use crate::report::text::Layout;

pub fn bench(args: BenchArgs) -> anyhow::Result<()> {
    let comparison = run(std::slice::from_ref(&args.preset), &args.target, args.repeat, &args.common, 0)?;
    print(&comparison, &args.common, Layout::Text)
}
