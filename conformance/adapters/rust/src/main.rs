//! `reasoning-replay-adapter`: the implementation behind the conformance adapter protocol
//! (PROTOCOL.md), persistent or one-shot (it reads request lines until `stop` or end of file).

use std::io::{stdin, stdout, BufWriter};

/// Deep inputs recurse (parsers, redaction, serialisation are bounded by `json::MAX_DEPTH`);
/// the worker thread gets a stack large enough for that bound.
const STACK_BYTES: usize = 512 << 20;

fn main() {
    // Panics are caught per request and answered `error`; keep stderr to one line each.
    std::panic::set_hook(Box::new(|info| eprintln!("reasoning-replay-adapter: {info}")));
    let worker = std::thread::Builder::new().stack_size(STACK_BYTES).spawn(|| {
        let input = stdin().lock();
        let output = BufWriter::new(stdout().lock());
        reasoning_replay::protocol::serve(input, output)
    });
    let code = match worker.map(|w| w.join()) {
        Ok(Ok(Ok(()))) => 0,
        Ok(Ok(Err(e))) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
        Ok(Ok(Err(e))) => {
            eprintln!("reasoning-replay-adapter: {e}");
            1
        }
        _ => 1,
    };
    std::process::exit(code);
}
