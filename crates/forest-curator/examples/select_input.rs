//! What a leaf prompt carries of each node: `select_input BUDGET [-v] NODE.md...`
//! prints the body's tokens and the selected content's (issue 35); `-v`
//! prints the selection too.

use forest_curator::select::select_content;
use forest_model::node::Node;
use forest_model::tokens::estimate_tokens;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let verbose = args.iter().any(|a| a == "-v");
    args.retain(|a| a != "-v");
    let budget: usize = args.first().and_then(|b| b.parse().ok()).expect("usage: select_input BUDGET [-v] NODE.md...");
    for path in &args[1..] {
        let Ok(text) = std::fs::read_to_string(path) else { continue };
        let Ok(node) = Node::parse(&text) else { continue };
        let title = node.title().unwrap_or_default();
        let sel = select_content(&title, &node.body, budget);
        println!("{path}\tbody {}\tselected {}", estimate_tokens(&node.body), estimate_tokens(&sel));
        if verbose {
            println!("{sel}\n----");
        }
    }
}
