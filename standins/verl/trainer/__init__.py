"""MedRL Studio stand-in for verl.trainer (see standins/verl/__init__.py)."""
