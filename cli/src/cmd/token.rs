//! `hookhost token new`: a caller of a team's gateway. The token is
//! printed once; the file (`serve --auth tokens:FILE`) keeps only its
//! sha256 and whom it stands for.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use hookhost::Identity;

use crate::gateway::tokens;
use crate::shared::exit::usage_error;

/// Make the tokens a team's gateway knows its callers by.
#[derive(Args)]
#[command(after_help = "Examples:\n  \
hookhost token new --file /etc/hookhost/tokens --tenant acme --user ann\n  \
hookhost token new --file /etc/hookhost/tokens --tenant acme --user ci --agent codex\n\n\
The token is printed once, on stdout; the file keeps its sha256 with the tenant, user and \
agent it stands for (`sha256:HASH tenant=T user=U [agent=A]`, created mode 0600). A gateway \
started with `hookhost serve --listen ADDR --auth tokens:FILE` reads the file again when it \
changes: a line added is a caller let in, a line removed a caller shut out, without a restart. \
Each event a caller sends runs with meta.tenant_id, meta.user_id (and meta.agent_id when the \
token names an agent) from its line, whatever the event says, so hooks scoped with \
scope = { tenants = [...], users = [...], agents = [...] } hold to the credential.")]
pub struct TokenArgs {
    #[command(subcommand)]
    action: Action,
}

#[derive(Subcommand)]
enum Action {
    /// Append a new token's line to FILE and print the token.
    New {
        /// The gateway's tokens file (`serve --auth tokens:FILE`).
        #[arg(long, value_name = "FILE")]
        file: PathBuf,
        /// The tenant (team, organisation) the caller belongs to.
        #[arg(long)]
        tenant: String,
        /// The person (or service) the token is for.
        #[arg(long)]
        user: String,
        /// Only for this agent: its events carry meta.agent_id = AGENT.
        #[arg(long)]
        agent: Option<String>,
    },
}

pub fn run(args: TokenArgs) -> ExitCode {
    let Action::New {
        file,
        tenant,
        user,
        agent,
    } = args.action;
    let identity = Identity::new(tenant, user, agent);
    match tokens::append_new(&file, &identity) {
        Ok(token) => {
            outln!("{token}");
            ExitCode::SUCCESS
        }
        Err(e) => usage_error(format!("token new: {e}")),
    }
}
