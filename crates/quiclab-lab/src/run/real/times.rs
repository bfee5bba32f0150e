//! Times a client measured itself, for clients that write no qlog because they are
//! not QUIC (curl over Linux TCP through `quiclab shell`): the client writes
//! `{out_dir}/times.json`, an object with `ttlb_s` and `response_bytes` and optionally
//! `handshake_done_s` and `ttfb_s`, seconds from when it started connecting (the
//! simulator's convention for a flow). curl writes it with `-w @file` (see
//! experiments/linux-tcp/curl_times.json).

use super::qlog::ClientTimes;
use std::path::Path;

/// The file's name in the run's directory.
pub const FILE: &str = "times.json";

/// The times in `dir`/times.json; `None` when there is no such file. A file that is
/// not an object with a finite, non-negative `ttlb_s` and a byte count is an error.
pub fn read(dir: &Path) -> Result<Option<ClientTimes>, String> {
    let path = dir.join(FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    parse(&text)
        .map(Some)
        .map_err(|why| format!("{}: {why}", path.display()))
}

/// `text` as times (see the module's doc).
fn parse(text: &str) -> Result<ClientTimes, String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let obj = v.as_object().ok_or("not a JSON object")?;
    let secs = |key: &str| -> Result<Option<f64>, String> {
        match obj.get(key) {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(x) => match x.as_f64() {
                Some(s) if s.is_finite() && s >= 0.0 => Ok(Some(s)),
                _ => Err(format!("`{key}` is not a non-negative number of seconds")),
            },
        }
    };
    let ttlb_s = secs("ttlb_s")?.ok_or("no `ttlb_s`")?;
    let response_bytes = obj
        .get("response_bytes")
        .and_then(serde_json::Value::as_u64)
        .ok_or("`response_bytes` is not a byte count")?;
    Ok(ClientTimes {
        handshake_done_s: secs("handshake_done_s")?,
        ttfb_s: secs("ttfb_s")?,
        ttlb_s: Some(ttlb_s),
        response_bytes,
        ..ClientTimes::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_curl_times() {
        let t = parse(
            r#"{"handshake_done_s": 0.6, "ttfb_s": 1.2, "ttlb_s": 3.5, "response_bytes": 1000}"#,
        )
        .unwrap();
        assert_eq!(t.ttlb_s, Some(3.5));
        assert_eq!(t.handshake_done_s, Some(0.6));
        assert_eq!(t.ttfb_s, Some(1.2));
        assert_eq!(t.response_bytes, 1000);
        let t = parse(r#"{"ttlb_s": 2, "response_bytes": 5}"#).unwrap();
        assert_eq!((t.ttlb_s, t.ttfb_s), (Some(2.0), None));
    }

    #[test]
    fn bad_times_are_errors() {
        for bad in [
            "[]",
            "{",
            r#"{"response_bytes": 5}"#,
            r#"{"ttlb_s": -1, "response_bytes": 5}"#,
            r#"{"ttlb_s": "x", "response_bytes": 5}"#,
            r#"{"ttlb_s": 1, "response_bytes": -5}"#,
            r#"{"ttlb_s": 1}"#,
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn no_file_is_none() {
        let dir = std::env::temp_dir().join(format!("quiclab-times-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert!(read(&dir).unwrap().is_none());
        std::fs::write(dir.join(FILE), "nope").unwrap();
        assert!(read(&dir).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
