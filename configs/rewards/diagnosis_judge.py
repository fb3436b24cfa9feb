"""Diagnosis reward judged by an LLM (DiagAgent-style: a 72B judge decides whether the final diagnosis matches).

verl signature. The prediction is the last <diagnosis>...</diagnosis> block, else the text after "Final diagnosis:",
else the last line. The judge (MEDRL_JUDGE_URL / MEDRL_JUDGE_MODEL / MEDRL_JUDGE_API_KEY, see medrl_judge.py) gets the
reference and the prediction and answers JSON {"score": 1|0, "reason": ...}. An empty prediction scores 0 without a
judge call; an answer without a score scores 0 with judge_ok 0. Returns score, pred, judge_ok and the judge's raw
answer ("" when not asked), so a surprising score can be read. Every sample gets the same keys, each always a number or
always a string, never None or a list: verl's reward manager appends each key per sample and its validation checks
every key has one value per sample and averages them (verl/workers/reward_manager/naive.py,
verl/trainer/ppo/ray_trainer.py _validate, metric_utils.process_validation_metrics).
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from medrl_judge import ask_judge, json_score  # noqa: E402  (the helper next to this file)

_TAG = re.compile(r"<diagnosis>(.*?)</diagnosis>", re.IGNORECASE | re.DOTALL)
_FINAL = re.compile(r"final diagnosis\s*(?:is|:)\s*(.+)", re.IGNORECASE)

PROMPT = """You are an experienced physician grading a diagnosis against the reference diagnosis of the same case.
Two diagnoses match when they name the same disease (synonyms, abbreviations and more specific forms count as a match).
Reference diagnosis: {reference}
Predicted diagnosis: {prediction}
Reply in JSON only: {{"score": 1 if they match else 0, "reason": "one sentence"}}"""


def extract_diagnosis(solution_str):
    text = solution_str or ""
    found = _TAG.findall(text)
    if found:
        return found[-1].strip()
    final = _FINAL.findall(text)
    if final:
        return final[-1].strip()
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[-1].strip() if lines else ""


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    prediction = extract_diagnosis(solution_str)
    if not prediction:
        return {"score": 0.0, "pred": "", "judge_ok": 0.0, "judge_raw": ""}
    raw = ask_judge(PROMPT.format(reference=ground_truth, prediction=prediction))
    score = json_score(raw)
    if score is None:
        return {"score": 0.0, "pred": prediction, "judge_ok": 0.0, "judge_raw": raw}
    return {"score": 1.0 if score >= 0.5 else 0.0, "pred": prediction, "judge_ok": 1.0, "judge_raw": raw}
