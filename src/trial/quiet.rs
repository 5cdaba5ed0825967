//! What the runner does around each trial to cut run-to-run noise on a
//! shared machine: pin the trial to CPUs, flush and drop the page cache
//! before it, and pause so the last trial's writeback is over.

use std::time::Duration;

/// Settings that quiet the machine around a trial.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Quiet {
    /// CPUs the trial process (all its threads) may run on; `None`: any.
    pub cpus: Option<Vec<usize>>,
    /// Write back dirty pages and drop the page cache before each trial.
    pub drop_caches: bool,
    /// Pause before each trial.
    pub cooldown: Duration,
}

/// Says once per process that the page cache could not be dropped.
static DROP_WARNING: std::sync::Once = std::sync::Once::new();

impl Quiet {
    /// Runs in the parent before each trial starts.
    pub fn before_trial(&self) {
        if self.drop_caches {
            // SAFETY: sync takes no arguments and cannot fail.
            unsafe { libc::sync() };
            if let Err(why) = std::fs::write("/proc/sys/vm/drop_caches", "3") {
                DROP_WARNING.call_once(|| {
                    eprintln!("warning: cannot drop the page cache between trials ({why}); it needs root");
                });
            }
        }
        std::thread::sleep(self.cooldown);
    }

    /// Runs in the child between fork and exec: pins it to `cpus`.
    /// Only async-signal-safe calls here.
    pub fn in_child(cpus: &[usize]) -> std::io::Result<()> {
        // SAFETY: cpu_set_t is plain data; CPU_SET writes within it for
        // indices below CPU_SETSIZE, which the parser guarantees.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for &cpu in cpus {
                libc::CPU_SET(cpu, &mut set);
            }
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    }

    /// For the report: what was done to quiet the runs.
    pub fn describe(&self) -> String {
        let mut parts = vec![];
        if let Some(cpus) = &self.cpus {
            let list: Vec<String> = cpus.iter().map(|c| c.to_string()).collect();
            parts.push(format!("trials pinned to CPUs {}", list.join(",")));
        }
        if self.drop_caches {
            parts.push("page cache written back and dropped before each trial".into());
        }
        if !self.cooldown.is_zero() {
            parts.push(format!("{:.0} s pause before each trial", self.cooldown.as_secs_f64()));
        }
        if parts.is_empty() {
            "none".into()
        } else {
            parts.join("; ")
        }
    }
}

/// CPUs as `taskset` lists them: `1`, `0,2`, `2-3`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuList(pub Vec<usize>);

impl std::str::FromStr for CpuList {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        parse_cpus(text).map(CpuList)
    }
}

fn parse_cpus(text: &str) -> Result<Vec<usize>, String> {
    let mut cpus = vec![];
    for part in text.split(',').map(str::trim) {
        let (from, to) = part.split_once('-').unwrap_or((part, part));
        let range = from.trim().parse::<usize>().ok().zip(to.trim().parse::<usize>().ok());
        match range {
            Some((a, b)) if a <= b && b < libc::CPU_SETSIZE as usize => cpus.extend(a..=b),
            _ => return Err(format!("`{text}` is not a CPU list: write e.g. 1, 0,1 or 2-3")),
        }
    }
    // The CPUs this process may run on: pinning to another fails at exec.
    let usable = std::thread::available_parallelism().map_or(usize::MAX, |n| n.get());
    // SAFETY: a zeroed cpu_set_t is valid; sched_getaffinity fills it in.
    let mut allowed: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let known =
        unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut allowed) } == 0;
    if let Some(cpu) = cpus.iter().find(|&&c| known && !unsafe { libc::CPU_ISSET(c, &allowed) }) {
        let mine: Vec<String> = (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| unsafe { libc::CPU_ISSET(c, &allowed) })
            .map(|c| c.to_string())
            .collect();
        return Err(format!(
            "CPU {cpu} is not one kvtune may run on here ({usable} usable: {}): give CPUs from that list",
            mine.join(",")
        ));
    }
    Ok(cpus)
}
