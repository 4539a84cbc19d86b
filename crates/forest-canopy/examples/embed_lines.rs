// scratch: embed JSON-string lines from stdin with the full model, raw f32 to stdout
use forest_canopy::{Embedder, LocalEmbedder};
use std::io::{BufRead, Write};
fn main() {
    let dir = std::env::var("FOREST_EMBED_MODEL").unwrap();
    let e = LocalEmbedder::load(std::path::Path::new(&dir)).unwrap();
    let texts: Vec<String> =
        std::io::stdin().lock().lines().map(|l| serde_json::from_str(&l.unwrap()).unwrap()).collect();
    let mut out = std::io::stdout().lock();
    for chunk in texts.chunks(64) {
        for v in e.embed(chunk).unwrap() {
            for x in v {
                out.write_all(&x.to_le_bytes()).unwrap();
            }
        }
    }
}
