//! `mirrorpid`: the operator's command line, next to Kafka's own tools.
//! Human tables by default, `--json` for scripts; errors are one line on
//! stderr naming the file and its byte offset, and a non-zero exit: 2 for
//! an error, 1 for a check that found something (`clusters check`,
//! `simulate`, `state dump`).
//!
//! The data path each command drives is the library's: segment bytes
//! ([`segment`]) -> batch headers -> the mapper -> the CRC patch -> bytes,
//! and `__mirror_state` records out.

mod commands;
mod out;
mod segment;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use commands::{clusters, pid, rewrite, simulate, snapshot, state};

/// Producer IDs for Kafka cross-cluster mirroring, for operators.
#[derive(Parser)]
#[command(name = "mirrorpid", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Decode or compute producer IDs.
    #[command(subcommand)]
    Pid(pid::PidCommand),
    /// Check a fleet's cluster IDs before turning mirroring on.
    #[command(subcommand)]
    Clusters(clusters::ClustersCommand),
    /// Read `__mirror_state` log segment files.
    #[command(subcommand)]
    State(state::StateCommand),
    /// Read mirrorpid snapshots, or make one from `__mirror_state`.
    #[command(subcommand)]
    Snapshot(snapshot::SnapshotCommand),
    /// Rewrite every batch of a segment file offline, as a leader would.
    Rewrite(rewrite::RewriteArgs),
    /// Run a simulator scenario; exit 1 if mirrorpid leaves any corruption.
    Simulate(simulate::SimulateArgs),
}

/// The text to print, and whether the command found what makes it exit 1.
fn run(cli: Cli) -> out::Result<(String, bool)> {
    let ok = |s: String| (s, false);
    match cli.command {
        Command::Pid(c) => pid::run(c).map(ok),
        Command::Clusters(c) => clusters::run(c),
        Command::State(c) => state::run(c),
        Command::Snapshot(c) => snapshot::run(c).map(ok),
        Command::Rewrite(args) => rewrite::run(&args).map(ok),
        Command::Simulate(args) => simulate::run(&args),
    }
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok((text, failed)) => {
            print!("{text}");
            if failed {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(message) => {
            eprintln!("mirrorpid: error: {message}");
            ExitCode::from(2)
        }
    }
}
