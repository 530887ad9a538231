"""Presentation at the edges: HTML for notebooks."""
