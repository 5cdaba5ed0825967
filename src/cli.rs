//! The command line: clap definitions and their checks. `kvtune` with no
//! subcommand means `kvtune tune`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::budget::ByteSize;
use crate::dataset::trace::{Format, Pace};
use crate::record::Objective;
use crate::scale::{Scale, VerifyAt};
use crate::search::Strategy;
use crate::space::Setting;
use crate::trial::CpuList;

#[derive(Debug, Parser)]
#[command(
    name = "kvtune",
    version,
    about = "Finds the best RocksDB options for your workload inside a memory budget, and proves it with measurements.",
    long_about = "Finds the best RocksDB options for your workload inside a memory budget, and proves it with measurements.\n\n\
kvtune replays a workload (a built-in dataset modelled on a real system, e.g. `spork`, a Flow blockchain indexer) against \
real RocksDB instances, one fresh database per candidate option set, each in its own process capped at the budget by a \
memory cgroup. It searches the option space, re-runs the best candidates against RocksDB's defaults, and writes the \
recommendation with its measured gain and confidence interval.\n\n\
The Go engines of the same systems run too (--engine pebble, badger or bbolt, through a Go driver built on first use), \
and --engines tunes several and sets their answers side by side: which engine, with which options.\n\n\
When the budget is more than this machine can test, kvtune scales the budget and the data down together (--scale), so \
their ratio, which decides cache hit rates and write amplification, is kept; the options it exports are for the full budget.",
    after_help = "Examples:\n  kvtune --budget 128G --dataset spork                 tune for a 128 GiB Flow indexer\n  kvtune --budget 8G --dataset spork --trials 30 --strategy random\n  kvtune --resume out/RUN --time 1h                    go on with a stopped study, its search given more time\n  kvtune --budget 128G --dataset spork --space search-spaces/badger-thread.toml --strategy grid\n  kvtune bench --preset out/RUN/preset.toml --repeat 5  re-measure a recommendation\n  kvtune bench --preset defaults --dataset spork --budget 128G --json\n  kvtune compare defaults out/RUN/preset.toml --repeat 5   paired rounds, benchstat-style table\n  kvtune compare out/RUN/preset.toml out/RUN#17         the recommendation against another trial\n  kvtune compare defaults defaults --set bloom_bits=10 --dataset spork --budget 8G\n  kvtune --engine pebble --budget 8G --dataset tbs      tune Pebble for Elastic APM's tail sampling\n  kvtune --engines rocksdb,pebble,badger --budget 8G --dataset tbs --time 10m   engines side by side\n  kvtune compare defaults defaults@pebble defaults@badger --dataset spork --budget 8G\n  kvtune --budget 128G --dataset spork --out /nfs/s --create-only   a study for many machines\n  kvtune launch slurm /nfs/s --workers 8    its workers (or `kvtune worker /nfs/s` on each)",
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub tune: TuneArgs,
}

