"""Benchmarks of the engine (not tests): python -m bench.run"""
