"""Fake adapter programs and a small fixture suite for the conformance runner's tests."""
