//! Long fuzz runs of the HTTP/3 frame decoder and the QPACK decoder:
//! `cargo run --release -p quiclab-h3 --example fuzz -- [executions] [seed]`.

use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let seed: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    let t = Instant::now();
    let f = quiclab_h3::fuzz::fuzz_frames(seed, n);
    println!(
        "h3 frame decoder: {f:?} in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    let q = quiclab_h3::fuzz::fuzz_qpack(seed, n);
    println!(
        "qpack decoder:    {q:?} in {:.1} s",
        t.elapsed().as_secs_f64()
    );
}
