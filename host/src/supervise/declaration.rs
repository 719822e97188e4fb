//! What a hook is called for: its config narrowed by what its last hello
//! declared (config may narrow, never widen). Shared by hook processes and
//! remote hooks, which handshake the same way over different transports.

use std::sync::RwLock;

use hookhost_protocol::event::{EventPattern, intersect_patterns};
use hookhost_protocol::{HelloResult, Stage};

/// What the hook gets called for: config narrowed by its hello declaration.
#[derive(Debug, Clone, Default)]
pub(crate) struct Effective {
    /// Event kinds forwarded to it.
    pub observe: Vec<EventPattern>,
}

/// What the hook declared in its last hello; `None` = no declaration.
#[derive(Debug, Clone, Default)]
struct Declared {
    intercept: Option<Vec<Stage>>,
    observe: Option<Vec<EventPattern>>,
}

/// The configured lists, the last declaration, and what follows from both.
#[derive(Debug)]
pub(crate) struct Declaration {
    observe_config: RwLock<Vec<EventPattern>>,
    declared: RwLock<Declared>,
    effective: RwLock<Effective>,
}

impl Declaration {
    /// Before any hello: the config alone.
    pub(crate) fn new(observe: Vec<EventPattern>) -> Self {
        Declaration {
            effective: RwLock::new(Effective {
                observe: observe.clone(),
            }),
            observe_config: RwLock::new(observe),
            declared: RwLock::new(Declared::default()),
        }
    }

    /// What it is called for now.
    pub(crate) fn effective(&self) -> Effective {
        self.effective
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Records a hello declaration and narrows config by it.
    pub(crate) fn apply_hello(&self, hello: &HelloResult) {
        let observe: Option<Vec<EventPattern>> = hello.observe.as_ref().map(|list| {
            list.iter()
                .filter_map(|p| EventPattern::parse(p).ok())
                .collect()
        });
        *self.declared.write().unwrap_or_else(|p| p.into_inner()) = Declared {
            intercept: hello.intercept.clone(),
            observe,
        };
        self.recompute();
    }

    /// Replaces the configured observe list (a reload changed the hooks
    /// sharing a process).
    pub(crate) fn set_observe(&self, patterns: Vec<EventPattern>) {
        *self
            .observe_config
            .write()
            .unwrap_or_else(|p| p.into_inner()) = patterns;
        self.recompute();
    }

    fn recompute(&self) {
        let declared = self
            .declared
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let configured = self
            .observe_config
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let observe = intersect_patterns(declared.observe.as_deref(), &configured);
        *self.effective.write().unwrap_or_else(|p| p.into_inner()) = Effective { observe };
    }

    /// Whether the hook declared `stage` (true when it declared nothing).
    pub(crate) fn declares(&self, stage: Stage) -> bool {
        self.declared
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .intercept
            .as_ref()
            .is_none_or(|d| d.contains(&stage))
    }

    /// Whether it wants events of `kind`.
    pub(crate) fn observes(&self, kind: &str) -> bool {
        self.effective
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .observe
            .iter()
            .any(|p| p.matches(kind))
    }
}
