//! One module per subcommand, each with its arguments beside the code that
//! runs them.

pub mod clusters;
pub mod pid;
pub mod rewrite;
pub mod simulate;
pub mod snapshot;
pub mod state;