impl Cli {
    /// The command line, parsed, with the flags a tune was given recorded.
    pub fn from_env() -> Self {
        use clap::{CommandFactory, FromArgMatches};
        let command = Cli::command();
        let matches = command.clone().get_matches();
        let mut cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
        // The arguments (not the groups clap makes of flattened structs) given.
        let given = |c: &clap::Command, m: &clap::ArgMatches| -> Vec<String> {
            c.get_arguments()
                .map(|a| a.get_id().as_str())
                .filter(|id| m.value_source(id) == Some(clap::parser::ValueSource::CommandLine))
                .map(String::from)
                .collect()
        };
        match (&mut cli.command, matches.subcommand(), command.find_subcommand("tune")) {
            (Some(Command::Tune(args)), Some(("tune", m)), Some(tune)) => args.given = given(tune, m),
            (None, ..) => cli.tune.given = given(&command, &matches),
            _ => {}
        }
        cli
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Search for the best options (the default when no subcommand is given).
    Tune(TuneArgs),
    /// Measure one option set (a preset or the defaults) several times and print every metric's median and spread.
    Bench(BenchArgs),
    /// Measure option sets side by side in paired rounds and print a benchstat-style table of every metric.
    Compare(CompareArgs),
    /// Which of an option set's changes gave its gain: measure it beside itself with each change to the defaults
    /// put back alone, and beside the defaults, in paired rounds: `kvtune ablate out/RUN/preset.toml`.
    Ablate(AblateArgs),
    /// List the built-in datasets, or describe one: its source, phases, op mix and size at a budget.
    Datasets(DatasetsArgs),
    /// Measure every point of a small space's grid several times into a CSV table, for the search benchmark
    /// (`cargo bench --bench search`).
    Table(TableArgs),
    /// Rewrite a study's report.md and report.html from its journal, finished or stopped midway:
    /// `kvtune report kvtune-out/`.
    Report(ReportArgs),
    /// Explain a preset: each option that differs from RocksDB as shipped, its value, the searched parameter
    /// that sets it, and what the study measured about that parameter: `kvtune explain out/RUN/preset.toml`.
    Explain(ExplainArgs),
    /// Work with a dataset: `kvtune dataset export NAME --format csv --out x.toml` writes it as trace files.
    Dataset(DatasetArgs),
    /// Join a study as a worker: take its next trials and run them on this machine, until the study ends.
    /// DIR is the study's folder on a file system every worker sees (NFS, say): `kvtune worker /shared/study`.
    Worker(JoinArgs),
    /// Start workers of a study on a cluster's scheduler: `kvtune launch slurm DIR --workers 8` submits an sbatch
    /// array job; `kvtune launch k8s DIR --workers 8 --image IMG --claim PVC` writes a Kubernetes Indexed Job.
    Launch(LaunchArgs),
    /// Run one trial in this process (kvtune starts this itself).
    #[command(hide = true)]
    TrialWorker(WorkerArgs),
}

/// Settings shared by `tune` and `bench`.
#[derive(Debug, Clone, Args)]
pub struct Common {
    /// Engine: rocksdb (in process), or pebble, badger or bbolt (Go libraries, run through kvtune's driver, which
    /// is built with `go build` on first use). Default: the (first) preset's or trial's engine, else rocksdb.
    #[arg(long, value_name = "NAME")]
    pub engine: Option<String>,
    /// Scale of the replay, a power-of-two fraction (1, 1/2, ..., 1/256, 2^-10): budget and data shrink alike.
    /// Default: the largest scale whose budget fits this machine and whose trial takes about --trial-seconds.
    #[arg(long, value_name = "S")]
    pub scale: Option<Scale>,
    /// Where trial databases are made: a directory on a real disk (not tmpfs); each trial's is removed after it.
    #[arg(long, value_name = "DIR", default_value = "work")]
    pub workdir: PathBuf,
    /// Seed of the workload generator and the sampler; the same seed replays the same operations.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
    /// Target seconds a trial should take when kvtune picks the scale.
    #[arg(long, value_name = "SECS", default_value_t = 20.0)]
    pub trial_seconds: f64,
    /// A trial still running after this many seconds per GiB of its budget (and at least this long) is stopped and
    /// recorded as failed. Default: ten times --trial-seconds, at least 120.
    #[arg(long, value_name = "SECS")]
    pub trial_timeout: Option<f64>,
    /// Print machine-readable JSON on stdout instead of the summary (progress still goes to stderr).
    #[arg(long)]
    pub json: bool,
    /// Pin each trial (all its threads) to these CPUs, e.g. 1 or 0-3.
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<CpuList>,
    /// Write back and drop the page cache before each trial (needs root).
    #[arg(long)]
    pub drop_caches: bool,
    /// Seconds to pause before each trial, so the last one's writeback is over.
    #[arg(long, value_name = "SECS", default_value_t = 0.0)]
    pub cooldown: f64,
    /// Pace of a trace dataset: as fast as the engine takes it, or at the recorded times (waits are not
    /// billed). Default: the dataset's `pace`, else fast.
    #[arg(long, value_enum, value_name = "fast|recorded")]
    pub pace: Option<Pace>,
}

/// A duration as people write it (`30m`, `2h`, `90s`), or `off`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeLimit(pub Option<std::time::Duration>);

impl std::str::FromStr for TimeLimit {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.trim() == "off" {
            return Ok(TimeLimit(None));
        }
        humantime::parse_duration(s.trim())
            .map(|d| TimeLimit(Some(d)))
            .map_err(|e| format!("`{s}` is not a duration ({e}): write e.g. 30m, 2h, 90s or off"))
    }
}

