//! `serve --state redis://HOST[:PORT][/DB]`: the counts a gateway's
//! replicas share (`hookhost::StateStore`), in Redis. Each session's
//! counts are one hash with an expiry, so the store holds a day of
//! sessions at most. The connection is made on first use and again after
//! any failure (a restarted Redis is used again once it is back), and
//! every call is bounded by [`DEADLINE`]: a store that does not answer in
//! time is an error the stop policies act on, never a wait.

use std::sync::Arc;
use std::time::Duration;

use hookhost::{StateError, StateFuture, StateStore};
use redis::aio::ConnectionManager;
use tokio::sync::Mutex;

/// The longest a call may take, connecting included.
const DEADLINE: Duration = Duration::from_millis(500);

/// A Redis server, reached through one multiplexed connection.
pub struct Redis {
    client: redis::Client,
    /// The URL without its password, for logs and errors.
    shown: String,
    /// The connection and its generation: a failure drops only the
    /// connection it happened on, not one a concurrent call made since.
    conn: Mutex<(u64, Option<ConnectionManager>)>,
}

impl std::fmt::Debug for Redis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redis").field("url", &self.shown).finish()
    }
}

impl Redis {
    /// Reads `url` (`redis://`); nothing is connected yet, so a gateway
    /// can start before its store.
    pub fn open(url: &str) -> Result<Arc<Redis>, String> {
        let shown = hookhost::masked_url(url);
        if !url.starts_with("redis://") {
            return Err(format!("--state {shown}: give a redis:// URL"));
        }
        let client = redis::Client::open(url).map_err(|e| format!("--state {shown}: {e}"))?;
        Ok(Arc::new(Redis {
            client,
            shown,
            conn: Mutex::new((0, None)),
        }))
    }

    /// The connection and its generation, made now if there is none.
    async fn conn(&self) -> Result<(u64, ConnectionManager), StateError> {
        let mut slot = self.conn.lock().await;
        if let (generation, Some(conn)) = &*slot {
            return Ok((*generation, conn.clone()));
        }
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(Some(DEADLINE))
            .set_response_timeout(Some(DEADLINE))
            .set_number_of_retries(0);
        let conn = ConnectionManager::new_with_config(self.client.clone(), config)
            .await
            .map_err(|e| self.error(e))?;
        slot.0 += 1;
        slot.1 = Some(conn.clone());
        Ok((slot.0, conn))
    }

    fn error(&self, e: impl std::fmt::Display) -> StateError {
        StateError(format!("redis {}: {e}", self.shown))
    }

    /// Runs `cmd` within [`DEADLINE`]; a failure drops the connection it
    /// ran on, so the next call makes a new one.
    async fn run<T: redis::FromRedisValue>(&self, cmd: &redis::Pipeline) -> Result<T, StateError> {
        let (generation, mut conn) = self.conn().await?;
        let answer = tokio::time::timeout(DEADLINE, cmd.query_async::<T>(&mut conn)).await;
        let result = match answer {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(self.error(e)),
            Err(_) => Err(self.error(format!("no answer within {} ms", DEADLINE.as_millis()))),
        };
        if result.is_err() {
            let mut slot = self.conn.lock().await;
            if slot.0 == generation {
                slot.1 = None;
            }
        }
        result
    }
}

impl StateStore for Redis {
    fn get<'a>(&'a self, key: &'a str, fields: &'a [String]) -> StateFuture<'a, Vec<Option<u32>>> {
        Box::pin(async move {
            let mut pipe = redis::pipe();
            pipe.cmd("HMGET").arg(key).arg(fields);
            let (counts,): (Vec<Option<u32>>,) = self.run(&pipe).await?;
            Ok(counts)
        })
    }

    fn set<'a>(
        &'a self,
        key: &'a str,
        fields: &'a [(String, u32)],
        ttl: Duration,
    ) -> StateFuture<'a, ()> {
        Box::pin(async move {
            let mut pipe = redis::pipe();
            pipe.atomic();
            for (field, n) in fields {
                match n {
                    0 => pipe.cmd("HDEL").arg(key).arg(field).ignore(),
                    n => pipe.cmd("HSET").arg(key).arg(field).arg(n).ignore(),
                };
            }
            pipe.cmd("EXPIRE")
                .arg(key)
                .arg(ttl.as_secs().max(1))
                .ignore();
            self.run::<()>(&pipe).await
        })
    }

    fn forget<'a>(&'a self, key: &'a str) -> StateFuture<'a, ()> {
        Box::pin(async move {
            let mut pipe = redis::pipe();
            pipe.cmd("DEL").arg(key).ignore();
            self.run::<()>(&pipe).await
        })
    }

    fn add<'a>(
        &'a self,
        key: &'a str,
        field: &'a str,
        delta: u64,
        ttl: Duration,
    ) -> StateFuture<'a, u64> {
        Box::pin(async move {
            // HINCRBY counts in a signed 64-bit integer: a delta past it
            // is held at its largest, which any cap has been reached by.
            let delta = i64::try_from(delta).unwrap_or(i64::MAX);
            let mut pipe = redis::pipe();
            pipe.atomic();
            pipe.cmd("HINCRBY").arg(key).arg(field).arg(delta);
            pipe.cmd("EXPIRE")
                .arg(key)
                .arg(ttl.as_secs().max(1))
                .ignore();
            let (total,): (i64,) = self.run(&pipe).await?;
            Ok(u64::try_from(total).unwrap_or(0))
        })
    }

    fn text<'a>(&'a self, key: &'a str) -> StateFuture<'a, Option<String>> {
        Box::pin(async move {
            let mut pipe = redis::pipe();
            pipe.cmd("GET").arg(key);
            let (text,): (Option<String>,) = self.run(&pipe).await?;
            Ok(text)
        })
    }

    fn put_text<'a>(&'a self, key: &'a str, value: &'a str, ttl: Duration) -> StateFuture<'a, ()> {
        Box::pin(async move {
            let ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
            let mut pipe = redis::pipe();
            pipe.cmd("SET")
                .arg(key)
                .arg(value)
                .arg("PX")
                .arg(ms)
                .ignore();
            self.run::<()>(&pipe).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_never_reaches_a_message() {
        let err = Redis::open("http://default:s3cret@10.0.0.5:6379/0").map(drop);
        assert!(
            matches!(&err, Err(e) if e.contains("redis://") && !e.contains("s3cret")),
            "{err:?}"
        );
    }
}
