//! Writes `assets/o200k_base.bin`, the vocabulary `src/tokens/bpe.rs` embeds:
//! `cargo run --release --example o200k_vocab -- assets/o200k_base.bin`.
//!
//! Source: tiktoken-rs's copy of OpenAI's `o200k_base.tiktoken` (MIT licence, © OpenAI; see
//! <https://github.com/openai/tiktoken>), read through tiktoken-rs (a dev-dependency) so no
//! path or network is involved. Format: for each rank from 0 in order, one length byte,
//! then the token's bytes (1.6 MB against the 3.6 MB base64 text).

use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(out) = std::env::args().nth(1) else {
        eprintln!("usage: o200k_vocab OUT_FILE");
        return ExitCode::from(2);
    };
    let bpe = match tiktoken_rs::o200k_base() {
        Ok(b) => b,
        Err(e) => {
            eprintln!("loading o200k_base: {e}");
            return ExitCode::from(2);
        }
    };
    let mut buf = Vec::with_capacity(1 << 21);
    let mut rank = 0u32;
    // Ordinary ranks are 0..N with no gaps; the first rank with no bytes ends them (the
    // special tokens, from 199,999, decode too but are never counted).
    while let Ok(bytes) = bpe.decode_bytes(&[rank]) {
        if rank >= 199_999 {
            break;
        }
        let Ok(len) = u8::try_from(bytes.len()) else {
            eprintln!("token {rank} is {} bytes, over 255", bytes.len());
            return ExitCode::from(2);
        };
        buf.push(len);
        buf.extend_from_slice(&bytes);
        rank += 1;
    }
    if let Err(e) = std::fs::write(&out, &buf) {
        eprintln!("writing {out}: {e}");
        return ExitCode::from(2);
    }
    println!("{rank} tokens, {} bytes → {out}", buf.len());
    ExitCode::SUCCESS
}
