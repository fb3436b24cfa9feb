"""MedRL Studio stand-in for verl (volcengine/verl): no GPU, no model, python3 standard library only.

It answers the same command lines as verl and writes verl's exact formats (console lines, metrics.jsonl, rollout and
validation dumps, checkpoint folders), so MedRL Studio can be demonstrated and tested where verl cannot run.
"""
