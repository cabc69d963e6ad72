"""Differential fuzzing against the reference: generator, runner, shrinker, CLI."""
