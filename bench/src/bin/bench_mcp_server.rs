//! The peer of the comparison: an rmcp server over stdio with one tool,
//! `check`, that answers a small text (`continue`) whatever its arguments.

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerInfo, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// The server: one tool, no state.
struct Check {
    schema: Arc<Map<String, Value>>,
}

impl ServerHandler for Check {
    fn get_info(&self) -> ServerInfo {
        ServerInfo::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tool = Tool::new(
            "check",
            "Answers `continue` for any tool call.",
            self.schema.clone(),
        );
        Ok(ListToolsResult::with_all_items(vec![tool]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        if request.name != "check" {
            return Err(ErrorData::invalid_params("no such tool", None));
        }
        Ok(CallToolResult::success(vec![ContentBlock::text(
            "continue",
        )]))
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let schema = match json!({"type": "object"}) {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    let server = Check {
        schema: Arc::new(schema),
    };
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(std::io::Error::other)?;
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}
