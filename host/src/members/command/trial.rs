//! The seam `hookhost conformance --dialect` checks a command hook
//! through: the same rendering of the input, the same spawn (folder,
//! environment, process group, timeout) and the same reading of the
//! answer as a chain call, taken one step at a time so that the checker
//! sees the raw run in between.

use serde_json::Value;
use tokio::time::Instant;

use super::CommandHook;
use super::run::Finished;
use crate::dialect::spec::Event;
use crate::error::CallError;

impl CommandHook {
    /// The stdin hookhost sends this hook at `event` for `params` (a
    /// stage's params, or `{event, meta, payload}` for a lifecycle event).
    pub(crate) fn render(&self, event: &'static Event, params: &Value) -> Value {
        self.call_for(event, params).input()
    }

    /// One run with `input` on stdin, as a chain call spawns it, within
    /// the hook's own timeout. `input` need not be what [`render`]
    /// gives: a checker also sends what the hook does not expect.
    ///
    /// [`render`]: CommandHook::render
    pub(crate) async fn run_once(
        &self,
        event: &'static Event,
        params: &Value,
        input: &Value,
    ) -> Result<Finished, CallError> {
        let call = self.call_for(event, params);
        let deadline = Instant::now() + self.timeout;
        self.execute(input, &call, deadline, None).await
    }

    /// What hookhost, reading as the hook's dialect, makes of a finished
    /// run: the stage's protocol result, or why the run is a failure.
    pub(crate) fn verdict(
        &self,
        event: &'static Event,
        params: &Value,
        done: &Finished,
        input: &Value,
    ) -> Result<Value, CallError> {
        // An answer its agent sets aside has no effect there: under a
        // checker it is what it is, an answer that does not work.
        let stdout = done.stdout.text();
        let json = serde_json::from_str::<Value>(stdout.trim()).ok();
        if let Some(Err(why)) = json
            .as_ref()
            .and_then(Value::as_object)
            .map(|m| (self.spec.unusable)(event.native, m))
        {
            return Err(CallError::Protocol(format!(
                "command hook `{}`: {} sets this answer aside: {why}",
                self.name, self.spec.dialect
            )));
        }
        self.read(&self.call_for(event, params), done, input, None)
    }
}
