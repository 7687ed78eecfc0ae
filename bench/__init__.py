"""Benchmarks: scripts that measure redstring, and the labelled sets they share."""
