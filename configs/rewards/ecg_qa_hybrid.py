"""ECG question-answering reward, rule + judge (the ECG-Expert-QA workflow's `compute_score(..., method="hybrid")`).

verl signature. `ground_truth` is the reference answer. The rule part: for a closed answer (yes/no or an option letter)
exact match of the answer (the <answer> tag, "Answer: X" or the last line); for a free-text answer the share of the
reference's key terms (ECG vocabulary such as "st elevation", "atrial fibrillation", lead names, numbers with units)
found in the response. The judge part (MEDRL_JUDGE_URL, see medrl_judge.py) grades the answer 0-10 against the
reference. method (kwarg or extra_info["method"]): "rule", "judge" or "hybrid" (default: closed answers by rule alone,
free text 0.5 rule + 0.5 judge; free text without key terms by the judge alone). Returns score, rule and judge (0.0
when that part was not used), rule_used and judge_used (1.0/0.0) and the judge's raw answer ("" when not asked). A
judge answer without a score counts as judge 0 with judge_used 1. Every sample gets the same keys, each always a number
or always a string, never None or a list: verl's reward manager appends each key per sample and its validation checks
every key has one value per sample and averages them (verl/workers/reward_manager/naive.py,
verl/trainer/ppo/ray_trainer.py _validate, metric_utils.process_validation_metrics).
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from medrl_judge import ask_judge, json_score  # noqa: E402
from multiple_choice_exact import extract_answer, same_answer  # noqa: E402  (one answer extraction for every closed task)

TERMS = re.compile(
    r"\b(?:st[- ](?:segment )?(?:elevation|depression)|t[- ]wave inversion|q waves?|atrial (?:fibrillation|flutter)|"
    r"ventricular (?:tachycardia|fibrillation)|sinus (?:rhythm|tachycardia|bradycardia)|(?:left|right) bundle branch block|"
    r"[lr]bbb|first[- ]degree av block|second[- ]degree av block|third[- ]degree av block|complete heart block|"
    r"(?:left|right) ventricular hypertrophy|qt prolongation|prolonged qt|wpw|delta waves?|"
    r"(?:inferior|anterior|lateral|septal|posterior) (?:stemi|mi|infarction|wall)|stemi|nstemi|"
    r"leads? (?:i{1,3}|avl|avr|avf|v[1-6])(?:[, and]+(?:i{1,3}|avl|avr|avf|v[1-6]))*|"
    r"\d+(?:\.\d+)?\s*(?:ms|mm|bpm|mv))\b", re.I)

PROMPT = """You are a cardiologist grading an answer to an ECG question against the reference answer.
Reference: {reference}
Response: {response}
Grade how well the response agrees with the reference, from 0 (wrong) to 10 (fully correct and complete).
Reply in JSON only: {{"score": 0-10, "reason": "one sentence"}}"""


def closed(ground_truth):
    return bool(re.fullmatch(r"\s*(?:yes|no|[A-Ea-e])\s*\.?\s*", str(ground_truth)))


def key_terms(text):
    return {re.sub(r"[\s-]+", " ", t.lower()) for t in TERMS.findall(text or "")}


def rule_score(solution_str, ground_truth):
    if closed(ground_truth):
        pred, _ = extract_answer(solution_str)
        return 1.0 if same_answer(pred, str(ground_truth).strip()) else 0.0
    want = key_terms(str(ground_truth))
    if not want:
        return None  # nothing a rule can check: the judge decides
    return len(want & key_terms(solution_str)) / len(want)


def compute_score(data_source, solution_str, ground_truth, extra_info=None, method=None, **kwargs):
    method = method or (extra_info or {}).get("method") or "hybrid"
    if method not in ("rule", "judge", "hybrid"):
        raise ValueError(f"method must be rule, judge or hybrid, not {method!r}")
    rule = rule_score(solution_str, ground_truth) if method != "judge" else None
    if method == "rule" or (method == "hybrid" and closed(ground_truth)):
        return result(rule if rule is not None else 0.0, rule, None, "")
    raw = ask_judge(PROMPT.format(reference=ground_truth, response=solution_str))
    judged = min(max((json_score(raw) or 0.0) / 10.0, 0.0), 1.0)
    score = judged if rule is None else 0.5 * rule + 0.5 * judged
    return result(round(score, 6), rule, judged, raw)


def result(score, rule, judged, raw):
    """The same keys and types for every sample (see the module docstring)."""
    return {"score": float(score), "rule": float(rule or 0.0), "judge": float(judged or 0.0),
            "rule_used": 0.0 if rule is None else 1.0, "judge_used": 0.0 if judged is None else 1.0, "judge_raw": raw}
