//! `quiclab calibrate --out FILE`: measures this machine's quiclab endpoint
//! (quiclab-net's `calibrate`) and writes a host profile for the simulator, plus the
//! wake-up samples it names (`FILE`'s stem + `.wake.txt`), then loads the profile
//! back through the simulator's parser so a written profile is a loadable one.

use anyhow::{Context, Result};
use clap::Args;
use quiclab_net::calibrate::{self, profile, Options, Sched};
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct CalibrateArgs {
    /// The host profile to write (TOML, `host = { profile = "FILE" }`); the timerfd
    /// wake-up samples go next to it as STEM.wake.txt.
    #[arg(long)]
    out: PathBuf,
    /// Measure for a second or two instead of about ten (smaller transfers, fewer
    /// wake-ups: noisier numbers).
    #[arg(long)]
    quick: bool,
    /// Bytes of each bulk transfer (default 40,000,000; 4,000,000 with --quick).
    #[arg(long)]
    transfer_bytes: Option<u64>,
    /// Measure in the normal scheduling class (default: SCHED_FIFO where permitted,
    /// as the lab runs its real endpoints).
    #[arg(long)]
    normal_class: bool,
}

pub fn run(a: CalibrateArgs) -> Result<()> {
    let mut opts = if a.quick {
        Options::quick()
    } else {
        Options::full()
    };
    if let Some(b) = a.transfer_bytes {
        opts.transfer_bytes = b.max(1);
    }
    if a.normal_class {
        opts.sched = Sched::Inherit;
    }
    let scratch = std::env::temp_dir().join(format!("quiclab-calibrate-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).with_context(|| format!("creating {}", scratch.display()))?;
    let measured = calibrate::run(opts, &scratch);
    let _ = std::fs::remove_dir_all(&scratch);
    let c = measured.context("calibrating")?;
    let stem = a
        .out
        .file_stem()
        .map_or_else(|| "profile".into(), |s| s.to_string_lossy().into_owned());
    let wake_name = format!("{stem}.wake.txt");
    let wake_path = a.out.with_file_name(&wake_name);
    let prov = profile::Provenance {
        command: std::env::args().collect::<Vec<_>>().join(" "),
        date: utc_now(),
    };
    write(&wake_path, &profile::wake_samples(&c, &prov))?;
    write(&a.out, &profile::profile_toml(&c, &prov, &wake_name))?;
    let loaded = quiclab_sim::host::HostConfig::from_profile(&a.out)
        .with_context(|| format!("the written profile {} does not load", a.out.display()))?;
    println!(
        "{}: recv {:.2} us, send {:.2} us per datagram, {:.3} ns/B (+ AEAD {:.3} ns/B); wake-ups {} samples; {:.1} datagrams per GSO send; threads {}",
        a.out.display(),
        loaded.recv_cost_us,
        loaded.send_cost_us,
        loaded.per_byte_ns,
        loaded.crypto_per_byte_ns,
        c.wake.timerfd_us.len(),
        c.gso_mean(),
        c.sched
    );
    Ok(())
}

fn write(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

/// Now as `YYYY-MM-DD HH:MM` UTC (civil date from days since 1970, H. Hinnant's method).
fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60
    )
}
