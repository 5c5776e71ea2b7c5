//! The public errors of the MCP side, produced for real where they can be,
//! walked as a host's reporter (anyhow's `{:#}`) walks them: each says
//! everything once, and none repeats a source.

use toolkit_mcp::{McpClient, PromptError, ResourceError};
use toolkit_tests::error_chain::{assert_no_repeats, messages};
use toolkit_tests::http::{Reply, TestServer};

/// A port nothing listens on.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[tokio::test]
async fn client_errors() {
    // Nothing listens.
    let url = format!("http://127.0.0.1:{}/mcp", closed_port());
    let error = McpClient::http("nowhere", url).connect().await.unwrap_err();
    assert_eq!(error.server(), "nowhere");
    assert!(!messages(&error)[0].is_empty());
    assert_no_repeats("ClientError (refused)", &error);

    // A server that answers garbage.
    let server = TestServer::replying([
        Reply::raw(200, [("Content-Type", "application/json")], "{not json"),
        Reply::raw(200, [("Content-Type", "application/json")], "{not json"),
    ]);
    let error = McpClient::http("garbage", server.url("/mcp"))
        .connect()
        .await
        .unwrap_err();
    assert_no_repeats("ClientError (garbage)", &error);
}

#[test]
fn errors_a_host_makes() {
    assert_no_repeats("PromptError", &PromptError::new("no such city"));
    assert_no_repeats("ResourceError", &ResourceError::new("the file is gone"));
}
