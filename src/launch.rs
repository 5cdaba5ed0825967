//! Job files that start a study's workers on the schedulers teams already
//! run: a Slurm array job (one task a worker) and a Kubernetes Indexed Job
//! (one pod a worker, one worker a node). Each worker runs
//! `kvtune worker DIR`; the study's folder is the only thing they share.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

use crate::budget::MIB;

/// Memory allowed a worker beyond its trial's budget (the trial's cgroup
/// holds the budget): kvtune itself, its workload generator and sampler.
pub const WORKER_OVERHEAD: u64 = 1024 * MIB;

/// What every launcher needs to know.
pub struct Launch<'a> {
    /// The study's folder, as every node sees it.
    pub dir: &'a Path,
    /// A name for the job, from the study's folder.
    pub name: String,
    pub workers: usize,
    /// The kvtune binary on the nodes.
    pub kvtune: PathBuf,
    /// Each worker's work directory base on its node's disk.
    pub workdir: PathBuf,
    /// Memory a worker may use: its largest trial's budget and its own.
    pub memory: u64,
    pub time_limit: Duration,
}

impl Launch<'_> {
    /// The job's name: `kvtune-` and the study folder's name, as Kubernetes
    /// names allow (lower case, digits and dashes, at most 63 characters).
    pub fn job_name(dir: &Path) -> String {
        let base = dir.file_name().map(|n| n.to_string_lossy().to_lowercase()).unwrap_or_default();
        let cleaned: String = base.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
        let name = format!("kvtune-{}", cleaned.trim_matches('-'));
        name.chars().take(63).collect::<String>().trim_end_matches('-').to_string()
    }

    /// The sbatch script: an array of `workers` tasks, each a worker named
    /// after its job and task, with its own work directory.
    pub fn slurm(&self, partition: Option<&str>, share_nodes: bool, extra: &[String]) -> String {
        let dir = self.dir.display();
        let mut lines = vec![
            "#!/bin/bash".to_string(),
            format!("#SBATCH --job-name={}", self.name),
            format!("#SBATCH --array=0-{}", self.workers.saturating_sub(1)),
            "#SBATCH --nodes=1".into(),
            "#SBATCH --ntasks=1".into(),
            "#SBATCH --cpus-per-task=1".into(),
            format!("#SBATCH --mem={}M", self.memory.div_ceil(MIB)),
            format!("#SBATCH --time={}", slurm_time(self.time_limit)),
            format!("#SBATCH --output={dir}/launch/slurm-%A_%a.out"),
            // Slurm sends SIGTERM first: the worker stops its trial cleanly,
            // and another worker runs it again at once.
            // B: signals the batch shell, which `exec` made kvtune itself.
            "#SBATCH --signal=B:TERM@60".into(),
        ];
        if !share_nodes {
            // One worker a node: trials side by side would disturb each other's figures.
            lines.push("#SBATCH --exclusive".into());
        }
        if let Some(p) = partition {
            lines.push(format!("#SBATCH --partition={p}"));
        }
        lines.extend(extra.iter().map(|flag| format!("#SBATCH {flag}")));
        lines.push(String::new());
        lines.push("# Each array task is one worker of the study; they share only its folder.".into());
        lines.push(format!(
            "exec {} worker {} --name \"slurm-${{SLURM_ARRAY_JOB_ID}}-${{SLURM_ARRAY_TASK_ID}}\" --workdir {}\"/${{SLURM_ARRAY_JOB_ID}}-${{SLURM_ARRAY_TASK_ID}}\"",
            shell_quote(&self.kvtune.display().to_string()),
            shell_quote(&dir.to_string()),
            shell_quote(&self.workdir.display().to_string())
        ));
        lines.join("\n") + "\n"
    }

    /// The Kubernetes Indexed Job: `workers` pods, at most one a node (anti
    /// affinity on the host name), the study's folder from a
    /// ReadWriteMany claim mounted at the same path, a memory request and
    /// limit of the worker's need, trial databases on the node's disk.
    pub fn k8s(&self, image: &str, claim: &str) -> Value {
        let dir = self.dir.display().to_string();
        let labels = json!({ "app.kubernetes.io/name": "kvtune", "kvtune.dev/study": self.name });
        let memory = format!("{}Mi", self.memory.div_ceil(MIB));
        json!({
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": { "name": self.name, "labels": labels },
            "spec": {
                "completionMode": "Indexed",
                "completions": self.workers,
                "parallelism": self.workers,
                "backoffLimit": self.workers * 2,
                "activeDeadlineSeconds": self.time_limit.as_secs(),
                "template": {
                    "metadata": { "labels": labels },
                    "spec": {
                        "restartPolicy": "Never",
                        "affinity": { "podAntiAffinity": { "requiredDuringSchedulingIgnoredDuringExecution": [{
                            "labelSelector": { "matchLabels": { "kvtune.dev/study": self.name } },
                            "topologyKey": "kubernetes.io/hostname"
                        }]}},
                        // The worker's SIGTERM handling stops its trial cleanly.
                        "terminationGracePeriodSeconds": 60,
                        "containers": [{
                            "name": "worker",
                            "image": image,
                            "command": [self.kvtune.display().to_string(), "worker", dir,
                                        "--name", "$(POD_NAME)", "--workdir", "/work"],
                            "env": [{ "name": "POD_NAME", "valueFrom": { "fieldRef": { "fieldPath": "metadata.name" } } }],
                            "resources": {
                                "requests": { "memory": memory, "cpu": "1" },
                                "limits": { "memory": memory }
                            },
                            "volumeMounts": [
                                { "name": "study", "mountPath": dir },
                                { "name": "work", "mountPath": "/work" }
                            ]
                        }],
                        "volumes": [
                            { "name": "study", "persistentVolumeClaim": { "claimName": claim } },
                            { "name": "work", "emptyDir": {} }
                        ]
                    }
                }
            }
        })
    }
}