#[derive(Debug, Clone, Args)]
pub struct TuneArgs {
    /// The flags given on the command line (filled in by `Cli::from_env`),
    /// so `--resume` can refuse settings it would not apply.
    #[arg(skip)]
    pub given: Vec<String>,
    /// Memory budget of the engine process, page cache included: 512M, 8G, 128GiB (K, M, G, T are powers of 1024).
    #[arg(long, value_name = "SIZE", required_unless_present = "resume")]
    pub budget: Option<ByteSize>,
    /// Workload to replay: a built-in dataset (see `kvtune datasets`), the path of a dataset .toml file, or a trace
    /// file (RocksDB trace, CSV or JSON lines: see the README's "Your own traces").
    #[arg(long, value_name = "NAME|FILE", required_unless_present = "resume")]
    pub dataset: Option<String>,
    /// User data over the budget, e.g. 4 for data four times larger than memory; default: the modelled
    /// system's own ratio. Kept when kvtune scales the run.
    #[arg(long, value_name = "R")]
    pub data_ratio: Option<f64>,
    /// Tune several engines (e.g. rocksdb,pebble,badger), each with the same budget, dataset, trials and time, into
    /// OUT/ENGINE; then run their recommendations side by side in paired rounds (at least 3, else
    /// --confirm-repeats) and write OUT/engines.md: which engine, with which options.
    #[arg(long, value_name = "A,B,...", value_delimiter = ',', conflicts_with_all = ["space", "engine"])]
    pub engines: Vec<String>,
    /// Continue an interrupted study from its output folder (its journal.jsonl): the trials it
    /// recorded are kept and it goes on with the settings it was started with (it takes --workdir, --json,
    /// --trial-timeout and --workers; and --trials and --time, new limits for a search still running, with
    /// --create-only to record them for the study's workers without running a trial here).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["budget", "dataset", "data_ratio", "out", "space", "strategy", "objective", "confirm_top", "confirm_repeats", "verify_scale", "scale", "seed", "pace", "no_racing", "no_early_stop", "engine", "engines"])]
    pub resume: Option<PathBuf>,
    /// Most search trials, the defaults and the expert seeds included (racing, confirmation and the larger-scale
    /// check come on top). Default: as many as --time allows. With --resume: a new limit for the study's search,
    /// while it still runs.
    #[arg(long, value_name = "N")]
    pub trials: Option<usize>,
    /// How long the whole study may take, e.g. 30m, 2h, 90s: the search stops early enough to leave the
    /// confirmation and the larger-scale check their time. `off` for no limit. With --resume: a new limit for the
    /// whole study (the time it has spent counts), while its search still runs.
    #[arg(long, value_name = "DURATION", default_value = "30m")]
    pub time: TimeLimit,
    /// Search strategy. Every one but grid starts from the space's seeds and (the models) a Sobol design; after
    /// that, while a seed leads, a proposal the strategy judges not worth a trial goes to a put-back instead:
    /// the seed with one of its changes put back to the default, which racing then settles against it; once no
    /// put-back is left, a one-knob step of the leader (one option moved to another part of its range).
    #[arg(long, value_enum, default_value_t = Strategy::Bayes)]
    pub strategy: Strategy,
    /// Do not race promising candidates against the incumbent (each search candidate then runs once).
    #[arg(long)]
    pub no_racing: bool,
    /// Search until --trials or --time even where the strategy judges nothing left worth a run (bayes stops
    /// itself once its expected improvement stays below what one run resolves, and the leader's one-knob steps
    /// find nothing better): for a reference study, what a longer search finds.
    #[arg(long)]
    pub no_early_stop: bool,
    /// What to maximise: throughput (the whole replay), phase:NAME (one phase's throughput, e.g. phase:index),
    /// latency:PHASE:PCT (e.g. latency:serve:p99, minimised) or bytes_per_key (minimised); two, comma-separated,
    /// also keep their Pareto front (e.g. throughput,bytes_per_key). Default: the dataset's own.
    #[arg(long, value_name = "OBJECTIVE[,OBJECTIVE]", value_delimiter = ',')]
    pub objective: Vec<Objective>,
    /// Search space: a file, or the name of a built-in space (rocksdb, badger-thread, pebble, badger, bbolt).
    /// Default: the engine's own (its name).
    #[arg(long, value_name = "FILE|NAME")]
    pub space: Option<String>,
    /// Output folder. Default: out/DATASET-BUDGET-TIMESTAMP.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Best search candidates re-run against the defaults at the end.
    #[arg(long, value_name = "K", default_value_t = 2)]
    pub confirm_top: usize,
    /// Paired rounds of the confirmation: each runs every confirmed candidate and the defaults once, in a random order
    /// (3 or more for a paired test to resolve anything; more rounds resolve smaller gains).
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub confirm_repeats: usize,
    /// After the verdict, re-measure the confirmed candidates and the defaults at a larger scale to check that the
    /// result transfers: a multiple of the study's scale (4x), a scale (1/32), or off. Skipped, with the reason in
    /// the report, where this machine cannot hold the larger budget.
    #[arg(long, value_name = "4x|S|off", default_value = "4x")]
    pub verify_scale: VerifyAt,
    /// Workers on this machine, each running one trial at a time (the others are `kvtune worker` processes with
    /// a work directory each, WORKDIR/worker-I). Trials side by side share the machine's cores, memory and disk, and
    /// disturb each other's figures: more machines (`kvtune worker`, `kvtune launch`) measure better.
    #[arg(long, value_name = "N", default_value_t = 1, conflicts_with = "create_only")]
    pub workers: usize,
    /// Write the study to --out (its settings, after the scale is picked) and exit without running a trial:
    /// workers on other machines run it (`kvtune worker DIR`, `kvtune launch slurm|k8s DIR`). With --resume DIR
    /// and --trials or --time: record the new limits in DIR's journal for its workers, and exit.
    #[arg(long)]
    pub create_only: bool,
    #[command(flatten)]
    pub common: Common,
}

