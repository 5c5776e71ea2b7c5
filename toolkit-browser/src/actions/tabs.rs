//! Tabs: `switch_tab`, `close_tab`.

use toolkit_core::{ToolResult, tool};

use super::{Reply, act, tab_line};
use crate::browser::Browser;

/// Make another open tab the current one (actions act on the current tab).
/// Tabs are named by the ids the page map lists.
#[tool(catalogue = false)]
pub async fn switch_tab(
    /// The tab's id, as the page map lists it (such as "a1b2").
    tab_id: String,
    #[tool(state)] browser: Browser,
) -> ToolResult {
    act(&browser, async |_| {
        let tab = browser.switch_tab(&tab_id).await?;
        let line = tab_line(&tab);
        Ok(Reply::text(format!("Switched to {line}."))
            .memory(format!("Switched to tab {}", tab.id)))
    })
    .await
}

/// Close an open tab. When it was the current tab, another one becomes
/// current.
#[tool(catalogue = false)]
pub async fn close_tab(
    /// The tab's id, as the page map lists it (such as "a1b2").
    tab_id: String,
    #[tool(state)] browser: Browser,
) -> ToolResult {
    act(&browser, async |_| {
        let current = browser.close_tab(&tab_id).await?;
        let line = tab_line(&current);
        Ok(
            Reply::text(format!("Closed tab {tab_id}. The current tab is {line}."))
                .memory(format!("Closed tab {tab_id}")),
        )
    })
    .await
}
