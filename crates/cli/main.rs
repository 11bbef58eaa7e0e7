//! The `nearcrawl` command.
fn main() {}