/// Where a worker runs and how it tells a stopped worker.
#[derive(Debug, Clone, Args)]
pub struct WorkerSettingsArgs {
    /// This worker's name in the journal and the reports, unique among the study's workers. Default: HOST:PID.
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// A worker whose heartbeat (a count rewritten every 2 s in DIR/workers/) has not moved for this long has
    /// stopped, and the trial it had claimed is run again by another worker. Each worker times this on its own
    /// clock, so the machines' clocks need not agree.
    #[arg(long, value_name = "DURATION", default_value = "60s")]
    pub stale_after: TimeLimit,
}

/// A worker takes the study's own settings; only where and how its trials
/// run here are its own.
#[derive(Debug, Clone, Args)]
pub struct JoinArgs {
    /// The study's folder (made by `kvtune tune --out DIR`, e.g. with --create-only).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    #[command(flatten)]
    pub worker: WorkerSettingsArgs,
    /// Where this worker's trial databases are made: a directory on this machine's own disk.
    #[arg(long, value_name = "DIR", default_value = "work")]
    pub workdir: PathBuf,
    /// A trial still running after this many seconds per GiB of its budget is stopped and recorded as failed.
    /// Default: ten times the longest the study has recorded, at least 200 s.
    #[arg(long, value_name = "SECS")]
    pub trial_timeout: Option<f64>,
    /// Pin this worker's trials to these CPUs of this machine, e.g. 1 or 0-3.
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<CpuList>,
    /// Print the study's verdict as JSON on stdout when it ends, instead of the summary.
    #[arg(long)]
    pub json: bool,
}