/// `text` as one word to a POSIX shell.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// `D-HH:MM:SS`, as sbatch --time takes it.
fn slurm_time(limit: Duration) -> String {
    let s = limit.as_secs().max(60);
    format!("{}-{:02}:{:02}:{:02}", s / 86400, s / 3600 % 24, s / 60 % 60, s % 60)
}

/// `value` as block-style YAML. Every string value is written double-quoted
/// with JSON's escapes (a YAML double-quoted scalar reads them alike), so no
/// value is mistaken for a number, a boolean or a null.
pub fn yaml(value: &Value) -> String {
    let mut out = String::new();
    write_yaml(value, 0, &mut out);
    out
}

fn write_yaml(value: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (key, v) in map {
                out.push_str(&format!("{pad}{}:", yaml_key(key)));
                write_nested(v, indent, out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for item in items {
                out.push_str(&format!("{pad}-"));
                match item {
                    Value::Object(map) if !map.is_empty() => {
                        // The first key goes on the dash's line.
                        let mut first = String::new();
                        write_yaml(item, indent + 2, &mut first);
                        out.push(' ');
                        out.push_str(first.trim_start());
                    }
                    _ => write_nested(item, indent, out),
                }
            }
        }
        scalar => out.push_str(&format!("{pad}{scalar}\n")),
    }
}

/// A key as written: plain where it is a name (as Kubernetes' keys are),
/// else quoted.
fn yaml_key(key: &str) -> String {
    let plain = key.starts_with(|c: char| c.is_ascii_alphabetic())
        && key.chars().all(|c| c.is_ascii_alphanumeric() || "._/-".contains(c));
    if plain {
        key.to_string()
    } else {
        Value::String(key.to_string()).to_string()
    }
}

/// A map's or list's value: scalars (and empty collections) on the same line,
/// others indented below.
fn write_nested(value: &Value, indent: usize, out: &mut String) {
    match value {
        Value::Object(m) if !m.is_empty() => {
            out.push('\n');
            write_yaml(value, indent + 2, out);
        }
        Value::Array(a) if !a.is_empty() => {
            out.push('\n');
            write_yaml(value, indent + 2, out);
        }
        scalar => out.push_str(&format!(" {scalar}\n")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(dir: &Path) -> Launch<'_> {
        Launch {
            dir,
            name: Launch::job_name(dir),
            workers: 3,
            kvtune: "/opt/kvtune".into(),
            workdir: "/scratch/kv".into(),
            memory: 3 * 1024 * MIB,
            time_limit: Duration::from_secs(26 * 3600 + 61),
        }
    }

    #[test]
    fn the_slurm_script_runs_one_named_worker_per_array_task() {
        let script = launch(Path::new("/nfs/Spork_128G")).slurm(Some("perf"), false, &["--account=x".into()]);
        for line in [
            "#SBATCH --array=0-2",
            "#SBATCH --mem=3072M",
            "#SBATCH --time=1-02:01:01",
            "#SBATCH --exclusive",
            "#SBATCH --partition=perf",
            "#SBATCH --account=x",
            "#SBATCH --job-name=kvtune-spork-128g",
            "exec '/opt/kvtune' worker '/nfs/Spork_128G' --name \"slurm-${SLURM_ARRAY_JOB_ID}-${SLURM_ARRAY_TASK_ID}\" --workdir '/scratch/kv'\"/${SLURM_ARRAY_JOB_ID}-${SLURM_ARRAY_TASK_ID}\"",
            "#SBATCH --signal=B:TERM@60",
        ] {
            assert!(script.contains(line), "{line} missing from\n{script}");
        }
        assert!(!launch(Path::new("/x")).slurm(None, true, &[]).contains("--exclusive"));
    }

    #[test]
    fn the_k8s_job_is_block_yaml_with_every_string_value_quoted() {
        let job = launch(Path::new("/nfs/study")).k8s("ghcr.io/x/kvtune:1", "study-pvc");
        let text = yaml(&job);
        assert!(text.starts_with("apiVersion: \"batch/v1\"\nkind: \"Job\"\n"), "{text}");
        for line in [
            "  completionMode: \"Indexed\"\n",
            "      containers:\n        - command:\n            - \"/opt/kvtune\"\n",
            "          name: \"worker\"\n",
            "        - emptyDir: {}\n          name: \"work\"\n",
            "              topologyKey: \"kubernetes.io/hostname\"\n",
            "  \"weird key\": 1\n",
        ] {
            let text =
                if line.contains("weird") { yaml(&json!({ "a": { "weird key": 1 } })) } else { text.clone() };
            assert!(text.contains(line), "{line:?} missing from\n{text}");
        }
    }
}
