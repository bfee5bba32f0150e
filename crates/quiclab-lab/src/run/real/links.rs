//! A real run's links: quiclab's emulator writes them to `{out_dir}/emulator/links.json`
//! as the simulator's `results.json` holds them (throughput over the measurement window,
//! queue counters, sojourn quantiles, DualPI2's L and C queues), and the run's result
//! carries them under `links`, so a plan's `links[..]` metrics read a real run by the
//! same paths as a simulated one. A run without them (`emulator = "none"`, or an
//! emulator command that writes no links.json) has no `links`: such metrics are "no
//! data" there.

use serde_json::Value;
use std::path::Path;

/// The links the emulator wrote for the run in `dir`, or `None` when it wrote none.
/// A file that is not a JSON array is an error naming it.
pub fn emulator_links(dir: &Path) -> Result<Option<Value>, String> {
    let path = dir.join("emulator").join("links.json");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let links: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    if !links.is_array() {
        return Err(format!("{}: not an array of links", path.display()));
    }
    Ok(Some(links))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> std::path::PathBuf {
        let d =
            std::env::temp_dir().join(format!("quiclab-lab-links-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("emulator")).unwrap();
        d
    }

    #[test]
    fn reads_the_emulators_links() {
        let d = dir("ok");
        std::fs::write(
            d.join("emulator/links.json"),
            r#"[{"name": "forward", "throughput_bps": 1.0},
                {"name": "return", "subqueues": [{"name": "l", "sojourn_p50_ms": 0.5}]}]"#,
        )
        .unwrap();
        let links = emulator_links(&d).unwrap().unwrap();
        assert_eq!(links[1]["subqueues"][0]["sojourn_p50_ms"], 0.5);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn no_file_is_no_links_and_a_bad_one_an_error() {
        let d = dir("none");
        assert_eq!(emulator_links(&d).unwrap(), None);
        std::fs::write(d.join("emulator/links.json"), "{\"name\": \"forward\"}").unwrap();
        let e = emulator_links(&d).unwrap_err();
        assert!(
            e.contains("links.json") && e.contains("not an array"),
            "{e}"
        );
        std::fs::write(d.join("emulator/links.json"), "[").unwrap();
        assert!(emulator_links(&d).unwrap_err().contains("links.json"));
        let _ = std::fs::remove_dir_all(&d);
    }
}