impl JoinArgs {
    /// The run settings of this worker, as `tune` has them.
    pub fn common(&self) -> Common {
        Common {
            engine: None,
            scale: None,
            workdir: self.workdir.clone(),
            seed: 1,
            trial_seconds: 20.0,
            trial_timeout: self.trial_timeout,
            json: self.json,
            cpus: self.cpus.clone(),
            drop_caches: false,
            cooldown: 0.0,
            pace: None,
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct LaunchArgs {
    /// The scheduler: slurm (writes DIR/launch/slurm.sbatch and submits it with sbatch) or k8s (writes
    /// DIR/launch/k8s-job.yaml for `kubectl apply -f`).
    #[arg(value_enum)]
    pub scheduler: Scheduler,
    /// The study's folder, on a file system every node mounts at the same path.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Workers: Slurm array tasks, or Kubernetes pods (one per node).
    #[arg(long, value_name = "N")]
    pub workers: usize,
    /// Slurm partition (sbatch --partition).
    #[arg(long, value_name = "P")]
    pub partition: Option<String>,
    /// Wall-clock limit of each worker (sbatch --time, k8s activeDeadlineSeconds), e.g. 2h.
    #[arg(long, value_name = "DURATION", default_value = "4h")]
    pub time_limit: TimeLimit,
    /// The kvtune binary the workers run, as the nodes see it. Default: this one's path (Slurm); `kvtune` in the
    /// image (k8s).
    #[arg(long, value_name = "PATH")]
    pub kvtune: Option<PathBuf>,
    /// Each worker's work directory for trial databases, on the node's own disk.
    #[arg(long, value_name = "DIR", default_value = "/tmp/kvtune-work")]
    pub workdir: PathBuf,
    /// Container image with kvtune in it (k8s).
    #[arg(long, value_name = "IMAGE")]
    pub image: Option<String>,
    /// PersistentVolumeClaim (ReadWriteMany) holding the study's folder (k8s); mounted at DIR.
    #[arg(long, value_name = "NAME")]
    pub claim: Option<String>,
    /// Write the job file but do not submit it (Slurm).
    #[arg(long)]
    pub no_submit: bool,
    /// Let workers share a node (Slurm): without it each task has a node to itself (--exclusive), as measuring
    /// needs; with it, a small cluster (or a test on one machine) runs several workers a node.
    #[arg(long)]
    pub share_nodes: bool,
    /// Extra sbatch flags, passed as they are (repeatable), e.g. --sbatch=--account=perf.
    #[arg(long, value_name = "FLAG", allow_hyphen_values = true)]
    pub sbatch: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scheduler {
    Slurm,
    K8s,
}

/// Where `bench` and `compare` run: the workload, the budget and what changes the option sets.
#[derive(Debug, Clone, Args)]
pub struct Target {
    /// Workload (a dataset, a dataset file or a trace file); default: the (first) preset's or trial's study's.
    #[arg(long, value_name = "NAME|FILE")]
    pub dataset: Option<String>,
    /// Memory budget; default: the (first) preset's or trial's study's.
    #[arg(long, value_name = "SIZE")]
    pub budget: Option<ByteSize>,
    /// User data over the budget; default: the (first) preset's or trial's study's, else the modelled system's own ratio.
    #[arg(long, value_name = "R")]
    pub data_ratio: Option<f64>,
    /// What the first row is and what the rounds' resolution is said of: throughput, phase:NAME,
    /// latency:PHASE:PCT or bytes_per_key. Default: the (first) preset's or trial's study's, else the dataset's own.
    #[arg(long, value_name = "OBJECTIVE")]
    pub objective: Option<Objective>,
    /// Changes a parameter, e.g. --set bloom_bits=10 (repeatable). `bench` changes its option set; `compare` changes
    /// every option set but the first (the baseline), so `compare defaults defaults --set bloom_bits=10` shows
    /// what bloom_bits=10 does.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub settings: Vec<Setting>,
}

#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// A preset.toml written by `kvtune tune`, `DIR#N` for trial N of the study in DIR (as it ran there), or
    /// `defaults` for the engine's defaults fitted to the budget.
    #[arg(long, value_name = "FILE|DIR#N|defaults")]
    pub preset: String,
    /// Runs of the option set.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub repeat: usize,
    #[command(flatten)]
    pub target: Target,
    #[command(flatten)]
    pub common: Common,
}

/// What `compare` and `ablate` share: what the option sets run on, how, and how the table prints.
#[derive(Debug, Clone, Args)]
pub struct Measuring {
    /// Print the table as Markdown instead of aligned text.
    #[arg(long)]
    pub markdown: bool,
    #[command(flatten)]
    pub target: Target,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Debug, Clone, Args)]
pub struct AblateArgs {
    /// The option set: a preset.toml kvtune wrote, or `DIR#N` (trial N of the study in DIR, as it ran there).
    /// Each parameter it sets differently from the defaults fitted to the budget, and that changes an
    /// option the engine runs, is put back alone: one more option set per change.
    #[arg(value_name = "FILE|DIR#N")]
    pub set: String,
    /// Rounds: each runs the set, every put-back variant and the defaults once, in a random order. A set with 10
    /// changes runs 12 option sets a round; with 3 rounds, the correction for testing 11 at once left even a
    /// 40% cost unresolved on mixgraph.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub repeat: usize,
    #[command(flatten)]
    pub measuring: Measuring,
}

#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// Option sets to compare, the first being the baseline: preset.toml files, `DIR#N` (trial N of the study in
    /// DIR, as it ran there: a contender the study did not recommend), `defaults` (of --engine), or
    /// `defaults@ENGINE` (e.g. `defaults defaults@pebble defaults@badger`: which engine, at its defaults).
    #[arg(value_name = "FILE|DIR#N|defaults", required = true, num_args = 2..)]
    pub sets: Vec<String>,
    /// Rounds: each runs every option set once, in a random order; each set pairs with the baseline's run of the
    /// same round. More rounds resolve smaller differences.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub repeat: usize,
    #[command(flatten)]
    pub measuring: Measuring,
}

/// How a dataset is sized and seeded when it is described or exported.
#[derive(Debug, Clone, Args)]
pub struct Sizing {
    /// The budget to size it for.
    #[arg(long, value_name = "SIZE", default_value = "1G")]
    pub budget: ByteSize,
    /// Scale applied to the budget, as a study would.
    #[arg(long, value_name = "S")]
    pub scale: Option<Scale>,
    /// Data over budget to size it for, instead of the modelled system's own.
    #[arg(long, value_name = "R")]
    pub data_ratio: Option<f64>,
    /// Seed of the generator.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
}

impl Sizing {
    /// The budget after the scale.
    pub fn budget(&self) -> u64 {
        self.scale.map_or(self.budget.0, |s| s.apply(self.budget.0))
    }
}

#[derive(Debug, Clone, Args)]
pub struct DatasetsArgs {
    /// A built-in dataset or a dataset file to describe; none lists the built-in ones.
    pub name: Option<String>,
    #[command(flatten)]
    pub sizing: Sizing,
}

#[derive(Debug, Clone, Args)]
pub struct ExplainArgs {
    /// A preset.toml kvtune wrote; the study's journal beside it, if there, says what was measured.
    #[arg(value_name = "PRESET")]
    pub preset: PathBuf,
}

#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// The study's folder (the one holding journal.jsonl).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Other studies to put beside this one: prints a table of them side by side and writes
    /// DIR/versus.html with their searches on one chart (e.g. `--compare out/random out/tpe`).
    #[arg(long, value_name = "DIR", num_args = 1..)]
    pub compare: Vec<PathBuf>,
    /// Print the study's verdict as JSON instead of where the reports went.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Args)]
pub struct TableArgs {
    /// A space whose grid is small (every choice, or the grid levels): each point is measured.
    #[arg(long, value_name = "FILE|NAME")]
    pub space: String,
    #[arg(long, value_name = "NAME|FILE")]
    pub dataset: String,
    #[arg(long, value_name = "SIZE")]
    pub budget: ByteSize,
    /// Runs of each point.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub repeat: usize,
    /// Continue only the K points of the table with the best mean so far, up to --repeat runs each: the
    /// table's leaders measured until its best is not a lucky draw (each round still runs them in a random order).
    #[arg(long, value_name = "K")]
    pub top: Option<usize>,
    /// The CSV table to write (continued if it exists).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Debug, Clone, Args)]
pub struct DatasetArgs {
    #[command(subcommand)]
    pub command: DatasetCommand,
}

#[derive(Debug, Clone, Subcommand)]
pub enum DatasetCommand {
    /// Write a dataset's phases, as generated at a budget and seed, as trace files (one a phase) and a dataset
    /// .toml listing them: `--dataset THAT.toml` replays the same phases; RocksDB's tools replay the RocksDB traces.
    Export(ExportArgs),
}

#[derive(Debug, Clone, Args)]
pub struct ExportArgs {
    /// A built-in dataset or a dataset file.
    pub name: String,
    /// Trace format: RocksDB's binary query trace, CSV or JSON lines (`op,key,arg,...`, see the README).
    #[arg(long, value_enum)]
    pub format: Format,
    /// The dataset .toml to write; the phase files go beside it as NAME.PHASE.trace|csv|jsonl.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    #[command(flatten)]
    pub sizing: Sizing,
}

#[derive(Debug, Clone, Args)]
pub struct WorkerArgs {
    pub spec: PathBuf,
    pub db_dir: PathBuf,
    pub report: PathBuf,
    pub cgroup: Option<PathBuf>,
}
