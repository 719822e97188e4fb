//! Floor 3, keeping persistent hooks alive: processes and remotes are
//! started, handshaken, restarted with backoff and stopped here, by one
//! lifecycle. A [`peer::Peer`] is what callers use; [`keep_alive()`] is the
//! one loop behind it, and a [`keep_alive::Connector`] ([`process`],
//! `remote` with the `remote` feature) is all that differs by transport.

pub(crate) mod declaration;
pub(crate) mod events;
pub(crate) mod handshake;
pub(crate) mod keep_alive;
pub(crate) mod peer;
pub(crate) mod process;
#[cfg(feature = "remote")]
pub(crate) mod remote;
pub(crate) mod restart;

use std::sync::Arc;

use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

use crate::error::StartError;
use crate::supervise::events::{Event, forward_events};
use crate::supervise::handshake::Hello;
use crate::supervise::keep_alive::{Connector, keep_alive};
use crate::supervise::peer::Peer;

/// The tasks of one running peer and what ends them.
pub(crate) struct Launched {
    /// Set to true to stop the peer (gracefully, after its events).
    pub(crate) shutdown: watch::Sender<bool>,
    /// Its keep-alive task and, when it takes events, its forwarder.
    pub(crate) tasks: Vec<JoinHandle<()>>,
    /// The outcome of its first start.
    pub(crate) first: oneshot::Receiver<Result<Hello, StartError>>,
}

/// Starts the tasks that keep `peer` alive through `connector` and, when
/// `events` is given, hand it runtime events.
pub(crate) fn launch<C: Connector>(
    peer: &Arc<Peer>,
    connector: C,
    events: Option<mpsc::Receiver<Event>>,
) -> Launched {
    let (shutdown, _) = watch::channel(false);
    let (tx, first) = oneshot::channel();
    let mut tasks = vec![tokio::spawn(keep_alive(
        peer.clone(),
        connector,
        shutdown.subscribe(),
        tx,
    ))];
    if let Some(events) = events {
        tasks.push(tokio::spawn(forward_events(
            peer.clone(),
            events,
            shutdown.subscribe(),
        )));
    }
    Launched {
        shutdown,
        tasks,
        first,
    }
}
