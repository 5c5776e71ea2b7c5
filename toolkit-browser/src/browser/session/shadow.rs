//! Closed shadow roots: a web component that attaches its shadow root
//! with `mode: 'closed'` hides it from every script of the page, the page
//! script included. DevTools sees them; this hands each one to the page
//! script, which then walks and hit-tests inside it as inside an open one.

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::dom::{
    DescribeNodeParams, ResolveNodeParams, ShadowRootType,
};
use chromiumoxide::cdp::js_protocol::runtime::{
    CallArgument, CallFunctionOnParams, EvaluateParams, GetPropertiesParams,
    ReleaseObjectGroupParams, RemoteObjectId,
};
use futures_util::future::join_all;

use super::{Fail, Session};
use crate::error::BrowserError;

/// The object group the handles taken here belong to, released at the end.
const GROUP: &str = "toolkit-browser-shadow";

impl Session {
    /// Looks at the custom elements the last walk of `page`'s document
    /// found without an open shadow root, and hands every closed shadow
    /// root among them to the page script. Returns how many it handed in:
    /// the document is worth walking again when any.
    ///
    /// Each host is looked at once (the page script remembers it), so a
    /// page whose components are known costs nothing here; the hosts'
    /// commands are sent together.
    pub(crate) async fn open_closed_roots(&mut self, page: &Page) -> Result<usize, BrowserError> {
        let opened = self.adopt_closed_roots(page).await;
        let _ = self
            .exec_raw(page, ReleaseObjectGroupParams::new(GROUP))
            .await;
        opened.map_err(|f| self.classify(f, "looking into closed shadow roots"))
    }

    async fn adopt_closed_roots(&mut self, page: &Page) -> Result<usize, Fail> {
        let world = self.world(page).await?;
        let mut params = EvaluateParams::new("window.__toolkitBrowser.takeHosts()");
        params.context_id = Some(world);
        params.return_by_value = Some(false);
        params.object_group = Some(GROUP.to_owned());
        let Some(list) = self.exec_raw(page, params).await?.result.object_id else {
            return Ok(0);
        };
        let mut listing = GetPropertiesParams::new(list);
        listing.own_properties = Some(true);
        let hosts: Vec<RemoteObjectId> = self
            .exec_raw(page, listing)
            .await?
            .result
            .into_iter()
            .filter(|p| p.name.parse::<usize>().is_ok())
            .filter_map(|p| p.value.and_then(|v| v.object_id))
            .collect();
        let described = join_all(hosts.iter().map(|host| {
            let describe = DescribeNodeParams {
                object_id: Some(host.clone()),
                pierce: Some(true),
                ..DescribeNodeParams::default()
            };
            self.exec_raw(page, describe)
        }))
        .await;
        // Each host with the closed root DevTools found on it.
        let closed: Vec<_> = hosts
            .iter()
            .zip(described)
            .filter_map(|(host, node)| {
                let root = node
                    .ok()?
                    .node
                    .shadow_roots?
                    .into_iter()
                    .find(|r| r.shadow_root_type == Some(ShadowRootType::Closed))?;
                Some((host, root.backend_node_id))
            })
            .collect();
        let resolved = join_all(closed.iter().map(|(_, root)| {
            let resolve = ResolveNodeParams {
                backend_node_id: Some(*root),
                execution_context_id: Some(world),
                object_group: Some(GROUP.to_owned()),
                ..ResolveNodeParams::default()
            };
            self.exec_raw(page, resolve)
        }))
        .await;
        let handed = join_all(closed.iter().zip(resolved).filter_map(|((host, _), root)| {
            let root = root.ok()?.object.object_id?;
            let mut call = CallFunctionOnParams::new(
                "function (root) { return window.__toolkitBrowser.adoptRoot(this, root); }",
            );
            call.object_id = Some((*host).clone());
            call.arguments = Some(vec![CallArgument {
                object_id: Some(root),
                ..CallArgument::default()
            }]);
            Some(self.exec_raw(page, call))
        }))
        .await;
        Ok(handed.into_iter().filter(Result::is_ok).count())
    }
}
