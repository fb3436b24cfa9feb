"""ECG question-answering reward, rule + judge (the ECG-Expert-QA workflow's `compute_score(..., method="hybrid")`).

verl signature. `ground_truth` is the reference answer. The rule part: for a closed answer (yes/no or an option letter)
exact match of the answer (the <answer> tag, "Answer: X" or the last line); for a free-text answer the share of the
reference's key terms (ECG vocabulary such as "st elevation", "atrial fibrillation", lead names, numbers with units)
found in the response. The judge part (MEDRL_JUDGE_URL, see medrl_judge.py) grades the answer 0-10 against the reference.
method (kwarg or extra_info["method"]): "rule", "judge" or "hybrid" (default: closed answers by rule alone, free text
0.5 rule + 0.5 judge). Returns score, rule, judge and the judge's raw answer.
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
        return {"score": rule if rule is not None else 0.0, "rule": rule, "judge": None, "judge_raw": None}
    raw = ask_judge(PROMPT.format(reference=ground_truth, response=solution_str))
    judged = json_score(raw)
    if judged is None:
        raise ValueError(f"the judge answer has no score: {raw[:200]!r}")
    judged = min(max(judged / 10.0, 0.0), 1.0)
    score = judged if rule is None else 0.5 * rule + 0.5 * judged
    return {"score": round(score, 6), "rule": rule, "judge": judged, "judge_raw": raw}
