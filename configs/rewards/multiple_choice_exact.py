"""Exact-match reward for closed-answer medical questions (PubMedQA yes/no/maybe, MedQA letters).

verl signature: compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs).
The answer is the last <answer>...</answer> block, else the last "Answer: X" / "the answer is X", else the last line;
an option letter may be written "(B)", "B." or "B) text". 1.0 when it equals the ground truth (case and surrounding
punctuation ignored), else 0.0. Returns a dict so `pred` and `format` (1.0 when the <answer> tag was used) appear in
rollout dumps.
"""
import re

_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.IGNORECASE | re.DOTALL)
_ANSWER_PHRASE = re.compile(r"(?:final answer|answer)\s*(?:is|:)\s*(.+)", re.IGNORECASE)
_OPTION = re.compile(r"^\(?([A-Ea-e])\)?(?:[.:)]\s.*|[.:)])?$", re.DOTALL)


def _normalise(text):
    return re.sub(r"[\s\.\!\?\:\;\"'()\[\]]+", " ", str(text)).strip().lower()


def extract_answer(solution_str):
    """(answer, used the <answer> tag)."""
    text = solution_str or ""
    found = _ANSWER_TAG.findall(text)
    if found:
        return found[-1].strip(), True
    phrases = _ANSWER_PHRASE.findall(text)
    if phrases:
        return phrases[-1].strip(), False
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return (lines[-1].strip() if lines else ""), False


def same_answer(pred, truth):
    pred_n, truth_n = _normalise(pred), _normalise(truth)
    if not pred_n:
        return False
    if pred_n == truth_n:
        return True
    # An option letter answer ("(B) Aspirin", "B.") against a letter ground truth.
    option = _OPTION.match(pred.strip())
    return bool(option) and len(truth_n) == 1 and option.group(1).lower() == truth_n


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    pred, well_formed = extract_answer(solution_str)
    return {"score": 1.0 if same_answer(pred, ground_truth) else 0.0, "pred": pred, "format": 1.0 if well_formed else 0.0}
