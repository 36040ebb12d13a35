"""Adapters that run the real program offline: the mock engine, the preview and render."""
