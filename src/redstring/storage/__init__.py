"""Plumbing that database-backed adapters of several capabilities share."""
