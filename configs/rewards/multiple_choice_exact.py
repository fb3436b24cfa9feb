"""Exact-match reward for closed-answer medical questions (PubMedQA yes/no/maybe, MedQA letters).

verl signature: compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs).
The answer is the last <answer>...</answer> block, else the last line; 1.0 when it equals the ground truth
(case and surrounding punctuation ignored), else 0.0. Returns a dict so `pred` and `format` appear in rollout dumps.
"""
import re

_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.IGNORECASE | re.DOTALL)


def _normalise(text):
    return re.sub(r"[\s\.\!\?\:\;\"'()\[\]]+", " ", str(text)).strip().lower()


def extract_answer(solution_str):
    found = _ANSWER.findall(solution_str or "")
    if found:
        return found[-1].strip(), True
    lines = [l for l in (solution_str or "").strip().splitlines() if l.strip()]
    return (lines[-1].strip() if lines else ""), False


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    pred, well_formed = extract_answer(solution_str)
    score = 1.0 if _normalise(pred) == _normalise(ground_truth) and pred != "" else 0.0
    return {"score": score, "pred": pred, "format": 1.0 if well_formed else 0.0}
