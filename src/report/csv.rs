//! `trials.csv`: one row per trial, every parameter and metric.

use std::collections::BTreeSet;

use crate::record::TrialRecord;
use crate::space::Space;

fn opt(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.4}")).unwrap_or_default()
}

/// The columns of `trials.csv` for a study's trials: phase columns follow
/// the phases, parameter columns the space and every parameter any trial
/// set, absolute options the engine's config of the first trial.
#[derive(Debug, Clone, PartialEq)]
pub struct Columns {
    pub header: Vec<String>,
    phases: Vec<String>,
    params: Vec<String>,
    option_names: Vec<String>,
}

/// The CSV text: the columns and a row per trial.
pub fn trials_csv(space: &Space, phases: &[String], trials: &[TrialRecord]) -> anyhow::Result<Vec<u8>> {
    let columns = Columns::of(space, phases, trials);
    rows_csv(&columns, trials, true)
}

/// `trials` as CSV rows under `columns`, with the header line or without.
pub fn rows_csv(columns: &Columns, trials: &[TrialRecord], with_header: bool) -> anyhow::Result<Vec<u8>> {
    let mut out = csv::Writer::from_writer(Vec::new());
    if with_header {
        out.write_record(&columns.header)?;
    }
    for t in trials {
        out.write_record(columns.row(t))?;
    }
    Ok(out.into_inner()?)
}

impl Columns {
    pub fn of(space: &Space, phases: &[String], trials: &[TrialRecord]) -> Self {
        let mut params: BTreeSet<String> = space.params.iter().map(|p| p.name.clone()).collect();
        params.extend(trials.iter().flat_map(|t| t.candidate.keys().cloned()));
        let option_names: Vec<String> =
            trials.first().map(|t| t.options.keys().cloned().collect()).unwrap_or_default();

        let mut header: Vec<String> = [
            "number",
            "stage",
            "label",
            "origin",
            "round",
            "worker",
            "host",
            "budget_bytes",
            "status",
            "reason",
            "ops_per_sec",
            "wall_secs",
            "overhead_secs",
            "settle_secs",
            "cpu_us_per_op",
            "cpu_user_secs",
            "cpu_system_secs",
            "context_switches",
            "cpu_steal_share",
            "beside_kvtune_pids",
            "user_bytes_written",
            "write_amplification",
            "stall_secs",
            "disk_bytes",
            "bytes_per_key",
            "peak_memory_bytes",
            "peak_rss_bytes",
            "peak_anon_bytes",
            "peak_page_cache_bytes",
            "memory_source",
            "block_cache_hit_rate",
            "bloom_usefulness",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for phase in phases {
            for metric in [
                "ops_per_sec",
                "mb_per_sec",
                "settle_secs",
                "p50_us",
                "p95_us",
                "p99_us",
                "p999_us",
                "disk_bytes",
            ] {
                header.push(format!("{phase}_{metric}"));
            }
        }
        header.extend(params.iter().cloned());
        header.push("adjusted".into());
        header.extend(option_names.iter().map(|f| format!("rocksdb.{f}")));
        Columns { header, phases: phases.to_vec(), params: params.into_iter().collect(), option_names }
    }

    /// One trial's row.
    fn row(&self, t: &TrialRecord) -> Vec<String> {
        let (phases, params, option_names) = (&self.phases, &self.params, &self.option_names);
        let m = &t.measurement;
        let mut row: Vec<String> = vec![
            t.number.to_string(),
            t.stage.to_string(),
            t.label.clone(),
            t.origin.clone(),
            t.round.map(|r| r.to_string()).unwrap_or_default(),
            t.worker.clone(),
            t.host.clone(),
            t.budget.to_string(),
            m.status.to_string(),
            m.reason.clone().unwrap_or_default(),
            format!("{:.1}", m.ops_per_sec),
            format!("{:.2}", m.wall_secs),
            format!("{:.2}", t.overhead_secs),
            format!("{:.3}", m.settle_secs()),
            opt(m.cpu_micros_per_op()),
            format!("{:.3}", m.cpu.user_secs),
            format!("{:.3}", m.cpu.system_secs),
            (m.cpu.voluntary_switches + m.cpu.involuntary_switches).to_string(),
            opt(m.steal_share),
            m.beside.iter().flatten().map(|n| n.pid.to_string()).collect::<Vec<_>>().join(" "),
            m.user_bytes_written.to_string(),
            opt(m.write_amplification),
            format!("{:.3}", m.stall_secs),
            m.disk_bytes.to_string(),
            opt(m.bytes_per_key),
            m.peak_memory.to_string(),
            m.peak_rss.to_string(),
            m.peak_anon.to_string(),
            m.peak_page_cache.to_string(),
            m.memory_source.clone(),
            opt(m.engine.block_cache_hit_rate()),
            opt(m.engine.bloom_usefulness()),
        ];
        for phase in phases {
            match m.phases.iter().find(|p| p.name == *phase) {
                Some(p) => row.extend([
                    format!("{:.1}", p.ops_per_sec),
                    format!("{:.3}", p.mb_per_sec),
                    format!("{:.3}", p.settle_secs),
                    format!("{:.1}", p.latency.p50_us),
                    format!("{:.1}", p.latency.p95_us),
                    format!("{:.1}", p.latency.p99_us),
                    format!("{:.1}", p.latency.p999_us),
                    p.disk_bytes.to_string(),
                ]),
                None => row.extend(std::iter::repeat_n(String::new(), 8)),
            }
        }
        row.extend(params.iter().map(|p| t.candidate.get(p).map(|v| v.to_string()).unwrap_or_default()));
        let adjusted: Vec<String> =
            t.adjusted.iter().map(|a| format!("{}: {} ran as {}", a.param, a.asked, a.ran)).collect();
        row.push(adjusted.join("; "));
        row.extend(option_names.iter().map(|f| t.options.get(f).map(|v| v.to_string()).unwrap_or_default()));
        row
    }
}
