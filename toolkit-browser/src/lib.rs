//! Browser actions for LLM agents, driving a real headless Chromium over the
//! DevTools protocol. The actions are ordinary `toolkit-core` tools.
