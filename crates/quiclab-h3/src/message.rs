//! HTTP message checks (RFC 9114 §4.1.2, §4.3): a malformed request or response is a
//! stream error of type H3_MESSAGE_ERROR. Also the request/response helpers the
//! client and server use.

use crate::qpack::Field;

/// Why a field section is malformed.
pub type Malformed = String;

/// Connection-specific fields HTTP/3 forbids (RFC 9114 §4.2).
const CONNECTION_SPECIFIC: [&[u8]; 5] = [
    b"connection",
    b"keep-alive",
    b"proxy-connection",
    b"transfer-encoding",
    b"upgrade",
];

/// Checks field names and pseudo-header placement shared by requests and responses;
/// `pseudo` lists the pseudo-headers allowed.
fn check_common(fields: &[Field], pseudo: &[&[u8]]) -> Result<(), Malformed> {
    let mut regular_seen = false;
    let mut seen: Vec<&[u8]> = Vec::new();
    for f in fields {
        if f.name.is_empty() {
            return Err("empty field name".into());
        }
        if f.name.iter().any(|b| b.is_ascii_uppercase()) {
            return Err(format!("upper-case field name {:?}", lossy(&f.name)));
        }
        if f.name[0] == b':' {
            if regular_seen {
                return Err("pseudo-header after regular fields".into());
            }
            if !pseudo.contains(&f.name.as_slice()) {
                return Err(format!("pseudo-header {:?} not allowed", lossy(&f.name)));
            }
            if seen.contains(&f.name.as_slice()) {
                return Err(format!("duplicate {:?}", lossy(&f.name)));
            }
            seen.push(&f.name);
        } else {
            regular_seen = true;
            if CONNECTION_SPECIFIC.contains(&f.name.as_slice()) {
                return Err(format!("connection-specific field {:?}", lossy(&f.name)));
            }
            if f.name == b"te" && f.value != b"trailers" {
                return Err("te other than trailers".into());
            }
        }
    }
    Ok(())
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The value of the first field called `name`.
pub fn get<'a>(fields: &'a [Field], name: &str) -> Option<&'a [u8]> {
    fields
        .iter()
        .find(|f| f.name == name.as_bytes())
        .map(|f| f.value.as_slice())
}

/// Checks a request head (RFC 9114 §4.3.1).
pub fn check_request(fields: &[Field]) -> Result<(), Malformed> {
    check_common(
        fields,
        &[
            b":method",
            b":scheme",
            b":authority",
            b":path",
            b":protocol",
        ],
    )?;
    let method = get(fields, ":method").ok_or("missing :method")?;
    if method == b"CONNECT" {
        return Ok(());
    }
    if get(fields, ":scheme").is_none() {
        return Err("missing :scheme".into());
    }
    match get(fields, ":path") {
        Some(p) if !p.is_empty() => {}
        _ => return Err("missing or empty :path".into()),
    }
    if get(fields, ":authority").is_none() && get(fields, "host").is_none() {
        return Err("missing :authority and host".into());
    }
    Ok(())
}

/// Checks a response head (RFC 9114 §4.3.2); returns the status.
pub fn check_response(fields: &[Field]) -> Result<u16, Malformed> {
    check_common(fields, &[b":status"])?;
    let status = get(fields, ":status").ok_or("missing :status")?;
    std::str::from_utf8(status)
        .ok()
        .filter(|s| s.len() == 3)
        .and_then(|s| s.parse::<u16>().ok())
        .filter(|s| (100..600).contains(s))
        .ok_or_else(|| "bad :status".into())
}

/// Trailers carry no pseudo-headers (RFC 9114 §4.1).
pub fn check_trailers(fields: &[Field]) -> Result<(), Malformed> {
    check_common(fields, &[])
}

/// The content-length, if present and well-formed (RFC 9114 §4.1.2); an unparseable
/// one is malformed.
pub fn content_length(fields: &[Field]) -> Result<Option<u64>, Malformed> {
    match get(fields, "content-length") {
        None => Ok(None),
        Some(v) => std::str::from_utf8(v)
            .ok()
            .filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|s| s.parse().ok())
            .map(Some)
            .ok_or_else(|| "bad content-length".into()),
    }
}

/// A GET request head.
pub fn get_request(authority: &str, path: &str, extra: &[Field]) -> Vec<Field> {
    let mut f = vec![
        Field::new(":method", "GET"),
        Field::new(":scheme", "https"),
        Field::new(":authority", authority),
        Field::new(":path", path),
    ];
    f.extend_from_slice(extra);
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_responses() {
        let ok = get_request("example.com", "/", &[Field::new("user-agent", "x")]);
        assert_eq!(check_request(&ok), Ok(()));
        let mut bad = ok.clone();
        bad.push(Field::new(":path", "/again"));
        assert!(check_request(&bad).is_err());
        let mut bad = ok.clone();
        bad.push(Field::new("Foo", "x"));
        assert!(check_request(&bad).is_err());
        let bad = vec![Field::new("a", "b"), Field::new(":method", "GET")];
        assert!(check_request(&bad).is_err());
        assert!(check_request(&[Field::new(":method", "GET")]).is_err());
        let resp = vec![
            Field::new(":status", "200"),
            Field::new("content-length", "5"),
        ];
        assert_eq!(check_response(&resp), Ok(200));
        assert_eq!(content_length(&resp), Ok(Some(5)));
        assert!(check_response(&[Field::new(":status", "2000")]).is_err());
        assert!(check_response(&[Field::new("connection", "close")]).is_err());
        assert!(content_length(&[Field::new("content-length", "-1")]).is_err());
    }
}
