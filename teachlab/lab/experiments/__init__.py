"""Guided experiments: predict, observe, explain, for every broker claim the lessons make.

Experiments are data (lessons/experiments/*.yaml); this package validates them, runs their
steps against the real lab lanes and checks the run's events against what the lesson says.
"""
