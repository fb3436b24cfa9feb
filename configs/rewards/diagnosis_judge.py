"""Diagnosis reward judged by an LLM (DiagAgent-style: a 72B judge decides whether the final diagnosis matches).

verl signature. The prediction, first rule that finds one:
- the last <diagnosis>...</diagnosis> block;
- the DiagAgent seed's final answer ("The available information is sufficient to make a diagnosis. \n\nDiagnosis: X
  \nReason: ..."): the text after the last such sentence up to "Reason:", a leading "Diagnosis:" label removed;
- the text after the last "Final diagnosis:" (or "final diagnosis is"), up to "Reason:";
- the last line starting "Diagnosis:" (not "Current diagnosis:", the seed's asking turns), up to "Reason:";
- else the last line that is not a "Reason:" line.
The judge (MEDRL_JUDGE_URL / MEDRL_JUDGE_MODEL / MEDRL_JUDGE_API_KEY, see medrl_judge.py) gets the
reference and the prediction and answers JSON {"score": 1|0, "reason": ...}. An empty prediction scores 0 without a
judge call; an answer without a score scores 0 with judge_ok 0. Returns score, pred, judge_ok and the judge's raw
answer ("" when not asked), so a surprising score can be read. Every sample gets the same keys, each always a number or
always a string, never None or a list: verl's reward manager appends each key per sample and its validation checks
every key has one value per sample and averages them (verl/workers/reward_manager/naive.py,
verl/trainer/ppo/ray_trainer.py _validate, metric_utils.process_validation_metrics).
For the seed's own reward (completion + judge verdict + examination F1), see diagagent_reward.py.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from medrl_judge import ask_judge, json_score  # noqa: E402  (the helper next to this file)

_TAG = re.compile(r"<diagnosis>(.*?)</diagnosis>", re.IGNORECASE | re.DOTALL)
_FINAL = re.compile(r"final diagnosis\s*(?:is|:)\s*(.+)", re.IGNORECASE)
# The DiagAgent seed's final answer opens with this sentence (examples/diagnose.py INSTRUCTION).
_SUFFICIENT = re.compile(r"The available information is sufficient to make a diagnosis\.?", re.IGNORECASE)
_LABEL = re.compile(r"^\s*diagnosis\s*:\s*", re.IGNORECASE)
_DIAGNOSIS_LINE = re.compile(r"^[ \t]*diagnosis[ \t]*:[ \t]*(.*)$", re.IGNORECASE | re.MULTILINE)
_REASON = re.compile(r"\breason\s*:", re.IGNORECASE)
_REASON_LINE = re.compile(r"^\s*reason\s*:", re.IGNORECASE)

PROMPT = """You are an experienced physician grading a diagnosis against the reference diagnosis of the same case.
Two diagnoses match when they name the same disease (synonyms, abbreviations and more specific forms count as a match).
Reference diagnosis: {reference}
Predicted diagnosis: {prediction}
Reply in JSON only: {{"score": 1 if they match else 0, "reason": "one sentence"}}"""


def _before_reason(text):
    return _REASON.split(text, 1)[0].strip()


def extract_diagnosis(solution_str):
    text = solution_str or ""
    found = _TAG.findall(text)
    if found:
        return found[-1].strip()
    parts = _SUFFICIENT.split(text)
    if len(parts) > 1:
        prediction = _LABEL.sub("", _before_reason(parts[-1]), count=1).strip()
        if prediction:
            return prediction
    final = [_before_reason(x) for x in _FINAL.findall(text)]
    final = [x for x in final if x]
    if final:
        return final[-1]
    labelled = [_before_reason(x) for x in _DIAGNOSIS_LINE.findall(text)]
    labelled = [x for x in labelled if x]
    if labelled:
        return labelled[-1]
    lines = [l.strip() for l in text.strip().splitlines() if l.strip() and not _REASON_LINE.match(l)]
    return lines[-1] if lines else ""


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    prediction = extract_diagnosis(solution_str)
    if not prediction:
        return {"score": 0.0, "pred": "", "judge_ok": 0.0, "judge_raw": ""}
    raw = ask_judge(PROMPT.format(reference=ground_truth, prediction=prediction))
    score = json_score(raw)
    if score is None:
        return {"score": 0.0, "pred": prediction, "judge_ok": 0.0, "judge_raw": raw}
    return {"score": 1.0 if score >= 0.5 else 0.0, "pred": prediction, "judge_ok": 1.0, "judge_raw": raw}
